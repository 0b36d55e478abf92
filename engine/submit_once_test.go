package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestSubmitOnceIsIdempotentByRunID: the same request under the same run
// id is the same run (existed true, one run-created recorded), also when
// the retries race; a request that differs in anything the run records
// (the prompt, an option) is ErrRunExists; a request without a run id is
// a new run each time.
func TestSubmitOnceIsIdempotentByRunID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	req := engine.RunRequest{RunID: "once-1", Sheet: sheet("", "bug-fix: codex:gpt-5.6-sol@high"), Role: "bug-fix",
		Parent: policy.ParentClaude, Prompt: []byte("Fix it.\n"), Cwd: h.repo}

	const racers = 4
	var wg sync.WaitGroup
	created := make(chan bool, racers)
	for range racers {
		wg.Go(func() {
			run, existed, err := h.eng.SubmitOnce(ctx, req)
			require.NoError(t, err)
			require.Equal(t, "once-1", run)
			created <- !existed
		})
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	require.Equal(t, 1, n, "exactly one of the racing submissions created the run")
	envs, err := h.store.Load(ctx, "once-1", events.RunLane)
	require.NoError(t, err)
	require.Len(t, envs, 1, "one run-created")

	run, existed, err := h.eng.SubmitOnce(ctx, req)
	require.NoError(t, err)
	require.True(t, existed)
	require.Equal(t, "once-1", run)

	other := req
	other.Prompt = []byte("Fix something else.\n")
	_, _, err = h.eng.SubmitOnce(ctx, other)
	require.ErrorIs(t, err, engine.ErrRunExists)
	other = req
	other.Mode = policy.ReadOnly // the default, spelt out: the same run
	_, existed, err = h.eng.SubmitOnce(ctx, other)
	require.NoError(t, err)
	require.True(t, existed)
	other.StallTimeout = 90_000_000_000 // 90s
	_, _, err = h.eng.SubmitOnce(ctx, other)
	require.ErrorIs(t, err, engine.ErrRunExists)

	fresh := req
	fresh.RunID = ""
	a, existed, err := h.eng.SubmitOnce(ctx, fresh)
	require.NoError(t, err)
	require.False(t, existed)
	b, _, err := h.eng.SubmitOnce(ctx, fresh)
	require.NoError(t, err)
	require.NotEqual(t, a, b)
}
