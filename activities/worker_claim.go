package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// workerEvent is one decision of a worker, observed by tests through
// Worker.trace.
type workerEvent struct {
	Kind      workerEventKind
	Execution string
}

// workerEventKind names a worker decision.
type workerEventKind string

const (
	evClaimed          workerEventKind = "claimed"           // claimed report published; the runner starts
	evFinished         workerEventKind = "finished"          // finished report published
	evAcked            workerEventKind = "acked"             // claim released and job acknowledged
	evAbandonedOwn     workerEventKind = "abandoned-own"     // own claim abandoned: nothing (or no receipt) to report
	evAbandonedStale   workerEventKind = "abandoned-stale"   // another worker's stale lease abandoned and reported
	evWaitLive         workerEventKind = "waiting-live"      // a live lease elsewhere: job returned for later
	evWatching         workerEventKind = "watching"          // another holder's lease is watched for renewal or staleness
	evAlreadyReleased  workerEventKind = "already-released"  // redelivery of a finished execution removed
	evAlreadyAbandoned workerEventKind = "already-abandoned" // redelivery of an abandoned execution removed
	evLeaseLost        workerEventKind = "lease-lost"        // lease taken over while running; no finished report
	evCancelSignalled  workerEventKind = "cancel-signalled"  // a cancel event reached the runner
	evBusy             workerEventKind = "busy"              // redelivered while this worker runs it
	evReturned         workerEventKind = "returned"          // job returned without a decision (shutdown, errors)
	evCapacityPut      workerEventKind = "capacity-put"      // a provider's capacity report stored (Execution: the provider)
	evRefused          workerEventKind = "refused"           // a job that does not match its recorded launch: reported, removed, nothing run
)

func (w *Worker) emit(kind workerEventKind, id string) {
	if w.trace != nil {
		w.trace(workerEvent{Kind: kind, Execution: id})
	}
}

// handle takes one delivery from provider's queue to its end: exactly one
// of Ack, Nak or Term. takeCtx is the slot's: it ends with ctx or when the
// worker drains, and bounds what may still lead to a start (the claim's
// retries).
func (w *Worker) handle(ctx, takeCtx context.Context, provider policy.Provider, d *events.Delivery) {
	job := d.Job
	id := job.ExecutionID
	log := w.log.With("execution", id, "run", job.Run, "lane", job.Lane, "delivery", d.NumDelivered)
	if !w.markActive(id) {
		// An InProgress went missing and the job came back while this
		// worker still runs it. Keep it queued: if this worker dies, the
		// redelivery is what lets another one report the attempt abandoned.
		log.Info("job redelivered while this worker runs it; returned for later")
		w.nak(ctx, log, d, w.cfg.LeaseTTL)
		w.emit(evBusy, id)
		return
	}
	defer w.unmarkActive(id)
	why, detail, err := w.verifyJob(ctx, provider, job)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Warn("cannot check the job against its recorded launch; job returned", "err", err)
		}
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, id)
		return
	case why != "":
		w.refuse(ctx, log, d, why, detail)
		return
	}
	if w.Draining() {
		// Not claimed yet: nothing started, and a draining worker takes
		// no new attempt. Another worker takes it.
		log.Info("worker draining: job returned unclaimed")
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, id)
		return
	}
	lease, err := w.claim(ctx, takeCtx, log, d)
	switch {
	case err == nil:
		w.inFlight.Add(1)
		defer w.inFlight.Add(-1)
		w.execute(ctx, log, d, lease)
	case errors.Is(err, events.ErrClaimed):
		w.claimedBefore(ctx, takeCtx, log, d)
	case errors.Is(err, events.ErrInvalid):
		log.Error("execution cannot be claimed; job removed", "err", err)
		w.observe(func(o Observer) { o.ClaimFailed(job.Provider) })
		w.term(ctx, log, d, "unclaimable execution")
	case errors.Is(err, events.ErrPermissionDenied):
		// Refused, so not stored: nothing started under this try. The job
		// goes back, not away (ErrInvalid's Term is for an execution no
		// worker can claim): the refusal is of this worker's connection
		// (its role or identity), and a worker allowed to claim runs it.
		// It comes back after a lease TTL, so a refused worker does not
		// spin on it meanwhile.
		log.Error("claim refused: this worker may not claim the execution; nothing started, job returned", "err", err)
		w.observe(func(o Observer) { o.ClaimFailed(job.Provider) })
		w.nak(ctx, log, d, w.cfg.LeaseTTL)
		w.emit(evReturned, id)
	case errors.Is(err, errClaimUnknownDraining):
		// The claim may have been stored, and the execution stays marked
		// unconfirmed; nothing started under it, and nothing will here.
		// Whoever gets the job next claims it, or, if this worker's
		// create was stored, gets ErrClaimed and goes to claimedBefore:
		// there a held lease whose revision does not move for longer than
		// its TTL (events.LeaseStale; nothing renews a claim before its
		// attempt starts) is abandoned, reported abandoned and its job
		// removed, never run (the engine's API proxy lets another worker
		// abandon exactly such a lease).
		log.Warn("worker draining: claim outcome unknown, not retried; job returned", "err", err)
		w.observe(func(o Observer) { o.ClaimFailed(job.Provider) })
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, id)
	default:
		if ctx.Err() == nil {
			log.Warn("could not claim the execution; job returned", "err", err)
			w.observe(func(o Observer) { o.ClaimFailed(job.Provider) })
		}
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, id)
	}
}

