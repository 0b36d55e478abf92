package eventstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// NewProvider returns a fresh valid provider name, so each test has its own
// job subject and durable consumer.
func NewProvider() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "p" + hex.EncodeToString(b)
}

// NewExecutionID returns a fresh valid execution id.
func NewExecutionID() string { return "x-" + NewRunID()[2:] }

// noJobAhead asserts that c has nothing to deliver ahead of a sentinel,
// without guessing a quiet period: it publishes a sentinel job on subj and
// the next delivery on c must be that sentinel, since any job queued before
// it would come first. With afterAckWait the sentinel is left
// unacknowledged and must also be the next delivery after its ack wait ran
// out: a job whose own ack wait ran out before the sentinel's (a job that
// an ack, a term or in-progress calls failed to settle) would be
// redelivered first. The sentinel is acknowledged at the end.
func noJobAhead(t *testing.T, q events.Queue, subj string, c events.JobConsumer, afterAckWait bool) {
	t.Helper()
	sentinel := SampleJob(NewRunID(), 0, "sentinel-"+NewExecutionID())
	require.NoError(t, q.PublishJob(testCtx(t), subj, sentinel))
	d := nextJob(t, c)
	require.Equal(t, sentinel.ExecutionID, d.Job.ExecutionID, "unexpected delivery ahead of the sentinel: job %s delivery %d", d.Job.ExecutionID, d.NumDelivered)
	if afterAckWait {
		d = nextJob(t, c)
		require.Equal(t, sentinel.ExecutionID, d.Job.ExecutionID, "unexpected redelivery ahead of the sentinel's: job %s delivery %d", d.Job.ExecutionID, d.NumDelivered)
		require.EqualValues(t, 2, d.NumDelivered)
	}
	require.NoError(t, d.Ack(testCtx(t)))
}

func nextJob(t *testing.T, c events.JobConsumer) *events.Delivery {
	t.Helper()
	d, err := c.Next(testCtx(t))
	require.NoError(t, err)
	return d
}

