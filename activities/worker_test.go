package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// TestWorkerRunsJobOnce proves the happy path: one delivery, a claim, a
// claimed report with the lease, one workload process, a finished report
// naming the receipt and its digest, a released claim.
func TestWorkerRunsJobOnce(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	w := e.startWorker(e.workerConfig("worker-a"))
	job := e.newJob(0)
	e.publish(job)

	fin := e.waitReport(events.ReportFinished, job.ExecutionID)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)

	rs := reportsOf(e.reports.snapshot(), job.ExecutionID)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(rs))
	claimed := rs[0]
	require.Equal(t, "worker-a", claimed.WorkerID)
	require.NotNil(t, claimed.Lease)
	require.Equal(t, testLeaseTTL.Milliseconds(), claimed.Lease.TTLMs)
	require.NotZero(t, claimed.Lease.Revision)

	b, rc := e.receipt(job)
	require.Equal(t, policy.StatusComplete, rc.Status)
	require.Equal(t, job.Paths.Receipt, fin.ReceiptPath)
	require.Equal(t, events.Digest(b), fin.ReceiptDigest)
	require.Len(t, e.workloads(job), 1, "exactly one workload process")

	l := e.claimOf(job)
	require.Equal(t, events.LeaseReleased, l.State)
	require.Equal(t, "worker-a", l.WorkerID)
}

// TestWorkerSharedConsumer runs four jobs through two workers of one
// provider sharing the durable consumer, each capped at one job at a
// time: every job runs exactly once, and no worker ever has two
// executions between its claimed and finished reports.
func TestWorkerSharedConsumer(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSlowSuccess, false)
	for _, id := range []string{"worker-a", "worker-b"} {
		cfg := e.workerConfig(id)
		cfg.Concurrency = 1
		e.startWorker(cfg)
	}
	jobs := make([]events.Job, 4)
	for i := range jobs {
		jobs[i] = e.newJob(i)
	}
	e.publish(jobs...)
	for _, j := range jobs {
		e.waitReport(events.ReportFinished, j.ExecutionID)
	}

	type span struct{ from, to time.Time }
	spans := map[string][]span{}
	for _, j := range jobs {
		rs := reportsOf(e.reports.snapshot(), j.ExecutionID)
		require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(rs), "job %s", j.ExecutionID)
		require.Equal(t, rs[0].WorkerID, rs[1].WorkerID)
		require.Len(t, e.workloads(j), 1, "job %s runs exactly once", j.ExecutionID)
		spans[rs[0].WorkerID] = append(spans[rs[0].WorkerID], span{rs[0].Time, rs[1].Time})
	}
	require.Len(t, spans, 2, "both workers took jobs from the shared consumer")
	for id, ss := range spans {
		for i := range ss {
			for k := i + 1; k < len(ss); k++ {
				overlap := ss[i].from.Before(ss[k].to) && ss[k].from.Before(ss[i].to)
				require.False(t, overlap, "worker %s ran two executions at once: %v and %v", id, ss[i], ss[k])
			}
		}
	}
}