// errClaimUnknownDraining: a claim attempt failed without an answer and
// the worker drains, so it was not tried again; the claim may have been
// stored.
var errClaimUnknownDraining = errors.New("claim not retried while draining")

// claim creates the execution's claim. A failure that leaves the outcome
// unknown (no answer: a timeout, no responders, a lost connection) marks
// the execution unconfirmed and is retried with backoff until ctx is done,
// or until takeCtx is (the worker drains): then it returns
// errClaimUnknownDraining, and nothing starts. A claim found held by this
// worker and never renewed, after such a failure, is this worker's own
// (worker ids are unique to a process, and nothing starts before a claim
// is known): it is adopted, unless the worker drains by then. It returns
// events.ErrClaimed when the execution was claimed before, and at once
// events.ErrInvalid for an unclaimable execution and
// events.ErrPermissionDenied for a claim the claims store refused. While
// it retries, d's ack deadline is kept fresh (keepDelivered), so a long
// outage of the claims store alone does not send the job to another slot
// or worker meanwhile.
func (w *Worker) claim(ctx, takeCtx context.Context, log *slog.Logger, d *events.Delivery) (events.Lease, error) {
	id := d.Job.ExecutionID
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	var keep func()
	defer func() {
		if keep != nil {
			keep()
		}
	}()
	unknown := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", errClaimUnknownDraining, err)
	}
	for {
		actx, cancel := context.WithTimeout(ctx, w.opTimeout())
		l, err := w.cfg.Claims.Claim(actx, id, w.cfg.WorkerID, w.cfg.LeaseTTL)
		cancel()
		switch {
		case err == nil:
			w.takeUnconfirmed(id)
			return l, nil
		case errors.Is(err, events.ErrClaimed):
			if !w.takeUnconfirmed(id) {
				return events.Lease{}, err
			}
			cur, ierr := w.inspect(takeCtx, id)
			if ierr != nil {
				w.markUnconfirmed(id)
				if takeCtx.Err() != nil {
					return events.Lease{}, unknown(ierr)
				}
				return events.Lease{}, ierr
			}
			if cur.State == events.LeaseHeld && cur.WorkerID == w.cfg.WorkerID && cur.Renewals == 0 {
				if takeCtx.Err() != nil {
					// Ours, but found only after draining began: no
					// start now. Left held, it goes stale for the next
					// worker, as an unknown claim does.
					w.markUnconfirmed(id)
					return events.Lease{}, unknown(err)
				}
				log.Info("adopted this worker's own unconfirmed claim")
				return cur, nil
			}
			return events.Lease{}, err
		case errors.Is(err, events.ErrInvalid):
			return events.Lease{}, err
		case errors.Is(err, events.ErrPermissionDenied):
			// A definite refusal: the engine's API proxy answered that
			// this connection may not write the claim, and never
			// forwarded it, so this try stored nothing. Not retried: it
			// would be refused again. An earlier try's unknown outcome
			// stays marked (the refusal says nothing about that try).
			//
			// Nothing else counts as definite here. A publish the NATS
			// server refuses for permissions reaches the caller only as a
			// timeout (the violation arrives on the connection, not as
			// the request's answer); nats.ErrPermissionViolation may be
			// a refused subscription to the reply inbox, after a publish
			// that was stored; and a timeout or "no responders" may
			// follow a stored claim.
			return events.Lease{}, err
		}
		// The create may have been stored: remember that it may be ours.
		w.markUnconfirmed(id)
		if takeCtx.Err() != nil {
			// Draining (or stopping): no new try, so nothing that may
			// lead to a start is sent after draining began.
			return events.Lease{}, unknown(err)
		}
		w.retrying(log, "claim failed; retrying", "err", err, "in", bo.Current())
		if keep == nil {
			keep = w.keepDelivered(ctx, log, d)
		}
		if !bo.Wait(takeCtx) {
			return events.Lease{}, unknown(err)
		}
	}
}

