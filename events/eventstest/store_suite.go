package eventstest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// NewRunID returns a fresh valid run id, so tests sharing a server never
// collide.
func NewRunID() string { return "r-" + uuid.NewString() }

// testCtx bounds one conformance case. Generous on purpose: a three-node
// R3 cluster under -race on two loaded cores answered a read in more than
// 20 s; the bound only ends a case that hangs.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// appendAll appends envs in order, each after the previous one on its
// subject, and returns them with their sequences set.
func appendAll(t *testing.T, s events.Store, envs ...events.Envelope) []events.Envelope {
	t.Helper()
	last := map[string]uint64{}
	out := make([]events.Envelope, len(envs))
	for i, e := range envs {
		seq, err := s.Append(testCtx(t), e, last[e.Subject()])
		require.NoError(t, err, "append %s #%d", e.Type, i)
		last[e.Subject()] = seq
		e.Seq = seq
		out[i] = e
	}
	return out
}

// RunStoreConformance checks the Store contract on fresh stores from
// newStore. Stores may share a backend: every subtest uses its own run ids.
func RunStoreConformance(t *testing.T, newStore func(t *testing.T) events.Store) {
	t.Run("append then load one lane in order", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		want := appendAll(t, s,
			SampleEnvelope(events.TypeRunCreated, run, events.RunLane, T0),
			SampleEnvelope(events.TypeLaunch, run, 0, T0.Add(1)),
			SampleEnvelope(events.TypeLaunch, run, 1, T0.Add(2)),
			SampleEnvelope(events.TypeClaim, run, 0, T0.Add(3)),
			SampleEnvelope(events.TypeFinish, run, 0, T0.Add(4)),
		)
		got, err := s.Load(testCtx(t), run, 0)
		require.NoError(t, err)
		require.Equal(t, []events.Envelope{want[1], want[3], want[4]}, got)
		got, err = s.Load(testCtx(t), run, events.RunLane)
		require.NoError(t, err)
		require.Equal(t, want[:1], got)
		got, err = s.Load(testCtx(t), run, 7)
		require.NoError(t, err)
		require.Empty(t, got, "a lane without events loads empty, not an error")
	})

	t.Run("last returns the newest event or ErrNotFound", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		want := appendAll(t, s, SampleEnvelope(events.TypeLaunch, run, 0, T0), SampleEnvelope(events.TypeClaim, run, 0, T0.Add(1)))
		got, err := s.Last(testCtx(t), run, 0)
		require.NoError(t, err)
		require.Equal(t, want[1], got)
		_, err = s.Last(testCtx(t), run, 1)
		require.ErrorIs(t, err, events.ErrNotFound)
	})

	t.Run("wrong expected sequence is ErrConflict", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		first := appendAll(t, s, SampleEnvelope(events.TypeLaunch, run, 0, T0))[0]
		for name, expected := range map[string]uint64{"empty claimed": 0, "stale": first.Seq - 1, "future": first.Seq + 1000} {
			if name == "stale" && first.Seq == 1 {
				continue
			}
			_, err := s.Append(testCtx(t), SampleEnvelope(events.TypeClaim, run, 0, T0.Add(1)), expected)
			require.ErrorIs(t, err, events.ErrConflict, name)
			var ce *events.ConflictError
			require.True(t, errors.As(err, &ce), name)
			assert.Equal(t, events.EventSubject(run, 0), ce.Subject, name)
			assert.Equal(t, expected, ce.Expected, name)
		}
		// Another lane's sequence does not count for this lane.
		_, err := s.Append(testCtx(t), SampleEnvelope(events.TypeLaunch, run, 1, T0.Add(2)), first.Seq)
		require.ErrorIs(t, err, events.ErrConflict)
		_, err = s.Append(testCtx(t), SampleEnvelope(events.TypeLaunch, run, 1, T0.Add(2)), 0)
		require.NoError(t, err)
		got, err := s.Load(testCtx(t), run, 0)
		require.NoError(t, err)
		require.Len(t, got, 1, "a conflicting append stores nothing")
	})

	t.Run("a retried append is stored once", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		launch := SampleEnvelope(events.TypeLaunch, run, 0, T0)
		seq1, err := s.Append(testCtx(t), launch, 0)
		require.NoError(t, err)
		seq2, err := s.Append(testCtx(t), launch, 0)
		require.NoError(t, err, "a duplicate is not an error")
		require.Equal(t, seq1, seq2, "a duplicate returns the original sequence")

		claim := SampleEnvelope(events.TypeClaim, run, 0, T0.Add(1))
		seq3, err := s.Append(testCtx(t), claim, seq1)
		require.NoError(t, err)
		seq4, err := s.Append(testCtx(t), launch, 0)
		require.NoError(t, err, "still recognised once a later event follows it")
		require.Equal(t, seq1, seq4)

		other := launch
		other.Time = T0.Add(time.Second)
		_, err = s.Append(testCtx(t), other, 0)
		require.ErrorIs(t, err, events.ErrConflict, "a different event at the same position is a conflict")

		got, err := s.Load(testCtx(t), run, 0)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []uint64{seq1, seq3}, []uint64{got[0].Seq, got[1].Seq})
	})

	t.Run("one of many concurrent writers wins", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		base := appendAll(t, s, SampleEnvelope(events.TypeLaunch, run, 0, T0))[0]
		const writers = 8
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Append(context.Background(), SampleEnvelope(events.TypeClaim, run, 0, T0.Add(time.Duration(i+1))), base.Seq)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, events.ErrConflict)
			}
		}
		require.Equal(t, 1, wins)
	})

	t.Run("load run returns every subject in append order", func(t *testing.T) {
		t.Parallel()
		s, run, other := newStore(t), NewRunID(), NewRunID()
		want := appendAll(t, s,
			SampleEnvelope(events.TypeRunCreated, run, events.RunLane, T0),
			SampleEnvelope(events.TypeLaunch, run, 0, T0.Add(1)),
			SampleEnvelope(events.TypeLaunch, run, 1, T0.Add(2)),
			SampleEnvelope(events.TypeGroupExhausted, run, events.RunLane, T0.Add(3)),
			SampleEnvelope(events.TypeClaim, run, 1, T0.Add(4)),
		)
		appendAll(t, s, SampleEnvelope(events.TypeRunCreated, other, events.RunLane, T0))
		got, err := s.LoadRun(testCtx(t), run)
		require.NoError(t, err)
		require.Equal(t, want, got)
		for i := 1; i < len(got); i++ {
			require.Greater(t, got[i].Seq, got[i-1].Seq)
		}
		got, err = s.LoadRun(testCtx(t), NewRunID())
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("a load beside a writer reads a prefix of the log", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		const n = 300 // more than one part of a memory store's decoding
		envs := make([]events.Envelope, n)
		envs[0] = SampleEnvelope(events.TypeRunCreated, run, events.RunLane, T0)
		for i := 1; i < n; i++ {
			envs[i] = SampleEnvelope(events.TypeClaim, run, 0, T0.Add(time.Duration(i)))
		}
		var want []events.Envelope
		done := make(chan struct{})
		go func() {
			defer close(done)
			want = appendAll(t, s, envs...)
		}()
		var loads [][]events.Envelope
		for finished := false; !finished; {
			select {
			case <-done:
				finished = true
			default:
			}
			got, err := s.LoadRun(testCtx(t), run)
			require.NoError(t, err)
			loads = append(loads, got)
			lane, err := s.Load(testCtx(t), run, 0)
			require.NoError(t, err)
			loads = append(loads, append(got[:min(len(got), 1):min(len(got), 1)], lane...))
		}
		require.Len(t, want, n, "the writer appended every event")
		require.Greater(t, len(loads), 2, "the loads ran beside the writer")
		for _, got := range loads {
			require.LessOrEqual(t, len(got), len(want))
			if len(got) > 0 && len(got) < len(want) && got[0].Type != events.TypeRunCreated {
				continue // a lane load that began before run-created was read
			}
			require.Equal(t, want[:len(got)], got, "a load beside the writer is a prefix of the log")
		}
		got, err := s.LoadRun(testCtx(t), run)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("runs lists runs with run-level events, sorted", func(t *testing.T) {
		t.Parallel()
		s, a, b, laneOnly := newStore(t), NewRunID(), NewRunID(), NewRunID()
		appendAll(t, s, SampleEnvelope(events.TypeRunCreated, b, events.RunLane, T0),
			SampleEnvelope(events.TypeRunCreated, a, events.RunLane, T0),
			SampleEnvelope(events.TypeLaunch, a, 0, T0), SampleEnvelope(events.TypeLaunch, laneOnly, 0, T0))
		runs, err := s.Runs(testCtx(t))
		require.NoError(t, err)
		require.Contains(t, runs, a)
		require.Contains(t, runs, b)
		require.NotContains(t, runs, laneOnly)
		require.IsNonDecreasing(t, runs)
	})

	t.Run("watch streams stored then new events of one run", func(t *testing.T) {
		t.Parallel()
		s, run, other := newStore(t), NewRunID(), NewRunID()
		want := appendAll(t, s, SampleEnvelope(events.TypeRunCreated, run, events.RunLane, T0),
			SampleEnvelope(events.TypeLaunch, run, 0, T0.Add(1)))
		ctx, cancel := context.WithCancel(testCtx(t))
		ch, err := s.Watch(ctx, run, 0)
		require.NoError(t, err)
		require.Equal(t, want[0], receive(t, ch))
		require.Equal(t, want[1], receive(t, ch))
		appendAll(t, s, SampleEnvelope(events.TypeRunCreated, other, events.RunLane, T0))
		next, err := s.Append(testCtx(t), SampleEnvelope(events.TypeClaim, run, 0, T0.Add(2)), want[1].Seq)
		require.NoError(t, err)
		got := receive(t, ch)
		require.Equal(t, next, got.Seq, "the other run's event is not delivered")

		after, err := s.Watch(ctx, run, want[1].Seq)
		require.NoError(t, err)
		require.Equal(t, next, receive(t, after).Seq, "after skips what the caller has")
		cancel()
		requireClosed(t, ch)
		requireClosed(t, after)
	})

	t.Run("a lane watch streams that lane's and the run-level events only", func(t *testing.T) {
		t.Parallel()
		s, run, other := newStore(t), NewRunID(), NewRunID()
		lw, ok := s.(interface {
			WatchLane(ctx context.Context, run string, lane int, after uint64) (<-chan events.Envelope, error)
		})
		require.True(t, ok, "the store has WatchLane")
		have := appendAll(t, s, SampleEnvelope(events.TypeRunCreated, run, events.RunLane, T0),
			SampleEnvelope(events.TypeLaunch, run, 0, T0.Add(1)),
			SampleEnvelope(events.TypeLaunch, run, 1, T0.Add(2)),
			SampleEnvelope(events.TypeLaunch, other, 1, T0.Add(3)))
		ctx, cancel := context.WithCancel(testCtx(t))
		ch, err := lw.WatchLane(ctx, run, 1, 0)
		require.NoError(t, err)
		require.Equal(t, have[0], receive(t, ch), "the run-level run-created")
		require.Equal(t, have[2], receive(t, ch), "lane 1's launch; lane 0's is not delivered")
		lane0Claim, err := s.Append(testCtx(t), SampleEnvelope(events.TypeClaim, run, 0, T0.Add(4)), have[1].Seq)
		require.NoError(t, err)
		claim, err := s.Append(testCtx(t), SampleEnvelope(events.TypeClaim, run, 1, T0.Add(5)), have[2].Seq)
		require.NoError(t, err)
		cancelled, err := s.Append(testCtx(t), SampleEnvelope(events.TypeCancel, run, events.RunLane, T0.Add(6)), have[0].Seq)
		require.NoError(t, err)
		got := receive(t, ch)
		require.Equal(t, claim, got.Seq, "lane 0's claim (#%d) is skipped", lane0Claim)
		require.Equal(t, 1, got.Lane)
		got = receive(t, ch)
		require.Equal(t, cancelled, got.Seq)
		require.Equal(t, events.TypeCancel, got.Type)

		after, err := lw.WatchLane(ctx, run, 1, claim)
		require.NoError(t, err)
		require.Equal(t, cancelled, receive(t, after).Seq, "after skips what the caller has")
		_, err = lw.WatchLane(ctx, run, events.MaxLanes+1, 0)
		require.ErrorIs(t, err, events.ErrInvalid)
		cancel()
		requireClosed(t, ch)
		requireClosed(t, after)
	})

	t.Run("watch of all runs", func(t *testing.T) {
		t.Parallel()
		s, a, b := newStore(t), NewRunID(), NewRunID()
		first := appendAll(t, s, SampleEnvelope(events.TypeRunCreated, a, events.RunLane, T0))[0]
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		ch, err := s.Watch(ctx, "", first.Seq-1)
		require.NoError(t, err)
		second := appendAll(t, s, SampleEnvelope(events.TypeRunCreated, b, events.RunLane, T0))[0]
		seen := map[string]bool{}
		for !seen[a] || !seen[b] {
			e := receive(t, ch)
			seen[e.Run] = true
			require.LessOrEqual(t, e.Seq, second.Seq)
		}
	})

	t.Run("oversized and invalid events are refused", func(t *testing.T) {
		t.Parallel()
		s, run := newStore(t), NewRunID()
		big := SamplePayload(events.TypeRunCreated).(events.RunCreated)
		big.Sheet = make([]byte, events.MaxEventBytes)
		big.SheetDigest = events.Digest(big.Sheet)
		_, err := s.Append(testCtx(t), events.NewEnvelope(run, events.RunLane, T0, big), 0)
		require.ErrorIs(t, err, events.ErrTooLarge)
		require.ErrorContains(t, err, "MaxEventBytes")
		require.ErrorContains(t, err, strconv.Itoa(events.MaxEventBytes))

		for name, env := range map[string]events.Envelope{
			"run-level type on a lane": events.NewEnvelope(run, 0, T0, SamplePayload(events.TypeRunCreated)),
			"lane type at run level":   events.NewEnvelope(run, events.RunLane, T0, SamplePayload(events.TypeLaunch)),
			"bad run id":               SampleEnvelope(events.TypeLaunch, "a.b", 0, T0),
			"no time":                  SampleEnvelope(events.TypeLaunch, run, 0, time.Time{}),
			"no payload":               {Schema: events.SchemaVersion, Type: events.TypeLaunch, Run: run, Time: T0},
			"invalid payload":          events.NewEnvelope(run, 0, T0, events.Cancel{}),
		} {
			_, err := s.Append(testCtx(t), env, 0)
			require.ErrorIs(t, err, events.ErrInvalid, name)
		}
		got, err := s.LoadRun(testCtx(t), run)
		require.NoError(t, err)
		require.Empty(t, got)
		_, err = s.Load(testCtx(t), "bad run", 0)
		require.ErrorIs(t, err, events.ErrInvalid)
	})
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		require.True(t, ok, "channel closed early")
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "nothing received within 10s")
	}
	var zero T
	return zero
}

func requireClosed[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			require.FailNow(t, "channel not closed within 10s")
		}
	}
}