// TestWorkerRedeliveredClaim covers a job whose execution was claimed
// before it reached this worker: never started here, whatever the claim
// says.
func TestWorkerRedeliveredClaim(t *testing.T) {
	t.Parallel()
	t.Run("live lease waits", func(t *testing.T) {
		t.Parallel()
		e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
		job := e.newJob(0)
		ctx := context.Background()
		lease, err := e.js.Claims().Claim(ctx, job.ExecutionID, "holder", testLeaseTTL)
		require.NoError(t, err)
		renewCtx, stopRenew := context.WithCancel(ctx)
		renewed := make(chan events.Lease, 1)
		go func() { // the holder, alive and renewing
			l := lease
			tick := time.NewTicker(testLeaseTTL / 5)
			defer tick.Stop()
			for {
				select {
				case <-renewCtx.Done():
					renewed <- l
					return
				case <-tick.C:
					if next, err := e.js.Claims().Renew(ctx, l); err == nil {
						l = next
					}
				}
			}
		}()
		w := e.startWorker(e.workerConfig("worker-a"))
		e.publish(job)

		w.waitEvent(t, evWaitLive, job.ExecutionID, 2)
		stopRenew()
		l := <-renewed
		require.Empty(t, e.workloads(job), "a live claim is never started here")
		e.syncReports()
		require.Empty(t, reportsOf(e.reports.snapshot(), job.ExecutionID))

		_, err = e.js.Claims().Release(ctx, l) // the holder finishes
		require.NoError(t, err)
		w.waitEvent(t, evAlreadyReleased, job.ExecutionID, 1)
		require.Empty(t, e.workloads(job))
		e.syncReports()
		rs := reportsOf(e.reports.snapshot(), job.ExecutionID)
		require.Equal(t, []events.ReportKind{events.ReportRedelivered}, kinds(rs),
			"the holder reports the attempt; this worker only reports the job it removed, for audit")
		require.Equal(t, "worker-a", rs[0].WorkerID)
		require.GreaterOrEqual(t, rs[0].Delivery, uint64(3), "returned twice while live, removed on a later delivery")
		require.NotZero(t, rs[0].JobSeq)
	})
	t.Run("stale lease is abandoned, never run", func(t *testing.T) {
		t.Parallel()
		e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
		job := e.newJob(0)
		_, err := e.js.Claims().Claim(context.Background(), job.ExecutionID, "crashed", 300*time.Millisecond)
		require.NoError(t, err)
		w := e.startWorker(e.workerConfig("worker-a"))
		e.publish(job)

		ab := e.waitReport(events.ReportAbandoned, job.ExecutionID)
		w.waitEvent(t, evAbandonedStale, job.ExecutionID, 1)
		require.Equal(t, "worker-a", ab.WorkerID)
		require.Equal(t, []events.ReportKind{events.ReportAbandoned}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
		require.Empty(t, e.workloads(job), "an execution that may have started is never run again")
		l := e.claimOf(job)
		require.Equal(t, events.LeaseAbandoned, l.State)
		require.Equal(t, "worker-a", l.AbandonedBy)
	})
	t.Run("abandoned claim gets its report once", func(t *testing.T) {
		t.Parallel()
		e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
		job := e.newJob(0)
		ctx := context.Background()
		l, err := e.js.Claims().Claim(ctx, job.ExecutionID, "crashed", testLeaseTTL)
		require.NoError(t, err)
		// Another worker abandoned it and died before reporting.
		_, err = e.js.Claims().Abandon(ctx, l, "reaper")
		require.NoError(t, err)
		w := e.startWorker(e.workerConfig("worker-a"))
		e.publish(job)

		ab := e.waitReport(events.ReportAbandoned, job.ExecutionID)
		w.waitEvent(t, evAlreadyAbandoned, job.ExecutionID, 1)
		require.Equal(t, "reaper", ab.WorkerID, "re-published under the abandoning worker's id, so its message id dedups")
		redo := e.waitReport(events.ReportRedelivered, job.ExecutionID)
		require.Equal(t, "worker-a", redo.WorkerID)
		require.Equal(t, uint64(1), redo.Delivery, "the job's first delivery, yet its execution had ended")
		require.Equal(t, []events.ReportKind{events.ReportAbandoned, events.ReportRedelivered}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
		require.Empty(t, e.workloads(job))
	})
}

// TestWorkerCancel appends a cancel event while the long-running simulator
// runs: the child gets SIGTERM, the receipt says cancelled, and the
// finished report carries it.
func TestWorkerCancel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		eventLane func(jobLane int) int
	}{
		{"lane cancel", func(l int) int { return l }},
		{"run cancel", func(int) int { return events.RunLane }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
			w := e.startWorker(e.workerConfig("worker-a"))
			job := e.newJob(1)
			e.publish(job)
			inv := e.waitWorkload(job)

			// A cancel of another lane changes nothing for this one.
			_, err := e.appendEvent(2, events.Cancel{Reason: "other lane", By: "test"})
			require.NoError(t, err)
			_, err = e.appendEvent(tc.eventLane(job.Lane), events.Cancel{Reason: "stop", By: "test"})
			require.NoError(t, err)

			fin := e.waitReport(events.ReportFinished, job.ExecutionID)
			w.waitEvent(t, evAcked, job.ExecutionID, 1)
			require.Equal(t, 1, countEvents(w.events.snapshot(), evCancelSignalled, job.ExecutionID))
			b, rc := e.receipt(job)
			require.Equal(t, policy.StatusCancelled, rc.Status)
			require.Equal(t, events.Digest(b), fin.ReceiptDigest)
			require.Equal(t, []string{"SIGTERM"}, e.signalsTo(inv.Pid), "the child got SIGTERM")
			require.Len(t, e.workloads(job), 1)
		})
	}
}

