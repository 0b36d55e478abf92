package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// Reports that reach a run after it is final.
//
// A run's driver stops once it records run-final, but a report can still
// arrive: the job of a finished attempt delivered again, a worker's report
// retried after a long partition, a cancelled attempt's receipt after its
// grace. Such a report changes nothing, and it is still recorded, as an
// audit event on the run subject, so every delivery stays explained.
//
// run-final records how far its driver read the run's reports
// (RunFinal.ReportsThrough), and every audit recorded after it names its
// report's sequence, so the log itself says which reports are handled. A
// catch-up of a final run reads the reports past that mark and records one
// audit each; appends carry the run subject's expected sequence, so two
// catch-ups (or two engines) never record a report twice. Catch-ups run:
//
//   - when a driver closes its run (reports stored before run-final that
//     the driver did not read);
//   - when the engine's watch of every run's reports (reportHub) sees one
//     for a run it knows is final (the watch starts before the store is
//     listed, so no report falls between the two);
//   - at start, for every final run whose newest report is past its mark
//     (reports stored while no engine ran, or a catch-up a crash cut
//     short).
type lateReports struct {
	e *Engine

	mu      sync.Mutex
	known   map[string]bool   // runs known final
	checks  map[string]uint64 // start-up checks: final run -> mark from its last run-level event
	pending map[string]bool   // runs queued for a catch-up
	queue   []string
	wake    chan struct{}
}

