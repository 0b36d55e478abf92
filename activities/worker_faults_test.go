package activities

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// lostAnswerClaims is the real JetStream Claims whose first Claim or
// Renew (as chosen) is stored but answers with a timeout, as when the
// reply is lost: the caller cannot tell whether it happened.
type lostAnswerClaims struct {
	events.Claims
	loseClaim, loseRenew atomic.Bool
}

var errLostAnswer = errors.New("simulated: reply lost (context deadline exceeded)")

func (c *lostAnswerClaims) Claim(ctx context.Context, id, worker string, ttl time.Duration) (events.Lease, error) {
	l, err := c.Claims.Claim(ctx, id, worker, ttl)
	if err == nil && c.loseClaim.CompareAndSwap(true, false) {
		return events.Lease{}, errLostAnswer
	}
	return l, err
}

func (c *lostAnswerClaims) Renew(ctx context.Context, l events.Lease) (events.Lease, error) {
	next, err := c.Claims.Renew(ctx, l)
	if err == nil && c.loseRenew.CompareAndSwap(true, false) {
		return events.Lease{}, errLostAnswer
	}
	return next, err
}

// TestWorkerAmbiguousClaims: a claim or renewal that was stored although
// its answer was lost is recognised as the worker's own, so the attempt
// runs once and finishes normally instead of waiting for its own lease to
// go stale or stopping as if the lease were lost.
func TestWorkerAmbiguousClaims(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		scenario string
		lose     func(*lostAnswerClaims)
	}{
		{"claim answer lost", simconfig.ScenarioSuccess, func(c *lostAnswerClaims) { c.loseClaim.Store(true) }},
		{"renewal answer lost", simconfig.ScenarioSlowSuccess, func(c *lostAnswerClaims) { c.loseRenew.Store(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newWorkerEnv(t, tc.scenario, false)
			claims := &lostAnswerClaims{Claims: e.js.Claims()}
			tc.lose(claims)
			cfg := e.workerConfig("worker-a")
			cfg.Claims = claims
			w := e.startWorker(cfg)
			job := e.newJob(0)
			e.publish(job)

			e.waitReport(events.ReportFinished, job.ExecutionID)
			w.waitEvent(t, evAcked, job.ExecutionID, 1)
			require.False(t, claims.loseClaim.Load() || claims.loseRenew.Load(), "the lost answer happened")
			require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
			require.Len(t, e.workloads(job), 1)
			_, rc := e.receipt(job)
			require.Equal(t, "complete", string(rc.Status))
			require.Equal(t, events.LeaseReleased, e.claimOf(job).State)
		})
	}
}

// unreachableClaims is the real Claims whose first Claims (left of them)
// fail before reaching the store, as in an outage of the claims store
// that the job stream does not share.
type unreachableClaims struct {
	events.Claims
	left atomic.Int32
}

func (c *unreachableClaims) Claim(ctx context.Context, id, worker string, ttl time.Duration) (events.Lease, error) {
	if c.left.Add(-1) >= 0 {
		return events.Lease{}, errors.New("simulated: claims store unreachable (no responders)")
	}
	return c.Claims.Claim(ctx, id, worker, ttl)
}

// TestWorkerClaimRetriesKeepTheJob: while a claim is retried through an
// outage longer than the ack wait, the job's delivery is kept fresh, so
// the job is not delivered again (here to the worker's second slot, which
// would find it busy); when the store answers, the attempt runs once.
func TestWorkerClaimRetriesKeepTheJob(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	claims := &unreachableClaims{Claims: e.js.Claims()}
	// Seven backoff waits take at least 25+50+…+800+1000 ms = 2.6 s,
	// more than twice the ack wait.
	claims.left.Store(7)
	cfg := e.workerConfig("worker-a")
	cfg.Claims = claims
	cfg.Concurrency = 2
	w := e.startWorker(cfg)
	job := e.newJob(0)
	start := time.Now()
	e.publish(job)

	e.waitReport(events.ReportFinished, job.ExecutionID)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)
	require.Less(t, claims.left.Load(), int32(0), "every failing claim was tried")
	require.Greater(t, time.Since(start), 2*cfg.AckWait, "the outage outlasted the ack wait")
	evs := w.events.snapshot()
	require.Zero(t, countEvents(evs, evBusy, job.ExecutionID), "the job was delivered again while its claim was retried: %v", evs)
	require.Zero(t, countEvents(evs, evReturned, job.ExecutionID), "%v", evs)
	require.Len(t, e.workloads(job), 1, "the attempt ran once")
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	require.Equal(t, events.LeaseReleased, e.claimOf(job).State)
}

// claimedHookQueue is the real Queue calling hook before it publishes
// each claimed report.
type claimedHookQueue struct {
	events.Queue
	hook func(events.Report)
}

func (q *claimedHookQueue) PublishReport(ctx context.Context, r events.Report) (uint64, error) {
	if r.Kind == events.ReportClaimed {
		q.hook(r)
	}
	return q.Queue.PublishReport(ctx, r)
}