// TestWorkerCancelledBeforeTaken: a lane cancelled before its job reached
// a worker still ends with a receipt, but no CLI starts.
func TestWorkerCancelledBeforeTaken(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	job := e.newJob(0)
	_, err := e.appendEvent(job.Lane, events.Cancel{Reason: "early", By: "test"})
	require.NoError(t, err)
	w := e.startWorker(e.workerConfig("worker-a"))
	e.publish(job)

	fin := e.waitReport(events.ReportFinished, job.ExecutionID)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)
	b, rc := e.receipt(job)
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.False(t, rc.ProcessStarted != nil && *rc.ProcessStarted, "no CLI process started")
	require.Equal(t, events.Digest(b), fin.ReceiptDigest)
	require.Empty(t, e.workloads(job))
}

// TestWorkerLeaseLost abandons the running attempt's claim from outside:
// the worker stops its child and publishes no finished report.
func TestWorkerLeaseLost(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	w := e.startWorker(e.workerConfig("worker-a"))
	job := e.newJob(0)
	e.publish(job)
	e.waitReport(events.ReportClaimed, job.ExecutionID)
	inv := e.waitWorkload(job)

	ctx := context.Background()
	require.Eventually(t, func() bool { // race the worker's renewals until the abandon wins
		l, err := e.js.Claims().Inspect(ctx, job.ExecutionID)
		require.NoError(t, err)
		_, err = e.js.Claims().Abandon(ctx, l, "outsider")
		require.True(t, err == nil || errors.Is(err, events.ErrLeaseLost), "abandon: %v", err)
		return err == nil
	}, waitLong, 10*time.Millisecond)

	w.waitEvent(t, evLeaseLost, job.ExecutionID, 1)
	w.stop(t)
	e.syncReports()
	require.Equal(t, []string{"SIGTERM"}, e.signalsTo(inv.Pid), "the child was stopped")
	require.Equal(t, []events.ReportKind{events.ReportClaimed}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)),
		"no finished report for an attempt another worker abandoned")
	require.Equal(t, "outsider", e.claimOf(job).AbandonedBy)
}

// TestWorkerShutdown stops a worker while its child runs: the child is
// signalled and reaped before Run returns, and the cancelled receipt is
// still reported.
func TestWorkerShutdown(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	w := e.startWorker(e.workerConfig("worker-a"))
	job := e.newJob(0)
	e.publish(job)
	inv := e.waitWorkload(job)

	w.stop(t)
	require.Equal(t, []string{"SIGTERM"}, e.signalsTo(inv.Pid))
	require.True(t, processGone(inv.Pid), "the child was reaped before Run returned")
	rs := reportsOf(e.reports.waitFor(t, "claimed and finished", func(all []events.Report) bool {
		return len(reportsOf(all, job.ExecutionID)) == 2
	}), job.ExecutionID)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(rs))
	_, rc := e.receipt(job)
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Equal(t, events.LeaseReleased, e.claimOf(job).State)
}

