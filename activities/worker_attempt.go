package activities

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
)

// attemptEnd is how an execution's claim and run phases ended: the one
// thing execute does about it.
type attemptEnd int

const (
	endFinished  attemptEnd = iota // a receipt: report finished, release, ack
	endLeaseLost                   // another worker abandoned the claim: term the job
	endAbandon                     // no receipt: abandon the own claim
)

// phaseEnd is a phase's outcome: how it ended, why (for endAbandon) and
// the receipt's digest (for endFinished).
type phaseEnd struct {
	end    attemptEnd
	why    string
	digest string
	stall  *events.Stall // the runner's stall metadata (a response_stalled receipt)
}

// execute runs a claimed execution in three phases: the claimed report
// (start), the runner with heartbeats and cancel forwarding (run), then
// one place that acts on how they ended (settle): the finished report,
// Release and Ack, or, without a receipt (the runner refused the attempt,
// or the worker stopped before the start), abandoning its own claim and
// reporting abandoned, so the execution still ends and is never run again.
func (w *Worker) execute(ctx context.Context, log *slog.Logger, d *events.Delivery, lease events.Lease) {
	fctx, fcancel := w.finalCtx(ctx)
	defer fcancel()
	// The attempt's context: the worker's, cancelled with a SIGTERM cause
	// by a lost lease or a cancel event. interrupt reports whether it was
	// the first to cancel.
	rctx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	var interrupted atomic.Bool
	interrupt := func() bool {
		if !interrupted.CompareAndSwap(false, true) {
			return false
		}
		cancelRun(runner.Signalled{Signal: syscall.SIGTERM})
		return true
	}
	// The heartbeat starts with the claim and outlives ctx: it keeps the
	// lease and the job while the claimed report goes out, while the child
	// runs, is signalled and reaped, and until the finished report is out.
	hb := w.startHeartbeat(context.WithoutCancel(ctx), log, d, lease, func() {
		if interrupt() {
			log.Warn("lease lost while running: stopping the child")
		}
	})
	end, ok := w.startAttempt(ctx, log, d.Job, lease, hb)
	if ok {
		end = w.runAttempt(ctx, rctx, log, d.Job, hb, interrupt)
	}
	w.settle(fctx, log, d, hb, end)
}

// startAttempt publishes the claimed report and renews the lease once
// more. It reports whether the attempt may start, else how it ended.
func (w *Worker) startAttempt(ctx context.Context, log *slog.Logger, job events.Job, lease events.Lease, hb *heartbeat) (phaseEnd, bool) {
	claimed := w.report(job, events.ReportClaimed, w.cfg.WorkerID)
	claimed.Lease = &events.LeaseInfo{TTLMs: lease.TTL.Milliseconds(), Revision: lease.Revision}
	err := w.publish(ctx, log, claimed)
	if err == nil {
		// Renewed just before the start: nobody abandoned the claim while
		// the report was retried, and nobody can for a TTL.
		err = hb.confirm(ctx)
	}
	switch {
	case err == nil:
		return phaseEnd{}, true
	case errors.Is(err, events.ErrLeaseLost):
		log.Warn("lease lost before the attempt started; nothing started, nothing more to report")
		return phaseEnd{end: endLeaseLost}, false
	default:
		return phaseEnd{end: endAbandon, why: "worker stopped before the attempt started"}, false
	}
}

