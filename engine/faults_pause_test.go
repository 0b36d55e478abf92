package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// unavailableStore is a store whose appends fail while down is set, as a
// JetStream stream does while it has no leader.
type unavailableStore struct {
	events.Store
	down    atomic.Bool
	refused atomic.Int64
}

func (s *unavailableStore) Append(ctx context.Context, env events.Envelope, expected uint64) (uint64, error) {
	if s.down.Load() {
		s.refused.Add(1)
		return 0, errors.New("nats: no responders available for request")
	}
	return s.Store.Append(ctx, env, expected)
}

// lockedBuffer is a bytes.Buffer safe for the engine's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestFaultsStorePauseIsReported: while the store refuses appends the run
// waits (its sessions fail and are retried with backoff, nothing is
// skipped); once appends are stored again the run completes and the engine
// logs one "run resumed after a pause" record with the pause's length and
// how many sessions failed.
func TestFaultsStorePauseIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	store := &unavailableStore{Store: h.store}
	var logs lockedBuffer
	h.cfg.Store = store
	h.cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	stop := h.startEngine()
	defer stop()

	run, job := h.submitOneLane()
	h.execute(job, "success")
	h.report(job, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)

	const outage = 600 * time.Millisecond
	start := time.Now()
	store.down.Store(true)
	h.report(job, events.ReportFinished)
	// The finish is tried, refused and tried again (a positive sign the
	// engine got that far); the outage lasts at least outage, whose length
	// the pause record must span.
	require.Eventually(t, func() bool { return store.refused.Load() >= 2 }, waitTimeout, 5*time.Millisecond,
		"the finish was tried, and retried, while the store was down")
	if rest := outage - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
	during, err := h.store.LoadRun(context.Background(), run)
	require.NoError(t, err)
	r, err := machines.FoldRun(during)
	require.NoError(t, err)
	require.Equal(t, machines.StateRunning, r.Lanes[0].State, "nothing recorded while down")
	store.down.Store(false)

	r, envs := h.waitFinal(run)
	require.Equal(t, during, envs[:len(during)])
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Len(t, ofType(envs, events.TypeFinish), 1, "the finish is recorded once")

	var resumed []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["msg"] == "run resumed after a pause" {
			resumed = append(resumed, rec)
		}
	}
	require.Len(t, resumed, 1, "one pause, reported once:\n%s", logs.String())
	rec := resumed[0]
	require.Equal(t, run, rec["run"])
	paused := time.Duration(rec["paused"].(float64)) // slog's JSON handler writes nanoseconds
	require.GreaterOrEqual(t, paused, outage-100*time.Millisecond, "the pause spans the outage")
	require.GreaterOrEqual(t, rec["failedSessions"].(float64), float64(2), "sessions were retried during the outage")
	h.verifyReplay(run)
}
