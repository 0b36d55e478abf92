package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// enginePromptLimit mirrors the engine's (and the runner's) 16 MiB prompt
// limit; the error must name it.
const enginePromptLimit = 16 << 20

// TestLimitsEngineSubmitPrompt proves Submit refuses a prompt one byte over
// the 16 MiB limit, given as bytes or as a file, with ErrInvalidRequest
// naming the limit and nothing recorded; a prompt of exactly the limit is
// accepted. (Before the limit was checked on bytes, an oversized prompt
// was frozen and every attempt then failed to copy it.)
func TestLimitsEngineSubmitPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	good := sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default")
	file := func(n int64) string {
		path := filepath.Join(t.TempDir(), "prompt.md")
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(n))
		require.NoError(t, f.Close())
		return path
	}
	over := make([]byte, enginePromptLimit+1)
	for i := range over {
		over[i] = 'p'
	}
	for _, tc := range []struct {
		name string
		req  func(*engine.RunRequest)
	}{
		{"prompt bytes one over the limit", func(r *engine.RunRequest) { r.Prompt = over }},
		{"prompt file one over the limit", func(r *engine.RunRequest) { r.PromptPath = file(enginePromptLimit + 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := engine.RunRequest{Sheet: good, Role: "bug-fix", Parent: policy.ParentClaude, Cwd: h.repo}
			tc.req(&req)
			_, err := h.eng.Submit(context.Background(), req)
			require.ErrorIs(t, err, engine.ErrInvalidRequest)
			require.ErrorContains(t, err, "16 MiB prompt limit (16777216 bytes)")
		})
	}
	runs, err := h.store.Runs(context.Background())
	require.NoError(t, err)
	require.Empty(t, runs, "no refused request was recorded")

	_, err = h.eng.Submit(context.Background(), engine.RunRequest{Sheet: good, Role: "bug-fix",
		Parent: policy.ParentClaude, Cwd: h.repo, Prompt: over[:enginePromptLimit]})
	require.NoError(t, err, "exactly the limit is accepted")
}

// TestLimitsEngineReceiptTooBigToRecord proves, through a running engine,
// that a receipt which decodes (under policy.MaxReceiptBytes) but would make
// a finish over events.MaxEventBytes cannot wedge the run: the engine
// records why (an audit naming the limit) and a failed finish without the
// receipt (a started attempt with no usable evidence is never run again),
// and the run reaches its final state. Before, the append of the finish
// failed on every retry and the run stalled for good.
func TestLimitsEngineReceiptTooBigToRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)

	primary := h.nextJob(events.JobSubject("codex"))
	h.execute(primary, "success")
	b, err := os.ReadFile(primary.Paths.Receipt)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	argv := doc["argv"].([]any)
	for range 600 {
		argv = append(argv, strings.Repeat("a", 1024))
	}
	doc["argv"] = argv
	b, err = json.Marshal(doc)
	require.NoError(t, err)
	require.Less(t, len(b), policy.MaxReceiptBytes)
	require.Greater(t, len(b), events.MaxEventBytes)
	require.NoError(t, os.WriteFile(primary.Paths.Receipt, b, 0o600))

	h.report(primary, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	h.report(primary, events.ReportFinished)

	envs := h.waitType(run, events.TypeFinish, 1)
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.Nil(t, fin.Receipt)
	require.True(t, fin.Abandoned)
	require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
	audits := ofType(onLane(envs, 0), events.TypeAudit)
	require.Len(t, audits, 1)
	require.Contains(t, audits[0].Payload.(events.Audit).Detail, "events.MaxEventBytes")

	r, _ := h.waitFinal(run)
	require.True(t, r.Lanes[0].State.Final(), "the run reaches a final state (lane %s)", r.Lanes[0].State)
}
