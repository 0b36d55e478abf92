package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWorkerAnnouncesItsPresence: a running worker is live in Presence,
// with its providers, for longer than one TTL (it refreshes), and gone as
// soon as it stops cleanly.
func TestWorkerAnnouncesItsPresence(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, "success", false)
	cfg := e.workerConfig("presence-w1")
	// The memory twin with a short TTL (the JetStream one passes the same
	// conformance suite).
	short := events.NewMemoryPresence(time.Second, time.Now)
	cfg.Presence = short
	tw := e.startWorker(cfg)

	live := func() []events.WorkerPresence {
		ws, err := short.Live(context.Background())
		require.NoError(t, err)
		return ws
	}
	deadline := time.Now().Add(waitLong)
	for len(live()) == 0 {
		require.True(t, time.Now().Before(deadline), "the worker never announced itself")
		time.Sleep(10 * time.Millisecond)
	}
	ws := live()
	require.Len(t, ws, 1)
	require.Equal(t, "presence-w1", ws[0].WorkerID)
	require.Equal(t, []policy.Provider{policy.Codex}, ws[0].Providers)
	require.Equal(t, DefaultConcurrency, ws[0].Concurrency)
	require.NotZero(t, ws[0].PID)

	// Still live after three TTLs: it refreshes.
	until := time.Now().Add(3 * time.Second)
	for time.Now().Before(until) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, live(), 1, "the worker stopped refreshing its presence")

	tw.stop(t)
	require.Empty(t, live(), "a cleanly stopped worker withdraws at once")
}