// TestWorkerRunnerRefusal gives the worker a job whose prompt file is
// missing: the runner refuses the command line without a receipt, so the
// worker abandons its own claim and reports abandoned; nothing runs.
func TestWorkerRunnerRefusal(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	w := e.startWorker(e.workerConfig("worker-a"))
	job := e.newJob(0)
	require.NoError(t, os.Remove(job.Paths.Prompt))
	e.publish(job)

	e.waitReport(events.ReportAbandoned, job.ExecutionID)
	w.waitEvent(t, evAbandonedOwn, job.ExecutionID, 1)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportAbandoned},
		kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	require.Empty(t, e.workloads(job))
	l := e.claimOf(job)
	require.Equal(t, events.LeaseAbandoned, l.State)
	require.Equal(t, "worker-a", l.AbandonedBy)
}

// watchStarts is the worker's store, without cancel notices (so the
// worker watches the logs), recording where each cancel watch of a lane
// starts.
type watchStarts struct {
	events.Store
	js     *events.JetStreamStore
	mu     sync.Mutex
	afters []uint64
}

func (s *watchStarts) WatchLane(ctx context.Context, run string, lane int, after uint64) (<-chan events.Envelope, error) {
	s.mu.Lock()
	s.afters = append(s.afters, after)
	s.mu.Unlock()
	return s.js.WatchLane(ctx, run, lane, after)
}

func (s *watchStarts) first() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.afters) == 0 {
		return 0, false
	}
	return s.afters[0], true
}

// TestWorkerCancelWatchStartsWhereTheCheckRead: where the store has no
// cancel notices, the cancel watch of an attempt starts where the check for an earlier cancel finished reading
// the lane's and the run's logs (the lower of their newest sequences), not
// at the start of the run, and still sees a cancel recorded later.
func TestWorkerCancelWatchStartsWhereTheCheckRead(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	store := &watchStarts{Store: e.js.Store(), js: e.js.Store()}
	cfg := e.workerConfig("worker-a")
	cfg.Store = store
	w := e.startWorker(cfg)
	job := e.newJob(1)
	e.publish(job)
	inv := e.waitWorkload(job)

	ctx := context.Background()
	lane, err := e.js.Store().Last(ctx, e.run, job.Lane)
	require.NoError(t, err)
	run, err := e.js.Store().Last(ctx, e.run, events.RunLane)
	require.NoError(t, err)
	var after uint64
	require.Eventually(t, func() (ok bool) { after, ok = store.first(); return ok }, waitLong, 10*time.Millisecond)
	require.NotZero(t, after)
	require.Equal(t, min(lane.Seq, run.Seq), after, "the watch starts where both logs were read")

	e.cancelStops(job, inv, job.Lane)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)
}

// eventConsumers counts the consumers of the events stream (-1 when the
// stream cannot be read).
func eventConsumers(e *workerEnv) int {
	js, err := e.srv.Conn().JetStream()
	if err != nil {
		return -1
	}
	info, err := js.StreamInfo(events.EventsStream)
	if err != nil {
		return -1
	}
	return info.State.Consumers
}

// TestWorkerCancelNoticeNeedsNoConsumer: a running attempt follows its
// cancels as the engine publishes them, so the events stream has no
// consumer for it while it runs (it had one per attempt), and a cancel
// recorded meanwhile still stops it with SIGTERM.
func TestWorkerCancelNoticeNeedsNoConsumer(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	cfg := e.workerConfig("worker-a")
	cfg.CancelPoll = time.Hour // only a notice can stop it within the test
	e.startWorker(cfg)
	job := e.newJob(1)
	e.publish(job)
	inv := e.waitWorkload(job)
	require.Zero(t, eventConsumers(e), "no consumer of the events stream while the attempt runs")
	e.cancelStops(job, inv, job.Lane)
}

