package eventstest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// RunPresenceConformance checks the Presence contract on presence stores
// from newPresence, whose TTL should be short (about a second): the expiry
// subtests wait for it. Stores may share a backend: every subtest uses its
// own worker ids and looks only at them.
func RunPresenceConformance(t *testing.T, newPresence func(t *testing.T) events.Presence) {
	find := func(t *testing.T, p events.Presence, id string) (events.WorkerPresence, bool) {
		t.Helper()
		live, err := p.Live(testCtx(t))
		require.NoError(t, err)
		for i, w := range live {
			if i > 0 {
				require.Less(t, live[i-1].WorkerID, w.WorkerID, "Live is sorted by worker id")
			}
			if w.WorkerID == id {
				return w, true
			}
		}
		return events.WorkerPresence{}, false
	}
	started := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)

	t.Run("an announcement is live, and announcing again replaces it", func(t *testing.T) {
		t.Parallel()
		p, id := newPresence(t), "host.example:4872/"+NewExecutionID() // worker ids need not be subject-safe
		_, ok := find(t, p, id)
		require.False(t, ok)
		w := events.WorkerPresence{WorkerID: id, Providers: []policy.Provider{"codex", "grok"}, Concurrency: 2, Host: "host.example", PID: 4872, Started: started}
		require.NoError(t, p.Announce(testCtx(t), w))
		got, ok := find(t, p, id)
		require.True(t, ok)
		require.WithinDuration(t, time.Now(), got.Seen, time.Minute)
		got.Seen = time.Time{}
		require.Equal(t, w, got)

		w.Providers = []policy.Provider{"devin"}
		require.NoError(t, p.Announce(testCtx(t), w))
		got, ok = find(t, p, id)
		require.True(t, ok)
		require.Equal(t, []policy.Provider{"devin"}, got.Providers)
		live, err := p.Live(testCtx(t))
		require.NoError(t, err)
		n := 0
		for _, l := range live {
			if l.WorkerID == id {
				n++
			}
		}
		require.Equal(t, 1, n, "one record per worker")
	})

	t.Run("withdraw removes the record; withdrawing none is no error", func(t *testing.T) {
		t.Parallel()
		p, id := newPresence(t), "w-"+NewExecutionID()
		require.NoError(t, p.Announce(testCtx(t), events.WorkerPresence{WorkerID: id, Providers: []policy.Provider{"claude"}, Started: started}))
		_, ok := find(t, p, id)
		require.True(t, ok)
		require.NoError(t, p.Withdraw(testCtx(t), id))
		_, ok = find(t, p, id)
		require.False(t, ok)
		require.NoError(t, p.Withdraw(testCtx(t), "w-"+NewExecutionID()))
	})

	t.Run("a record nobody refreshes expires after the TTL; a refreshed one lives on", func(t *testing.T) {
		t.Parallel()
		p := newPresence(t)
		ttl := p.TTL()
		stale, fresh := "stale-"+NewExecutionID(), "fresh-"+NewExecutionID()
		announce := func(id string) {
			require.NoError(t, p.Announce(testCtx(t), events.WorkerPresence{WorkerID: id, Providers: []policy.Provider{"grok"}, Started: started}))
		}
		announce(stale)
		announce(fresh)
		t0 := time.Now()
		_, ok := find(t, p, stale)
		require.True(t, ok)
		deadline := t0.Add(10*ttl + 10*time.Second)
		for {
			announce(fresh)
			if _, ok := find(t, p, stale); !ok {
				break
			}
			require.True(t, time.Now().Before(deadline), "the unrefreshed record outlived %v", 10*ttl+10*time.Second)
			time.Sleep(ttl / 10)
		}
		require.GreaterOrEqual(t, time.Since(t0), ttl/2, "expired long before its TTL")
		_, ok = find(t, p, fresh)
		require.True(t, ok, "the refreshed record expired")
	})

	t.Run("invalid announcements are refused", func(t *testing.T) {
		t.Parallel()
		p := newPresence(t)
		for _, w := range []events.WorkerPresence{
			{WorkerID: "", Providers: []policy.Provider{"codex"}},
			{WorkerID: "has space", Providers: []policy.Provider{"codex"}},
			{WorkerID: "w1"},
			{WorkerID: "w1", Providers: []policy.Provider{"Codex"}},
			{WorkerID: "w1", Providers: []policy.Provider{"codex"}, Concurrency: -1},
		} {
			require.ErrorIs(t, p.Announce(testCtx(t), w), events.ErrInvalid, "%+v", w)
		}
		require.ErrorIs(t, p.Withdraw(testCtx(t), ""), events.ErrInvalid)
	})
}
