package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// Backoff of the worker's retries.
const (
	retryMin = 50 * time.Millisecond
	retryMax = 2 * time.Second
	// ackTimeout bounds one Ack, Nak or Term.
	ackTimeout = 5 * time.Second
)

// report is a report of kind about job by worker, stamped now.
func (w *Worker) report(job events.Job, kind events.ReportKind, worker string) events.Report {
	return events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: kind,
		WorkerID: worker, Time: w.cfg.Now()}
}

// publish publishes r, retrying every failure but an invalid or oversized
// report with backoff until ctx is done. The message id is deterministic
// (events.ReportMsgID), so a retry of a report that was stored is stored
// once. Every failed try is logged; a report given up on is logged as an
// error and the error returned.
func (w *Worker) publish(ctx context.Context, log *slog.Logger, r events.Report) error {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	for try := 1; ; try++ {
		seq, err := w.cfg.Queue.PublishReport(ctx, r)
		if err == nil {
			log.Debug("report published", "kind", r.Kind, "seq", seq, "tries", try)
			return nil
		}
		if errors.Is(err, events.ErrInvalid) || errors.Is(err, events.ErrTooLarge) {
			log.Error("report refused; not published", "kind", r.Kind, "err", err)
			return err
		}
		if ctx.Err() != nil {
			log.Error("report not published before shutdown", "kind", r.Kind, "tries", try, "err", err)
			return err
		}
		w.retrying(log, "report not published; retrying", "kind", r.Kind, "try", try, "err", err, "in", bo.Current())
		if !bo.Wait(ctx) {
			log.Error("report not published before shutdown", "kind", r.Kind, "tries", try, "err", err)
			return ctx.Err()
		}
	}
}

// finalCtx is ctx for the end of an execution: it stays live until
// ShutdownGrace after ctx is done, so a stopping worker still reports
// what its signalled children did.
func (w *Worker) finalCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(w.cfg.ShutdownGrace, cancel) })
	return fctx, func() {
		stop()
		cancel()
	}
}

// ack, nak and term end a delivery, each bounded by ackTimeout even after
// ctx is done. Their failures are logged: the claim, not the job, decides
// whether an execution runs, so a job that comes back is handled again.
func (w *Worker) ack(ctx context.Context, log *slog.Logger, d *events.Delivery) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := d.Ack(actx); err != nil {
		log.Warn("job ack failed; a redelivery finds the claim released", "err", err)
	}
}

func (w *Worker) nak(ctx context.Context, log *slog.Logger, d *events.Delivery, delay time.Duration) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := d.Nak(actx, delay); err != nil {
		log.Warn("job nak failed; it comes back after the ack wait", "err", err)
	}
}

func (w *Worker) term(ctx context.Context, log *slog.Logger, d *events.Delivery, reason string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := d.Term(actx, reason); err != nil {
		log.Warn("job term failed; a redelivery is handled from the claim", "err", err)
	}
}
