package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// The run index (engine/runindex.go): written when a run is final, read
// by the engine's start and ListRuns, rebuilt from the log when missing
// or damaged, and never the source of what ListRuns prints.

// indexOf reads h's run index.
func indexOf(t *testing.T, h *harness) (map[string]events.FinalRun, int) {
	t.Helper()
	idx, bad, err := h.store.(events.RunIndex).FinalRuns(context.Background())
	require.NoError(t, err)
	return idx, bad
}

// waitIndexed waits until the index holds a valid entry for every run.
func waitIndexed(t *testing.T, h *harness, runs ...string) map[string]events.FinalRun {
	t.Helper()
	var idx map[string]events.FinalRun
	require.NoError(t, pollUntil(waitTimeout, func() bool {
		idx, _ = indexOf(t, h)
		for _, r := range runs {
			if _, ok := idx[r]; !ok {
				return false
			}
		}
		return true
	}), "index entries of %v; index has %v", runs, idx)
	return idx
}

func pollUntil(limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// requireListAgreesWithLog: ListRuns without selection returns exactly
// the status every run's log folds to, newest first.
func requireListAgreesWithLog(t *testing.T, h *harness, eng *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	all, err := eng.Runs(ctx)
	require.NoError(t, err)
	list, err := eng.ListRuns(ctx, nil, 0)
	require.NoError(t, err)
	require.Equal(t, len(all), list.Total)
	require.Equal(t, len(all), list.Matched)
	require.Len(t, list.Runs, len(all))
	byID := map[string]engine.RunStatus{}
	for _, st := range all {
		byID[st.Run] = st
	}
	for i, st := range list.Runs {
		require.Equal(t, byID[st.Run], st, "run %s as its log folds", st.Run)
		if i > 0 {
			prev := list.Runs[i-1]
			require.True(t, prev.Created.After(st.Created) || prev.Created.Equal(st.Created) && prev.Run > st.Run, "newest first")
		}
	}
	var open int
	for _, st := range all {
		if !st.Final {
			open++
		}
	}
	require.Len(t, list.Open, open)
}

// damage replaces run's index entry with bytes that do not decode.
func damage(t *testing.T, h *harness, run string) {
	t.Helper()
	switch h.backend {
	case memory:
		h.store.(*events.MemoryStore).PutRawRunIndexEntry(run, []byte(`{"run":"`+run+`","surprise":1}`))
	case jetstream:
		_, err := h.srv.Conn().Request("$KV."+events.RunsBucket+"."+run, []byte("not json"), 5*time.Second)
		require.NoError(t, err)
	}
}

// dropIndex removes every entry, as a deleted bucket (or a store from
// before the index) would leave it.
func dropIndex(t *testing.T, h *harness) {
	t.Helper()
	switch h.backend {
	case memory:
		h.store.(*events.MemoryStore).DropRunIndex()
	case jetstream:
		js, err := natsjs.New(h.srv.Conn())
		require.NoError(t, err)
		s, err := js.Stream(context.Background(), "KV_"+events.RunsBucket)
		require.NoError(t, err)
		require.NoError(t, s.Purge(context.Background()))
	}
	idx, _ := indexOf(t, h)
	require.Empty(t, idx)
}

// TestRunIndexFollowsTheLog: a final run gets an entry that says what
// its log says (created, updated, cancelled, the run-level sequence); an
// open run has none; ListRuns agrees with folding every log, selects by
// state and limit on the index, and stays right while the index is
// missing or damaged; the next engine start rebuilds the missing and
// damaged entries from the log, and still drives the open run.
func TestRunIndexFollowsTheLog(t *testing.T) {
	for _, b := range []backend{memory, jetstream} {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newHarness(t, b)
			stop := h.run()
			one := "bug-fix: codex:gpt-5.6-sol@high"
			// final (a lane cancel), cancelled (a run cancel), and open.
			final := h.submit(sheet("", one), "bug-fix", policy.ReadOnly)
			h.waitType(final, events.TypeLaunch, 1)
			require.NoError(t, h.eng.Cancel(ctx, final, 0, "enough"))
			h.waitFinal(final)
			cancelled := h.submit(sheet("", one), "bug-fix", policy.ReadOnly)
			h.waitType(cancelled, events.TypeLaunch, 1)
			require.NoError(t, h.eng.Cancel(ctx, cancelled, events.RunLane, "abort"))
			h.waitFinal(cancelled)
			open := h.submit(sheet("", one), "bug-fix", policy.ReadOnly)
			h.waitType(open, events.TypeLaunch, 1)

			idx := waitIndexed(t, h, final, cancelled)
			require.NotContains(t, idx, open, "an open run has no entry")
			for _, run := range []string{final, cancelled} {
				st, err := h.eng.Status(ctx, run)
				require.NoError(t, err)
				last, err := h.store.Last(ctx, run, events.RunLane)
				require.NoError(t, err)
				require.Equal(t, events.FinalRun{Run: run, Created: st.Created, Updated: last.Time, Cancelled: st.Cancelled,
					Seq: last.Seq, ReportsThrough: last.ReportSeq()}, idx[run])
			}
			// The snapshot is the status the log folds to, at the entry's
			// sequence.
			for _, run := range []string{final, cancelled} {
				seq, raw, err := h.store.(events.RunIndex).FinalRunStatus(ctx, run)
				require.NoError(t, err)
				require.Equal(t, idx[run].Seq, seq)
				st, err := h.eng.Status(ctx, run)
				require.NoError(t, err)
				require.JSONEq(t, jsonOf(t, st), string(raw))
			}
			require.True(t, idx[cancelled].Cancelled)
			require.False(t, idx[final].Cancelled)
			requireListAgreesWithLog(t, h, h.eng)

			// Selection by state on index entries, by limit newest first.
			finalOnly := func(r engine.RunStatus) bool { return r.Final && !r.Cancelled }
			l, err := h.eng.ListRuns(ctx, finalOnly, 0)
			require.NoError(t, err)
			require.Equal(t, 1, l.Matched)
			require.Equal(t, final, l.Runs[0].Run)
			require.NotEmpty(t, l.Runs[0].Lanes, "a selected indexed run is read from its log")
			l, err = h.eng.ListRuns(ctx, nil, 1)
			require.NoError(t, err)
			require.Equal(t, 3, l.Matched)
			require.Len(t, l.Runs, 1)
			require.Equal(t, open, l.Runs[0].Run, "the newest")

			// A snapshot of an older sequence than the log's newest
			// run-level event is not used (here it lies; the list does
			// not).
			stale, err := h.eng.Status(ctx, final)
			require.NoError(t, err)
			stale.Summary = "a stale snapshot"
			// (At the log's sequence a snapshot is what the list shows: the
			// fast path is taken. Only the engine writes the index.)
			require.NoError(t, h.store.(events.RunIndex).PutFinalRun(ctx, idx[final], []byte(jsonOf(t, stale))))
			l, err = h.eng.ListRuns(ctx, finalOnly, 0)
			require.NoError(t, err)
			require.Equal(t, "a stale snapshot", l.Runs[0].Summary)
			entry := idx[final]
			entry.Seq--
			require.NoError(t, h.store.(events.RunIndex).PutFinalRun(ctx, entry, []byte(jsonOf(t, stale))))
			requireListAgreesWithLog(t, h, h.eng)

			// Damaged and missing entries: ListRuns still agrees with the
			// logs; the next start rewrites them from the logs.
			stop()
			damage(t, h, final)
			_, bad := indexOf(t, h)
			require.Equal(t, 1, bad, "the damaged entry does not count")
			requireListAgreesWithLog(t, h, h.eng)
			eng1, err := engine.New(h.cfg)
			require.NoError(t, err)
			stop1 := h.runEngine(eng1)
			rewritten := waitIndexed(t, h, final)
			require.Equal(t, idx[final], rewritten[final], "the damaged entry rewritten from the log")
			stop1()

			dropIndex(t, h)
			requireListAgreesWithLog(t, h, h.eng)
			eng2, err := engine.New(h.cfg)
			require.NoError(t, err)
			h.runEngine(eng2)
			rebuilt := waitIndexed(t, h, final, cancelled)
			require.Equal(t, idx[final], rebuilt[final], "rebuilt from the log")
			require.Equal(t, idx[cancelled], rebuilt[cancelled], "rebuilt from the log")
			requireListAgreesWithLog(t, h, eng2)

			// The open run is driven by the new engine: cancelled, it
			// becomes final and indexed.
			require.NoError(t, eng2.Cancel(ctx, open, events.RunLane, "done"))
			h.waitFinal(open)
			waitIndexed(t, h, open)
			requireListAgreesWithLog(t, h, eng2)
		})
	}
}

