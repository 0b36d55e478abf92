package eventstest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// CapsQueue is a Queue that keeps the deployment's concurrency caps.
type CapsQueue interface {
	events.Queue
	events.Caps
}

// RunQueueCapsConformance checks the concurrency caps (events.Caps) on
// queues from newQueue: the cap bounds the jobs in flight across every
// consumer of a provider, a raised cap lets more through, binding a
// consumer never changes it, and it survives reopen (a new handle on the
// same backend). Every subtest uses its own provider.
func RunQueueCapsConformance(t *testing.T, newQueue func(t *testing.T) CapsQueue, reopen func(t *testing.T, q CapsQueue) CapsQueue) {
	t.Run("three consumers never hold more than the cap; a raised cap lets one more through", func(t *testing.T) {
		t.Parallel()
		q, prov := newQueue(t), policy.Provider(NewProvider())
		subj := events.JobSubject(string(prov))
		require.NoError(t, q.SetProviderCaps(testCtx(t), map[policy.Provider]int{prov: 2}))
		for range 4 {
			require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(NewRunID(), 0, NewExecutionID())))
		}
		ctx, cancel := context.WithCancel(testCtx(t))
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		got := make(chan *events.Delivery, 8)
		for range 3 {
			// Each consumer binds as a worker with its own settings.
			c, err := q.Jobs(testCtx(t), subj, events.JobOptions{AckWait: 20 * time.Second})
			require.NoError(t, err)
			wg.Go(func() {
				for ctx.Err() == nil {
					d, err := c.Next(ctx)
					if err == nil {
						got <- d
					}
				}
			})
		}
		held := []*events.Delivery{receive(t, got), receive(t, got)}
		info := capOf(t, q, prov)
		require.Equal(t, 2, info.Cap, "binding three consumers kept the cap")
		require.Equal(t, 2, info.InFlight, "two jobs delivered and unacknowledged, no third")
		require.Equal(t, 2, info.Queued)
		require.Empty(t, got, "a third job was delivered beyond the cap")

		require.NoError(t, q.SetProviderCaps(testCtx(t), map[policy.Provider]int{prov: 3}))
		held = append(held, receive(t, got))
		info = capOf(t, q, prov)
		require.Equal(t, events.CapInfo{Provider: prov, Cap: 3, InFlight: 3, Queued: 1, Bound: true}, info)
		for _, d := range held {
			require.NoError(t, d.Ack(testCtx(t)))
		}
		require.NoError(t, receive(t, got).Ack(testCtx(t)))
		require.Eventually(t, func() bool { return capOf(t, q, prov).InFlight == 0 }, 30*time.Second, 10*time.Millisecond)
	})

	t.Run("busy consumers stay under the cap throughout", func(t *testing.T) {
		t.Parallel()
		q, prov := newQueue(t), policy.Provider(NewProvider())
		subj := events.JobSubject(string(prov))
		require.NoError(t, q.SetProviderCaps(testCtx(t), map[policy.Provider]int{prov: 2}))
		const jobs = 6
		for range jobs {
			require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(NewRunID(), 0, NewExecutionID())))
		}
		var inFlight, most, done atomic.Int32
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		var wg sync.WaitGroup
		for range 3 {
			c, err := q.Jobs(testCtx(t), subj, events.JobOptions{})
			require.NoError(t, err)
			wg.Go(func() {
				for done.Load() < jobs {
					d, err := c.Next(ctx)
					if err != nil {
						return
					}
					n := inFlight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					// Held long enough that a consumer the cap failed to
					// stop would take a third job meanwhile.
					time.Sleep(100 * time.Millisecond)
					// Counted out before the ack: the queue may hand the
					// freed slot out as soon as the ack lands.
					inFlight.Add(-1)
					if d.Ack(ctx) == nil && done.Add(1) == jobs {
						cancel()
					}
				}
			})
		}
		wg.Wait()
		require.EqualValues(t, jobs, done.Load(), "every job ran")
		require.EqualValues(t, 2, most.Load(), "at most the cap of 2 at once, and the cap was used")
	})

	t.Run("caps survive a reopen and a worker binding with other settings", func(t *testing.T) {
		t.Parallel()
		q, prov, fresh := newQueue(t), policy.Provider(NewProvider()), policy.Provider(NewProvider())
		require.NoError(t, q.SetProviderCaps(testCtx(t), map[policy.Provider]int{prov: 5}))
		q = reopen(t, q)
		_, err := q.Jobs(testCtx(t), events.JobSubject(string(prov)), events.JobOptions{AckWait: 7 * time.Second, MaxDeliver: 3})
		require.NoError(t, err)
		require.Equal(t, events.CapInfo{Provider: prov, Cap: 5, Bound: true}, capOf(t, q, prov))

		// A consumer created by a worker gets the default cap, not the
		// worker's own concurrency.
		_, err = q.Jobs(testCtx(t), events.JobSubject(string(fresh)), events.JobOptions{})
		require.NoError(t, err)
		require.Equal(t, events.CapInfo{Provider: fresh, Cap: events.DefaultProviderCap, Bound: true}, capOf(t, q, fresh))
		caps, err := q.ProviderCaps(testCtx(t))
		require.NoError(t, err)
		for i, p := range policy.Providers {
			require.Equal(t, p, caps[i].Provider, "known providers first, in canonical order")
			if !caps[i].Bound {
				require.Equal(t, events.DefaultProviderCap, caps[i].Cap)
			}
		}
	})

	t.Run("invalid caps are refused and change nothing", func(t *testing.T) {
		t.Parallel()
		q, prov := newQueue(t), policy.Provider(NewProvider())
		require.NoError(t, q.SetProviderCaps(testCtx(t), map[policy.Provider]int{prov: 3}))
		for name, caps := range map[string]map[policy.Provider]int{
			"zero":       {prov: 0},
			"over max":   {prov: events.MaxProviderCap + 1},
			"negative":   {prov: -1},
			"bad name":   {"Not A Provider": 2},
			"one of two": {prov: 4, "native": 2},
		} {
			err := q.SetProviderCaps(testCtx(t), caps)
			require.ErrorIs(t, err, events.ErrInvalid, name)
		}
		require.Equal(t, 3, capOf(t, q, prov).Cap)
	})
}

// capOf returns prov's entry of q.ProviderCaps.
func capOf(t *testing.T, q events.Caps, prov policy.Provider) events.CapInfo {
	t.Helper()
	caps, err := q.ProviderCaps(testCtx(t))
	require.NoError(t, err)
	for _, c := range caps {
		if c.Provider == prov {
			return c
		}
	}
	t.Fatalf("ProviderCaps has no %s: %+v", prov, caps)
	return events.CapInfo{}
}