// deafStore is the worker's store whose cancel notices never come, as for
// a cancel published while the worker's connection was down.
type deafStore struct{ *events.JetStreamStore }

func (deafStore) CancelNotices(ctx context.Context, _ string, _ int) (<-chan struct{}, error) {
	return make(chan struct{}), nil
}

// TestWorkerCancelPollFindsAMissedNotice: a cancel whose notice never
// arrives is found by the attempt's periodic read of its logs, and stops
// the child with SIGTERM.
func TestWorkerCancelPollFindsAMissedNotice(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	cfg := e.workerConfig("worker-a")
	cfg.Store = deafStore{e.js.Store()}
	cfg.CancelPoll = 200 * time.Millisecond
	e.startWorker(cfg)
	job := e.newJob(1)
	e.publish(job)
	inv := e.waitWorkload(job)
	e.cancelStops(job, inv, events.RunLane)
}

// earlyNotice is the worker's store whose cancel notices the test sends,
// and which tells the test of each read of a log once armed.
type earlyNotice struct {
	*events.JetStreamStore
	notices chan struct{}
	reads   chan struct{}
	armed   atomic.Bool
}

func (s *earlyNotice) CancelNotices(context.Context, string, int) (<-chan struct{}, error) {
	return s.notices, nil
}

func (s *earlyNotice) Load(ctx context.Context, run string, lane int) ([]events.Envelope, error) {
	envs, err := s.JetStreamStore.Load(ctx, run, lane)
	if s.armed.Load() {
		select {
		case s.reads <- struct{}{}:
		default:
		}
	}
	return envs, err
}

// TestWorkerCancelNoticeBeforeTheCancelIsStored: a notice can arrive
// before the stream has stored the cancel it notices (a subscriber hears
// of a publication before the stream writes it). The read it triggers
// then finds nothing, and the worker reads again until the cancel is
// there, rather than waiting for the next periodic read.
func TestWorkerCancelNoticeBeforeTheCancelIsStored(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	store := &earlyNotice{JetStreamStore: e.js.Store(), notices: make(chan struct{}, 1), reads: make(chan struct{}, 1)}
	cfg := e.workerConfig("worker-a")
	cfg.Store = store
	cfg.CancelPoll = time.Hour
	e.startWorker(cfg)
	job := e.newJob(1)
	e.publish(job)
	inv := e.waitWorkload(job)

	store.armed.Store(true)
	store.notices <- struct{}{}
	select {
	case <-store.reads: // the lane's log, read without the cancel
	case <-time.After(waitLong):
		t.Fatal("the notice triggered no read")
	}
	e.cancelStops(job, inv, job.Lane)
}

// deniedStore is the worker's store on a server that refuses the worker
// the events' subjects.
type deniedStore struct{ *events.JetStreamStore }

func (deniedStore) CancelNotices(context.Context, string, int) (<-chan struct{}, error) {
	return nil, fmt.Errorf("follow the events: %w", events.ErrPermissionDenied)
}

// TestWorkerCancelWithoutNoticesWatchesTheLane: where the server refuses
// the worker the events' subjects, the attempt watches its lane with a
// consumer, as before notices, and a cancel still stops it at once (the
// periodic read is an hour away).
func TestWorkerCancelWithoutNoticesWatchesTheLane(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, false)
	cfg := e.workerConfig("worker-a")
	cfg.Store = deniedStore{e.js.Store()}
	cfg.CancelPoll = time.Hour
	e.startWorker(cfg)
	job := e.newJob(1)
	e.publish(job)
	inv := e.waitWorkload(job)
	require.Eventually(t, func() bool { return eventConsumers(e) == 1 }, waitLong, 10*time.Millisecond,
		"the attempt watches its lane with a consumer")
	e.cancelStops(job, inv, job.Lane)
}