// TestWorkerLeaseLostBeforeStart abandons the claim while the claimed
// report is on its way (as another worker would after a long publish
// outage): the worker's renewal just before the start finds the lease
// lost, and the CLI never starts.
func TestWorkerLeaseLostBeforeStart(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	cfg := e.workerConfig("worker-a")
	cfg.Queue = &claimedHookQueue{Queue: e.js.Queue(), hook: func(r events.Report) {
		ctx := context.Background()
		l, err := e.js.Claims().Inspect(ctx, r.ExecutionID)
		if err == nil {
			_, err = e.js.Claims().Abandon(ctx, l, "outsider")
		}
		if err != nil {
			t.Errorf("abandon from outside: %v", err)
		}
	}}
	w := e.startWorker(cfg)
	job := e.newJob(0)
	e.publish(job)

	w.waitEvent(t, evLeaseLost, job.ExecutionID, 1)
	require.Zero(t, countEvents(w.events.snapshot(), evClaimed, job.ExecutionID), "the runner never started")
	require.Empty(t, e.workloads(job))
	require.NoFileExists(t, job.Paths.Receipt)
	w.stop(t)
	e.syncReports()
	require.Equal(t, []events.ReportKind{events.ReportClaimed}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
}

// shortAckQueue is the real Queue whose job consumers get an ack wait far
// shorter than the worker's heartbeat: the worker's InProgress arrives too
// late, as when one goes missing, and a running job is delivered again.
type shortAckQueue struct {
	events.Queue
	ackWait time.Duration
}

func (q *shortAckQueue) Jobs(ctx context.Context, subject string, opts events.JobOptions) (events.JobConsumer, error) {
	opts.AckWait = q.ackWait
	return q.Queue.Jobs(ctx, subject, opts)
}

// TestWorkerJobRedeliveredWhileItRuns: a job delivered again to the worker
// that is running it (a second slot takes the redelivery) is returned for
// later without inspecting its claim or starting anything: the attempt
// runs once, is reported claimed and finished once, and its claim is
// released, never abandoned or waited on as another holder's.
func TestWorkerJobRedeliveredWhileItRuns(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSlowSuccess, false)
	cfg := e.workerConfig("worker-a")
	cfg.Queue = &shortAckQueue{Queue: e.js.Queue(), ackWait: 50 * time.Millisecond}
	cfg.Concurrency = 2
	w := e.startWorker(cfg)
	job := e.newJob(0)
	e.publish(job)

	w.waitEvent(t, evBusy, job.ExecutionID, 1)
	e.waitReport(events.ReportFinished, job.ExecutionID)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)
	require.Len(t, e.workloads(job), 1, "the attempt ran once")
	rs := kinds(reportsOf(e.reports.snapshot(), job.ExecutionID))
	require.Equal(t, 1, countKind(rs, events.ReportClaimed), "%v", rs)
	require.Equal(t, 1, countKind(rs, events.ReportFinished), "%v", rs)
	require.Zero(t, countKind(rs, events.ReportAbandoned), "%v", rs)
	evs := w.events.snapshot()
	for _, k := range []workerEventKind{evWaitLive, evAbandonedStale, evLeaseLost} {
		require.Zero(t, countEvents(evs, k, job.ExecutionID), "%s: the redelivery was handled as another holder's: %v", k, evs)
	}
	require.Equal(t, 1, countEvents(evs, evClaimed, job.ExecutionID))
	require.Equal(t, events.LeaseReleased, e.claimOf(job).State)
}

func countKind(rs []events.ReportKind, k events.ReportKind) int {
	n := 0
	for _, r := range rs {
		if r == k {
			n++
		}
	}
	return n
}

// renewedLostAnswerClaims is the real Claims whose first Claim is stored,
// then renewed, and answers with a lost reply: when the worker retries, it
// finds a claim under its own id that has been renewed since, so something
// (another process with this id) runs it.
type renewedLostAnswerClaims struct {
	events.Claims
	lose atomic.Bool
}

func (c *renewedLostAnswerClaims) Claim(ctx context.Context, id, worker string, ttl time.Duration) (events.Lease, error) {
	l, err := c.Claims.Claim(ctx, id, worker, ttl)
	if err == nil && c.lose.CompareAndSwap(true, false) {
		if _, err := c.Claims.Renew(ctx, l); err != nil {
			return events.Lease{}, err
		}
		return events.Lease{}, errLostAnswer
	}
	return l, err
}

// TestWorkerDoesNotAdoptARenewedClaim: after a claim whose answer was
// lost, a claim under the worker's own id that has been renewed is not the
// worker's unconfirmed create (nothing renews before a claim is known):
// the CLI never starts; the lease, renewed no more, goes stale and the
// worker abandons it and reports the execution abandoned.
func TestWorkerDoesNotAdoptARenewedClaim(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	claims := &renewedLostAnswerClaims{Claims: e.js.Claims()}
	claims.lose.Store(true)
	cfg := e.workerConfig("worker-a")
	cfg.Claims = claims
	w := e.startWorker(cfg)
	job := e.newJob(0)
	e.publish(job)

	e.waitReport(events.ReportAbandoned, job.ExecutionID)
	w.waitEvent(t, evAbandonedStale, job.ExecutionID, 1)
	require.False(t, claims.lose.Load(), "the lost answer happened")
	require.Empty(t, e.workloads(job), "a claim renewed since is not adopted: nothing starts")
	require.Zero(t, countEvents(w.events.snapshot(), evClaimed, job.ExecutionID))
	require.Equal(t, []events.ReportKind{events.ReportAbandoned}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	l := e.claimOf(job)
	require.Equal(t, events.LeaseAbandoned, l.State)
	require.Equal(t, uint64(1), l.Renewals)
	require.Equal(t, "worker-a", l.AbandonedBy)
}