func newLateReports(e *Engine) *lateReports {
	return &lateReports{e: e, known: map[string]bool{}, checks: map[string]uint64{},
		pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// final notes that run is final and queues a catch-up of it. It is a
// no-op on a nil receiver (an Engine that is not running).
func (l *lateReports) final(run string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.known[run] = true
	l.mu.Unlock()
	l.enqueue(run)
}

// check notes a run found final at start, with the mark read from its
// last run-level event; the loop catches it up if its newest report is
// past the mark.
func (l *lateReports) check(run string, mark uint64) {
	l.mu.Lock()
	l.known[run] = true
	l.checks[run] = mark
	l.mu.Unlock()
	l.signal()
}

func (l *lateReports) enqueue(run string) {
	l.mu.Lock()
	if !l.pending[run] {
		l.pending[run] = true
		l.queue = append(l.queue, run)
	}
	l.mu.Unlock()
	l.signal()
}

func (l *lateReports) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// seen notes that a report of run was stored: a run known final gets a
// catch-up (the engine's watch of every run's reports, reportHub, calls
// it for each report in stream order).
func (l *lateReports) seen(run string) {
	l.mu.Lock()
	known := l.known[run]
	l.mu.Unlock()
	if known {
		l.enqueue(run)
	}
}

// reportMarkWatcher is a Queue that can watch every run's reports without
// decoding them (events.JetStreamQueue).
type reportMarkWatcher interface {
	WatchReportMarks(ctx context.Context, after uint64) (<-chan events.ReportMark, error)
}

// watchMarks streams the marks of every run's reports after after: a
// queue that can leaves each report undecoded until the hub hands it to a
// driver (a final run's report is never decoded there).
func (l *lateReports) watchMarks(ctx context.Context, after uint64) (<-chan events.ReportMark, error) {
	if w, ok := l.e.cfg.Queue.(reportMarkWatcher); ok {
		return w.WatchReportMarks(ctx, after)
	}
	ch, err := l.e.cfg.Queue.WatchReports(ctx, after)
	if err != nil {
		return nil, err
	}
	out := make(chan events.ReportMark)
	go func() {
		defer close(out)
		for rd := range ch {
			select {
			case out <- events.MarkOf(rd):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// loop runs the start-up checks and the queued catch-ups, one at a time,
// until ctx is done. A catch-up that fails is queued again after a
// backoff.
func (l *lateReports) loop(ctx context.Context) {
	retry := events.Backoff{Min: lateRetryMin, Max: lateRetryMax}
	for {
		l.mu.Lock()
		var run string
		mark, isCheck := uint64(0), false
		for r, m := range l.checks {
			run, mark, isCheck = r, m, true
			delete(l.checks, r)
			break
		}
		if !isCheck && len(l.queue) > 0 {
			run = l.queue[0]
			l.queue = l.queue[1:]
			delete(l.pending, run)
		}
		l.mu.Unlock()
		if run == "" {
			select {
			case <-ctx.Done():
				return
			case <-l.wake:
				continue
			}
		}
		var err error
		if isCheck {
			var last uint64
			if last, err = l.e.cfg.Queue.LastReportSeq(ctx, run); err == nil && last > mark {
				err = l.catchUp(ctx, run)
			}
		} else {
			err = l.catchUp(ctx, run)
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrInconsistentLog) || errors.Is(err, ErrUnknownRun) {
			// Retrying cannot help; its driver reports it too.
			l.e.log.Error("late reports of a run whose log does not fold are not recorded", "run", run, "err", err)
			continue
		}
		if err != nil {
			l.e.log.Warn("late reports not recorded yet; retrying", "run", run, "err", err, "in", retry.Current())
			if !retry.Wait(ctx) {
				return
			}
			l.enqueue(run)
			continue
		}
		retry.Reset()
	}
}

// Backoff of the late-report watch's restarts and of failed catch-ups.
const (
	lateRetryMin = 50 * time.Millisecond
	lateRetryMax = 5 * time.Second
)

// catchUp records an audit event for every report of final run past its
// mark. A run that is not final is left to its driver.
func (l *lateReports) catchUp(ctx context.Context, run string) error {
	for conflicts := 0; ; conflicts++ {
		err := l.catchUpOnce(ctx, run)
		if !errors.Is(err, errConflict) || conflicts == 10 {
			return err
		}
	}
}

func (l *lateReports) catchUpOnce(ctx context.Context, run string) error {
	r, envs, err := l.e.load(ctx, run)
	if err != nil {
		return err
	}
	if r.Closed == nil {
		return nil
	}
	mark := handledMark(envs)
	end, err := l.e.cfg.Queue.LastReportSeq(ctx, run)
	if err != nil {
		return fmt.Errorf("last report of run %s: %w", run, err)
	}
	if end <= mark {
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reports, err := l.e.cfg.Queue.SubscribeReports(sctx, run, mark)
	if err != nil {
		return fmt.Errorf("subscribe to reports: %w", err)
	}
	expected := r.Seq
	for rd := range reports {
		env := events.NewEnvelope(run, events.RunLane, l.e.cfg.Now(), lateAudit(rd))
		seq, err := l.e.cfg.Store.Append(ctx, env, expected)
		if errors.Is(err, events.ErrConflict) {
			return fmt.Errorf("append late audit on %s: %w: %w", env.Subject(), errConflict, err)
		}
		if err != nil {
			return fmt.Errorf("append late audit on %s: %w", env.Subject(), err)
		}
		expected = seq
		l.e.log.Info("report after run-final recorded for audit", "run", run, "reportSeq", rd.Seq)
		if rd.Seq >= end {
			// The index entry and snapshot move on with the audits.
			if _, err := l.e.indexFromLog(ctx, run); err != nil {
				l.e.log.Warn("run index entry not updated after late audits; the run is read from its log", "run", run, "err", err)
			}
			return nil
		}
	}
	return fmt.Errorf("report subscription of run %s ended before sequence %d", run, end)
}

// handledMark is the highest reports-stream sequence a final run's log
// says is handled: run-final's ReportsThrough, or any event's report
// sequence.
func handledMark(envs []events.Envelope) uint64 {
	var mark uint64
	for _, env := range envs {
		mark = max(mark, env.ReportSeq())
	}
	return mark
}

// lateAudit is the audit of a delivery that reached its run after
// run-final.
func lateAudit(rd events.ReportDelivery) events.Audit {
	if rd.Err != nil {
		if c, err := events.DecodeControl(rd.Raw); err == nil {
			target := fmt.Sprintf("lane %d", c.Lane)
			if c.Lane == events.RunLane {
				target = "the run"
			}
			return events.Audit{Reason: events.AuditLateReport, ExecutionID: c.ExecutionID, ReportSeq: rd.Seq,
				Detail: fmt.Sprintf("%s control for %s arrived after run-final; not applied", c.Kind, target)}
		}
		return events.Audit{Reason: events.AuditMalformedReport, ReportSeq: rd.Seq, Detail: rd.Err.Error()}
	}
	if rd.Report.Kind == events.ReportRedelivered {
		return reportAudit(events.AuditRedeliveredJob, rd, redeliveredDetail(rd.Report))
	}
	return reportAudit(events.AuditLateReport, rd, "arrived after run-final")
}