// runAttempt runs the runner under rctx while a cancel event of the job's
// lane or run interrupts it, and returns how it ended.
func (w *Worker) runAttempt(ctx, rctx context.Context, log *slog.Logger, job events.Job, hb *heartbeat, interrupt func() bool) phaseEnd {
	id := job.ExecutionID
	var cancelOnce sync.Once
	onCancel := func(env events.Envelope) {
		cancelOnce.Do(func() {
			if interrupt() {
				log.Info("cancel event: sending SIGTERM to the runner", "cancelSeq", env.Seq, "runLevel", env.Lane == events.RunLane)
				w.emit(evCancelSignalled, id)
			}
		})
	}
	// A cancel recorded before the job was taken stops the runner before
	// it starts anything. One recorded later arrives as a notice, which
	// is followed from before the check (so none falls between the two),
	// or, where the store has none, on a watch from where the check read
	// both logs.
	watchCtx, stopWatch := context.WithCancel(ctx)
	notices := w.cancelNotices(watchCtx, log, job)
	env, read, ok := w.recordedCancel(ctx, log, job)
	if ok {
		onCancel(env)
	}
	var watchWG sync.WaitGroup
	if notices != nil {
		watchWG.Go(func() { w.awaitCancel(watchCtx, log, job, notices, onCancel) })
	} else {
		watchWG.Go(func() { w.watchCancel(watchCtx, log, job, read, onCancel) })
	}

	w.emit(evClaimed, id)
	res, err := w.runRunner(rctx, log, job)
	stopWatch()
	watchWG.Wait()

	code := runner.ExitUsage
	if err == nil {
		code = res.ExitCode
	}
	if hb.isLost() {
		log.Warn("lease lost: another worker abandoned the execution; no finished report", "exit", code)
		return phaseEnd{end: endLeaseLost}
	}
	var digest string
	if err == nil {
		digest, err = receiptDigest(job.Paths.Receipt, res)
	}
	if err != nil {
		log.Error("runner left no receipt", "exit", code, "err", err)
		return phaseEnd{end: endAbandon, why: "runner left no receipt"}
	}
	log.Info("attempt ended", "exit", code)
	w.noteAttemptEnd(log, job.Provider, res.Receipt.Status)
	return phaseEnd{end: endFinished, digest: digest, stall: res.Stall}
}

// runRunner runs job's attempt in-process. The error is the runner's
// refusal (a configuration or a usage error): no receipt.
func (w *Worker) runRunner(ctx context.Context, log *slog.Logger, job events.Job) (runner.Result, error) {
	r, err := runner.New(w.runnerConfig(job))
	if err != nil {
		log.Error("runner configuration refused", "err", err)
		return runner.Result{}, err
	}
	o, err := runnerOptions(job)
	if err != nil {
		log.Error("job refused", "err", err)
		return runner.Result{}, err
	}
	return r.Run(ctx, o)
}

// settle acts on how the attempt ended, under fctx (live past shutdown
// for ShutdownGrace): it stops the heartbeat, then terms the job of a lost
// lease, abandons its own claim, or reports finished, releases and acks.
func (w *Worker) settle(fctx context.Context, log *slog.Logger, d *events.Delivery, hb *heartbeat, end phaseEnd) {
	id := d.Job.ExecutionID
	switch end.end {
	case endLeaseLost:
		hb.stop()
		w.term(fctx, log, d, "lease lost")
		w.emit(evLeaseLost, id)
		return
	case endAbandon:
		w.abandonOwn(fctx, log, d, hb.stop(), end.why)
		return
	}
	finished := w.report(d.Job, events.ReportFinished, w.cfg.WorkerID)
	finished.ReceiptPath, finished.ReceiptDigest = d.Job.Paths.Receipt, end.digest
	if end.stall != nil {
		st := *end.stall
		st.HealthObservationSeq = w.nextHealthObservation()
		finished.Stall = &st
	}
	if err := w.publish(fctx, log, finished); err != nil {
		// The claim stays held and goes stale: whoever gets the job next
		// reports the execution abandoned.
		hb.stop()
		w.nak(fctx, log, d, 0)
		w.emit(evReturned, id)
		return
	}
	w.emit(evFinished, id)
	lease := hb.stop()
	if hb.isLost() {
		log.Warn("lease lost after the finished report went out")
		w.term(fctx, log, d, "lease lost")
		return
	}
	if err := w.release(fctx, log, lease); err != nil {
		log.Warn("claim not released; the finished report stands", "err", err)
	}
	w.ack(fctx, log, d)
	w.emit(evAcked, id)
}