// claimedBefore handles a delivery whose execution was already claimed:
// the execution may have started, so it is never started here. A released
// claim means it finished and was reported: the job is removed. An
// abandoned claim gets its abandoned report (re-published under the
// abandoning worker's id, so it is stored once) and the job is removed. A
// held claim is watched: renewed means live, and the job goes back to wait
// a lease TTL; unchanged for longer than its TTL by this worker's clock
// means stale, and this worker abandons it (one racer wins), reports it
// abandoned and removes the job. When takeCtx ends (the worker drains)
// the watch stops and the job goes back for another worker to watch.
func (w *Worker) claimedBefore(ctx, takeCtx context.Context, log *slog.Logger, d *events.Delivery) {
	id := d.Job.ExecutionID
	cur, err := w.inspect(takeCtx, id)
	if err != nil {
		switch {
		case ctx.Err() != nil:
		case takeCtx.Err() != nil:
			log.Info("worker draining: claimed execution not watched; job returned")
		default:
			log.Warn("claimed execution cannot be inspected; job returned", "err", err)
		}
		w.nak(ctx, log, d, w.cfg.LeaseTTL)
		w.emit(evReturned, id)
		return
	}
	first, firstSeen := cur, w.cfg.Now()
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		switch cur.State {
		case events.LeaseReleased:
			if !w.reportRedelivered(ctx, log, d) {
				return
			}
			log.Info("execution already finished and reported; job removed", "holder", cur.WorkerID)
			w.term(ctx, log, d, "execution already finished")
			w.emit(evAlreadyReleased, id)
			return
		case events.LeaseAbandoned:
			by := cur.AbandonedBy
			if events.ValidateWorkerID(by) != nil {
				by = w.cfg.WorkerID
			}
			if err := w.publish(ctx, log, w.report(d.Job, events.ReportAbandoned, by)); err != nil {
				w.nak(ctx, log, d, 0)
				w.emit(evReturned, id)
				return
			}
			if !w.reportRedelivered(ctx, log, d) {
				return
			}
			log.Info("execution already abandoned; job removed", "abandonedBy", by)
			w.term(ctx, log, d, "execution abandoned")
			w.emit(evAlreadyAbandoned, id)
			return
		}
		// Held.
		if cur.Revision != first.Revision {
			log.Info("execution runs elsewhere (its lease was renewed); job returned for later", "holder", cur.WorkerID)
			w.nak(ctx, log, d, cur.TTL)
			w.emit(evWaitLive, id)
			return
		}
		if events.LeaseStale(first, firstSeen, cur, w.cfg.Now()) {
			actx, cancel := context.WithTimeout(ctx, w.opTimeout())
			_, err := w.cfg.Claims.Abandon(actx, cur, w.cfg.WorkerID)
			cancel()
			switch {
			case err == nil:
				log.Warn("lease went stale: execution abandoned, never to run again", "holder", cur.WorkerID, "ttl", cur.TTL)
				if err := w.publish(ctx, log, w.report(d.Job, events.ReportAbandoned, w.cfg.WorkerID)); err != nil {
					// The claim says abandoned: the next delivery publishes the report.
					w.nak(ctx, log, d, 0)
					w.emit(evReturned, id)
					return
				}
				w.term(ctx, log, d, "lease stale: execution abandoned")
				w.emit(evAbandonedStale, id)
				return
			case errors.Is(err, events.ErrLeaseLost):
				// Renewed, released or abandoned by another worker first.
			default:
				w.retrying(log, "abandon failed; looking again", "err", err)
			}
		}
		if tick == nil {
			tick = time.NewTicker(w.watchInterval(cur.TTL))
			w.emit(evWatching, id)
		}
		select {
		case <-takeCtx.Done():
			if ctx.Err() == nil {
				log.Info("worker draining: stopped watching the execution's lease; job returned", "holder", cur.WorkerID)
			}
			w.nak(ctx, log, d, 0)
			w.emit(evReturned, id)
			return
		case <-tick.C:
		}
		if err := d.InProgress(ctx); err != nil && ctx.Err() == nil {
			log.Debug("in-progress failed", "err", err)
		}
		next, err := w.inspectOnce(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				w.retrying(log, "inspect failed; watching on", "err", err)
			}
			continue
		}
		cur = next
	}
}