// RunQueueJobsConformance checks the jobs half of the Queue contract
// (PublishJob, Jobs and deliveries' ack, nak, term and in-progress) on fresh
// queues from newQueue. Queues may share a backend: every subtest uses its
// own provider subject and run ids. Ack-wait tests take about a second each.
// RunQueueReportsConformance checks the other half; a Queue passes both.
func RunQueueJobsConformance(t *testing.T, newQueue func(t *testing.T) events.Queue) {
	t.Run("a job is delivered once, then acked away", func(t *testing.T) {
		t.Parallel()
		q, subj := newQueue(t), events.JobSubject(NewProvider())
		c, err := q.Jobs(testCtx(t), subj, events.JobOptions{AckWait: 400 * time.Millisecond})
		require.NoError(t, err)
		job := SampleJob(NewRunID(), 0, NewExecutionID())
		require.NoError(t, q.PublishJob(testCtx(t), subj, job))
		require.NoError(t, q.PublishJob(testCtx(t), subj, job), "a retried publish is not an error")
		d := nextJob(t, c)
		job.Schema = events.JobSchemaVersion
		require.Equal(t, job, d.Job)
		require.EqualValues(t, 1, d.NumDelivered)
		require.NoError(t, d.Ack(testCtx(t)))
		noJobAhead(t, q, subj, c, true)
	})

	t.Run("two consumers of one subject share the jobs", func(t *testing.T) {
		t.Parallel()
		q, subj := newQueue(t), events.JobSubject(NewProvider())
		opts := events.JobOptions{AckWait: 5 * time.Second}
		c1, err := q.Jobs(testCtx(t), subj, opts)
		require.NoError(t, err)
		c2, err := q.Jobs(testCtx(t), subj, opts)
		require.NoError(t, err)
		run := NewRunID()
		const n = 20
		for i := range n {
			require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(run, i, NewExecutionID())))
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		for _, c := range []events.JobConsumer{c1, c2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					d, err := c.Next(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					seen[d.Job.ExecutionID]++
					done := len(seen) == n
					mu.Unlock()
					_ = d.Ack(ctx)
					if done {
						cancel()
					}
				}
			}()
		}
		wg.Wait()
		require.Len(t, seen, n)
		for id, k := range seen {
			require.Equal(t, 1, k, "job %s delivered %d times", id, k)
		}
	})

	t.Run("an unacked job is redelivered after the ack wait", func(t *testing.T) {
		t.Parallel()
		q, subj := newQueue(t), events.JobSubject(NewProvider())
		c, err := q.Jobs(testCtx(t), subj, events.JobOptions{AckWait: 400 * time.Millisecond})
		require.NoError(t, err)
		other, err := q.Jobs(testCtx(t), subj, events.JobOptions{AckWait: 400 * time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(NewRunID(), 0, NewExecutionID())))
		first := nextJob(t, c)
		start := time.Now()
		again := nextJob(t, other)
		require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "not before the ack wait")
		require.Equal(t, first.Job, again.Job)
		require.EqualValues(t, 2, again.NumDelivered)
		require.NoError(t, again.Ack(testCtx(t)))
	})

	t.Run("in progress keeps a job past the ack wait", func(t *testing.T) {
		t.Parallel()
		q, subj := newQueue(t), events.JobSubject(NewProvider())
		opts := events.JobOptions{AckWait: 400 * time.Millisecond}
		c, err := q.Jobs(testCtx(t), subj, opts)
		require.NoError(t, err)
		other, err := q.Jobs(testCtx(t), subj, opts)
		require.NoError(t, err)
		require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(NewRunID(), 0, NewExecutionID())))
		d := nextJob(t, c)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					_ = d.InProgress(context.Background())
				}
			}
		}()
		// Three ack waits pass with in-progress calls: the job is not
		// redelivered ahead of a sentinel's redelivery, three times over.
		for range 3 {
			noJobAhead(t, q, subj, other, true)
		}
		close(stop)
		wg.Wait()
		require.NoError(t, d.Ack(testCtx(t)))
		noJobAhead(t, q, subj, other, true)
	})

	t.Run("term removes a job, nak returns it", func(t *testing.T) {
		t.Parallel()
		q, subj := newQueue(t), events.JobSubject(NewProvider())
		c, err := q.Jobs(testCtx(t), subj, events.JobOptions{AckWait: 300 * time.Millisecond})
		require.NoError(t, err)
		run := NewRunID()
		require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(run, 0, NewExecutionID())))
		require.NoError(t, nextJob(t, c).Term(testCtx(t), "permanent failure"))
		noJobAhead(t, q, subj, c, true)

		require.NoError(t, q.PublishJob(testCtx(t), subj, SampleJob(run, 1, NewExecutionID())))
		d := nextJob(t, c)
		require.NoError(t, d.Nak(testCtx(t), 0))
		again := nextJob(t, c)
		require.Equal(t, d.Job, again.Job)
		require.EqualValues(t, 2, again.NumDelivered)
		require.NoError(t, again.Ack(testCtx(t)))
	})

	t.Run("native and provider subjects are separate queues", func(t *testing.T) {
		t.Parallel()
		q, parent := newQueue(t), NewProvider()
		native, ext := events.NativeJobSubject(parent), events.JobSubject(parent)
		cn, err := q.Jobs(testCtx(t), native, events.JobOptions{})
		require.NoError(t, err)
		ce, err := q.Jobs(testCtx(t), ext, events.JobOptions{})
		require.NoError(t, err)
		job := SampleJob(NewRunID(), 0, NewExecutionID())
		require.NoError(t, q.PublishJob(testCtx(t), native, job))
		noJobAhead(t, q, ext, ce, false)
		d := nextJob(t, cn)
		require.Equal(t, job.ExecutionID, d.Job.ExecutionID)
		require.NoError(t, d.Ack(testCtx(t)))
	})

	t.Run("invalid and oversized jobs are refused", func(t *testing.T) {
		t.Parallel()
		q := newQueue(t)
		job := SampleJob(NewRunID(), 0, NewExecutionID())
		for _, subj := range []string{"sy.job.>", "sy.job.native", "sy.job.a.b", "sy.ev.x.run", "sy.job.Codex"} {
			require.ErrorIs(t, q.PublishJob(testCtx(t), subj, job), events.ErrInvalid, subj)
			_, err := q.Jobs(testCtx(t), subj, events.JobOptions{})
			require.ErrorIs(t, err, events.ErrInvalid, subj)
		}
		bad := job
		bad.Run = "no spaces"
		require.ErrorIs(t, q.PublishJob(testCtx(t), events.JobSubject(NewProvider()), bad), events.ErrInvalid)
		big := job
		big.Descriptor = string(make([]byte, events.MaxMessageBytes))
		err := q.PublishJob(testCtx(t), events.JobSubject(NewProvider()), big)
		require.ErrorIs(t, err, events.ErrTooLarge)
		require.ErrorContains(t, err, "MaxMessageBytes")
	})
}