// abandonOwn ends an execution this worker claimed but cannot report as
// finished: it marks its own claim abandoned, reports abandoned and removes
// the job. If the claim cannot be updated the job goes back, and the lease
// (no longer renewed) goes stale for another worker to abandon.
func (w *Worker) abandonOwn(ctx context.Context, log *slog.Logger, d *events.Delivery, lease events.Lease, why string) {
	id := d.Job.ExecutionID
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	for {
		actx, cancel := context.WithTimeout(ctx, w.opTimeout())
		_, err := w.cfg.Claims.Abandon(actx, lease, w.cfg.WorkerID)
		cancel()
		if err == nil {
			break
		}
		if errors.Is(err, events.ErrLeaseLost) || ctx.Err() != nil || !bo.Wait(ctx) {
			log.Warn("own claim not abandoned; job returned", "why", why, "err", err)
			w.nak(ctx, log, d, 0)
			w.emit(evReturned, id)
			return
		}
	}
	log.Warn("execution abandoned by its own worker", "why", why)
	if err := w.publish(ctx, log, w.report(d.Job, events.ReportAbandoned, w.cfg.WorkerID)); err != nil {
		w.nak(ctx, log, d, 0) // the next delivery finds the claim abandoned and reports it
		w.emit(evReturned, id)
		return
	}
	w.term(ctx, log, d, why)
	w.emit(evAbandonedOwn, id)
}

// release marks the claim released, retrying transient failures. A
// release that timed out but was stored leaves the revision moved; the
// claim is then looked at to confirm.
func (w *Worker) release(ctx context.Context, log *slog.Logger, lease events.Lease) error {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	adopted := false
	for {
		actx, cancel := context.WithTimeout(ctx, w.opTimeout())
		_, err := w.cfg.Claims.Release(actx, lease)
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, events.ErrLeaseLost) {
			cur, ierr := w.inspectOnce(ctx, lease.ExecutionID)
			switch {
			case ierr == nil && cur.State == events.LeaseReleased && cur.WorkerID == w.cfg.WorkerID:
				return nil
			case !adopted && ierr == nil && cur.State == events.LeaseHeld && cur.WorkerID == w.cfg.WorkerID && cur.Revision != lease.Revision:
				// The heartbeat's last renewal was stored, but its answer
				// was lost when the heartbeat stopped: the claim is still
				// this worker's, at a later revision. Release that one.
				log.Info("the last renewal was stored after all; releasing at its revision")
				lease, adopted = cur, true
				continue
			}
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		w.retrying(log, "release failed; retrying", "err", err, "in", bo.Current())
		if !bo.Wait(ctx) {
			return err
		}
	}
}

// recordedCancel returns a cancel event already recorded on job's lane or
// on its run, and read: the sequence up to which it read every event of
// both (0 if it could not read them). Each log is read up to its newest
// event, one after the other, so read is the lower of their newest
// sequences: an event of either past it may be unread, none before it is.
// A failed read is logged and says none: the watch, from 0, still sees
// the cancel.
func (w *Worker) recordedCancel(ctx context.Context, log *slog.Logger, job events.Job) (cancel events.Envelope, read uint64, found bool) {
	read = math.MaxUint64
	for _, lane := range []int{job.Lane, events.RunLane} {
		actx, stop := context.WithTimeout(ctx, w.opTimeout())
		envs, err := w.cfg.Store.Load(actx, job.Run, lane)
		stop()
		if err != nil {
			log.Debug("cannot read the run for an earlier cancel; the watch will see it", "err", err)
			return events.Envelope{}, 0, false
		}
		if len(envs) == 0 {
			read = 0
		} else {
			read = min(read, envs[len(envs)-1].Seq)
		}
		for _, env := range envs {
			if env.Type == events.TypeCancel && !found {
				cancel, found = env, true
			}
		}
	}
	return cancel, read, found
}

// cancelNotifier is a store that notices, live and without a consumer,
// what is published on a lane and on its run's own events
// (events.JetStreamStore).
type cancelNotifier interface {
	CancelNotices(ctx context.Context, run string, lane int) (<-chan struct{}, error)
}

// DefaultCancelPoll is WorkerConfig.CancelPoll's default.
const DefaultCancelPoll = 10 * time.Second

// cancelNotices follows job's lane and run for cancel notices until ctx is
// done; nil when the store has none or they cannot be followed (then
// watchCancel watches the logs instead).
func (w *Worker) cancelNotices(ctx context.Context, log *slog.Logger, job events.Job) <-chan struct{} {
	n, ok := w.cfg.Store.(cancelNotifier)
	if !ok {
		return nil
	}
	ch, err := n.CancelNotices(ctx, job.Run, job.Lane)
	if errors.Is(err, events.ErrPermissionDenied) {
		w.noNotices.Do(func() {
			log.Warn("the server does not let this worker follow the events as they are published; each attempt watches its lane with a consumer instead (grant the worker's user subscribe on sy.ev.*.*, docs/DEPLOY.md)", "err", err)
		})
		return nil
	}
	if err != nil {
		log.Debug("cannot follow the run's cancel notices; watching its logs instead", "err", err)
		return nil
	}
	return ch
}