// keepDelivered extends d's ack deadline every third of the ack wait
// until the returned stop is called (it waits for the last extension), for
// a delivery that no heartbeat keeps yet. The caller acknowledges d only
// after stop.
func (w *Worker) keepDelivered(ctx context.Context, log *slog.Logger, d *events.Delivery) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(w.cfg.AckWait/3, 5*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := d.InProgress(ctx); err != nil && ctx.Err() == nil {
				log.Debug("in-progress failed while claiming", "err", err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// watchInterval is how often a held lease is looked at: a quarter of its
// TTL, and often enough to keep this delivery's ack deadline fresh.
func (w *Worker) watchInterval(ttl time.Duration) time.Duration {
	return max(min(ttl/4, w.cfg.AckWait/3), 5*time.Millisecond)
}

// inspectOnce is one bounded Inspect.
func (w *Worker) inspectOnce(ctx context.Context, id string) (events.Lease, error) {
	actx, cancel := context.WithTimeout(ctx, w.opTimeout())
	defer cancel()
	return w.cfg.Claims.Inspect(actx, id)
}

// inspect reads a claim, retrying transient failures until ctx is done.
// ErrNotFound and ErrInvalid are returned at once.
func (w *Worker) inspect(ctx context.Context, id string) (events.Lease, error) {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	for {
		l, err := w.inspectOnce(ctx, id)
		if err == nil || errors.Is(err, events.ErrNotFound) || errors.Is(err, events.ErrInvalid) || ctx.Err() != nil {
			return l, err
		}
		w.retrying(w.log, "inspect failed; retrying", "execution", id, "err", err, "in", bo.Current())
		if !bo.Wait(ctx) {
			return events.Lease{}, ctx.Err()
		}
	}
}

// reportRedelivered reports d as a job delivered again after its execution
// ended, so the engine records it for audit. If the report cannot be
// published the job is returned (the next delivery reports it) and false
// is returned.
func (w *Worker) reportRedelivered(ctx context.Context, log *slog.Logger, d *events.Delivery) bool {
	r := w.report(d.Job, events.ReportRedelivered, w.cfg.WorkerID)
	r.JobSeq, r.Delivery = d.Seq, d.NumDelivered
	if err := w.publish(ctx, log, r); err != nil {
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, d.Job.ExecutionID)
		return false
	}
	return true
}