// TestRunIndexDamagedEntriesAreMissing: entries are written only when
// valid and decoded strictly; an entry that does not decode counts as
// missing (fail closed).
func TestRunIndexDamagedEntriesAreMissing(t *testing.T) {
	t.Parallel()
	s := events.NewMemoryStore()
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	good := events.FinalRun{Run: "r1", Created: at, Updated: at, Seq: 3}
	require.NoError(t, s.PutFinalRun(ctx, good, nil))
	require.Error(t, s.PutFinalRun(ctx, events.FinalRun{Run: "r2", Created: at, Updated: at}, nil), "seq is required")
	require.Error(t, s.PutFinalRun(ctx, events.FinalRun{Run: "bad id!", Created: at, Updated: at, Seq: 1}, nil))
	require.Error(t, s.PutFinalRun(ctx, events.FinalRun{Run: "r3", Created: at, Updated: at, Seq: 1}, []byte("{not json")), "a snapshot must be JSON")
	for key, raw := range map[string]string{
		"u1": `{"run":"u1","created":"2026-12-01T12:00:00Z","updated":"2026-12-01T12:00:00Z","seq":1,"extra":true}`,
		"u2": `{"run":"other","created":"2026-12-01T12:00:00Z","updated":"2026-12-01T12:00:00Z","seq":1}`,
		"u3": `{"run":"u3","created":"2026-12-01T12:00:00Z","updated":"2026-12-01T12:00:00Z","seq":1} {}`,
		"u4": `{"run":"u4","seq":1}`,
		"u5": `[`,
	} {
		s.PutRawRunIndexEntry(key, []byte(raw))
	}
	idx, bad, err := s.FinalRuns(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]events.FinalRun{"r1": good}, idx)
	require.Equal(t, 5, bad)
}