// awaitCancel calls onCancel for the first cancel event of job's lane or
// of its whole run that a read of both logs finds, reading them at every
// notice and every CancelPoll (for a notice missed while the connection
// was down), until ctx is done. A notice alone never cancels: a
// publication the stream refused is noticed too. And a notice can arrive
// before the stream has stored what it notices, so after one the logs are
// read again, more and more slowly, for up to noticeConfirm.
func (w *Worker) awaitCancel(ctx context.Context, log *slog.Logger, job events.Job, notices <-chan struct{}, onCancel func(events.Envelope)) {
	poll := w.cfg.CancelPoll
	if poll <= 0 {
		poll = DefaultCancelPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	confirm := time.NewTimer(0)
	confirm.Stop()
	defer confirm.Stop()
	var (
		until time.Time     // reading again after a notice until then
		gap   time.Duration // the next wait before reading again
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-notices:
			until, gap = time.Now().Add(noticeConfirm), noticeRetryMin
		case <-confirm.C:
		case <-t.C:
		}
		if env, _, ok := w.recordedCancel(ctx, log, job); ok {
			onCancel(env)
			return
		}
		if time.Now().Before(until) {
			confirm.Reset(gap)
			gap = min(2*gap, noticeRetryMax)
		}
	}
}

// After a notice the logs are read again after noticeRetryMin, doubling
// up to noticeRetryMax, for noticeConfirm: the stream stores a cancel
// within milliseconds of publishing it, or refused it.
const (
	noticeRetryMin = 5 * time.Millisecond
	noticeRetryMax = 500 * time.Millisecond
	noticeConfirm  = 10 * time.Second
)

// laneWatcher is a store that can watch one lane and the run-level events
// of a run (events.JetStreamStore and MemoryStore can): watchCancel then
// reads only those, instead of every event of a panel once per lane.
type laneWatcher interface {
	WatchLane(ctx context.Context, run string, lane int, after uint64) (<-chan events.Envelope, error)
}

// watchCancel calls onCancel for the first cancel event of job's lane or
// of its whole run past sequence after (recordedCancel read the ones up to
// it; 0 reads the run's events from the start), until ctx is done. A
// watch that ends early is resumed after the last event seen.
func (w *Worker) watchCancel(ctx context.Context, log *slog.Logger, job events.Job, after uint64, onCancel func(events.Envelope)) {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	watch := func() (<-chan events.Envelope, error) { return w.cfg.Store.Watch(ctx, job.Run, after) }
	if lw, ok := w.cfg.Store.(laneWatcher); ok {
		watch = func() (<-chan events.Envelope, error) { return lw.WatchLane(ctx, job.Run, job.Lane, after) }
	}
	for {
		ch, err := watch()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.retrying(log, "cannot watch the run for cancellation; retrying", "err", err, "in", bo.Current())
		} else {
			for env := range ch {
				after = env.Seq
				if env.Type == events.TypeCancel && (env.Lane == job.Lane || env.Lane == events.RunLane) {
					onCancel(env)
					return
				}
				bo.Reset()
			}
			if ctx.Err() != nil {
				return
			}
			w.retrying(log, "run watch ended; watching again", "after", after, "in", bo.Current())
		}
		if !bo.Wait(ctx) {
			return
		}
	}
}

// runnerConfig is the runner's configuration for job: the RunnerConfig
// hook's (or the zero Config) with the worker's environment and clock
// where unset.
func (w *Worker) runnerConfig(job events.Job) runner.Config {
	var c runner.Config
	if w.cfg.RunnerConfig != nil {
		c = w.cfg.RunnerConfig(job)
	}
	if c.Env == nil {
		c.Env = w.cfg.Env
	}
	if c.Now == nil {
		c.Now = w.cfg.Now
	}
	// A worker's snapshots are telemetry for logs and the console; the
	// claim and the receipt, not the snapshot, decide what happens to
	// the attempt. So the facts that only say a child is done wait for
	// the next write (runner.Config.LazySettledFacts).
	c.LazySettledFacts = true
	return c
}
