package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// driver drives one run: it is the run's only writer inside this engine.
// Everything it knows comes from the run's log (reload) and from its own
// appends, which it folds into r as soon as the store accepts them, so r is
// always the log as stored and every decision is taken from exactly the
// state Replay rebuilds.
type driver struct {
	e    *Engine
	late *lateReports // nil: late reports are not recorded
	hub  *reportHub   // nil: each session reads its run's reports itself
	run  string
	log  *slog.Logger
	r    *machines.Run
	// envs is the run's log as folded into r (for its run index entry).
	envs []events.Envelope

	// reportAfter is the highest reports-stream sequence recorded on any
	// claim, finish or audit event: every report up to it was handled, so
	// a resumed subscription starts after it.
	reportAfter uint64
	// handled is the highest sequence this session handled, controls
	// included (they are recorded without one); run-final records it.
	handled uint64
	// published holds the executions whose job this session published;
	// every other launching execution is published again (same id).
	published map[string]bool
	// settled holds executions of cancelled lanes whose worker reported
	// their end after the cancel (recorded as audit).
	settled map[string]bool
	// cancelledAt is when each cancelled lane's cancel was recorded.
	cancelledAt map[int]time.Time
	// launched holds every execution a launch or continue recorded.
	launched map[string]bool
	// finished holds every execution a finish recorded.
	finished map[string]bool
	// reviewed holds each lane's latest clear verdict since its latest
	// launch: the reviewed state its next writer starts from.
	reviewed map[int]*events.Verdict
	// junk counts this session's junk reports of the run per audit reason
	// (junkReasons): the first junkRecorded of each are recorded one by
	// one, the later ones only as a count (see audit).
	junk map[events.AuditReason]int
	// staleReported is set once the run's stale-sheet audit is recorded.
	staleReported bool
	// unanswered is when the eligibility gate last waited in vain for a
	// provider's capacity report in this session.
	unanswered map[policy.Provider]time.Time
	// passReports holds the fresh capacity reports the eligibility gate
	// read during the current settle pass, by provider: the lanes a pass
	// launches together (a panel) are gated on one read of each
	// provider's report instead of one server round trip per lane.
	passReports map[policy.Provider]*policy.CapacityReport
	// batch holds the launches whose files are being prepared while
	// settle decides the run's lanes (nil outside that step).
	batch *launchBatch

	// firstFailure and lastFailure are when the first and the latest of
	// the sessions that failed since the run last made progress failed,
	// failures how many did, backoff the wait before the next one.
	firstFailure, lastFailure time.Time
	failures                  int
	backoff                   events.Backoff
}

// errConflict marks a session that lost an append race: reload at once.
var errConflict = errors.New("conflicting writer")

// drive runs sessions of one run until it is final or ctx is done. A
// session that fails is logged and followed by a fresh one, reloaded from
// the log, after a backoff (none after an append conflict). Once the run
// makes progress again, the pause is logged with its length.
func (e *Engine) drive(ctx context.Context, run string, hub *reportHub) {
	d := &driver{e: e, hub: hub, run: run, log: e.log.With("run", run), backoff: events.Backoff{Min: minBackoff, Max: maxBackoff}}
	if hub != nil {
		d.late = hub.late
	}
	for conflicts := 0; ; {
		err := d.session(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if errors.Is(err, errConflict) && conflicts < 10 {
			conflicts++
			d.log.Info("append conflict; reloading the run", "err", err)
			continue
		}
		conflicts = 0
		if errors.Is(err, ErrInconsistentLog) {
			d.log.Error("run log does not fold; the run is not driven", "err", err)
			return
		}
		d.lastFailure = time.Now()
		if d.failures == 0 {
			d.firstFailure = d.lastFailure
		}
		d.failures++
		d.log.Warn("run session failed; reloading", "err", err, "retryIn", d.backoff.Current())
		if !d.backoff.Wait(ctx) {
			return
		}
	}
}

// Backoff between failed sessions of a run.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// progressed notes that the run moved on (an append was stored, or an
// input was handled): after failed sessions it logs the pause (from the
// first failure to now) and how long sessions kept failing, and resets the
// backoff.
func (d *driver) progressed() {
	if d.failures == 0 {
		return
	}
	d.log.Warn("run resumed after a pause", "paused", time.Since(d.firstFailure).Round(time.Millisecond),
		"failingFor", d.lastFailure.Sub(d.firstFailure).Round(time.Millisecond), "failedSessions", d.failures)
	d.failures = 0
	d.backoff.Reset()
}

// session reloads the run, brings it to rest, then applies its reports and
// controls one by one until the run is closed. It returns nil once the run
// is final.
func (d *driver) session(ctx context.Context) error {
	if err := d.reload(ctx); err != nil {
		return err
	}
	if d.r.Closed != nil {
		d.e.indexFinal(ctx, d.r, d.envs)
		d.closed()
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reports, err := d.subscribe(sctx)
	if err != nil {
		return fmt.Errorf("subscribe to reports: %w", err)
	}
	for {
		settle, err := d.settle(ctx)
		if err != nil {
			return err
		}
		if d.r.Closed != nil {
			d.log.Info("run final")
			d.e.indexFinal(ctx, d.r, d.envs)
			d.closed()
			return nil
		}
		if err := d.wait(ctx, reports, settle); err != nil {
			return err
		}
		d.progressed()
	}
}

// subscribe reads the run's reports after reportAfter: from the engine's
// watch of every run's reports when it runs, else from the run's own
// consumer.
func (d *driver) subscribe(ctx context.Context) (<-chan events.ReportDelivery, error) {
	if d.hub != nil {
		return d.hub.subscribe(ctx, d.run, d.reportAfter)
	}
	return d.e.cfg.Queue.SubscribeReports(ctx, d.run, d.reportAfter)
}

// closed hands the final run to the late-report catch-up with the mark
// its log as folded here carries: the catch-up loads the run only when a
// report past the mark is stored (one direct read of the newest report,
// instead of a load of the whole log per run). A mark lower than the log's
// (another writer's audits) only costs a catch-up that finds nothing.
func (d *driver) closed() {
	if d.late == nil {
		return
	}
	d.late.check(d.run, handledMark(d.envs))
}

// wait handles the next report or control, or returns after settle (when
// positive) so that a pending cancel grace is looked at again.
func (d *driver) wait(ctx context.Context, reports <-chan events.ReportDelivery, settle time.Duration) error {
	var timer <-chan time.Time
	if settle > 0 {
		t := time.NewTimer(settle)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer:
		return nil
	case rd, ok := <-reports:
		if !ok {
			return errors.New("report subscription ended")
		}
		if rd.Seq <= d.reportAfter {
			return nil
		}
		if err := d.handle(ctx, rd); err != nil {
			return err
		}
		d.handled = max(d.handled, rd.Seq)
		return nil
	}
}

// reload folds the run's log afresh and rebuilds the driver's bookkeeping.
func (d *driver) reload(ctx context.Context) error {
	r, envs, err := d.e.load(ctx, d.run)
	if err != nil {
		return err
	}
	d.r, d.reportAfter, d.handled = r, 0, 0
	d.envs = envs
	d.published, d.settled, d.cancelledAt, d.launched = map[string]bool{}, map[string]bool{}, map[int]time.Time{}, map[string]bool{}
	d.finished = map[string]bool{}
	d.reviewed, d.staleReported = map[int]*events.Verdict{}, false
	for _, env := range envs {
		d.note(env)
	}
	return nil
}

// note updates the bookkeeping for one stored envelope.
func (d *driver) note(env events.Envelope) {
	d.reportAfter = max(d.reportAfter, env.ReportSeq())
	switch p := env.Payload.(type) {
	case events.Launch:
		d.launched[p.ExecutionID] = true
		delete(d.reviewed, env.Lane)
	case events.Continue:
		d.launched[p.ExecutionID] = true
		delete(d.reviewed, env.Lane)
	case events.Finish:
		d.finished[p.ExecutionID] = true
	case events.Verdict:
		if p.State == events.VerdictClear {
			v := p
			d.reviewed[env.Lane] = &v
		}
	case events.Audit:
		if p.Report != nil && p.Report.Kind != events.ReportClaimed {
			d.settled[p.Report.ExecutionID] = true
		}
		if p.Reason == events.AuditStaleSheet {
			d.staleReported = true
		}
	case events.Cancel:
		if env.Lane != events.RunLane {
			d.cancelledAt[env.Lane] = env.Time
		}
	}
}

// appendEvent records payload on lane (events.RunLane for the run subject)
// with the fold's expected last sequence, folds the stored envelope into r
// and updates the bookkeeping. A conflict returns errConflict: another
// writer moved the subject, so r is stale and the session must reload.
func (d *driver) appendEvent(ctx context.Context, lane int, p events.Payload) error {
	// Launches decided before this event are recorded before it.
	if err := d.flushLaunches(ctx); err != nil {
		return err
	}
	expected := d.r.Seq
	if lane != events.RunLane {
		expected = d.r.Lanes[lane].Seq
	}
	env := events.NewEnvelope(d.run, lane, d.e.cfg.Now(), p)
	seq, err := d.e.cfg.Store.Append(ctx, env, expected)
	if errors.Is(err, events.ErrConflict) {
		return fmt.Errorf("append %s on %s: %w: %w", env.Type, env.Subject(), errConflict, err)
	}
	if err != nil {
		return fmt.Errorf("append %s on %s: %w", env.Type, env.Subject(), err)
	}
	env.Seq = seq
	if err := d.r.Apply(env); err != nil {
		// The store accepted what the fold refuses: a bug, or a log
		// written by someone else. Reload to find out.
		return fmt.Errorf("fold own %s: %w", env.Type, err)
	}
	d.envs = append(d.envs, env)
	d.note(env)
	d.progressed()
	d.log.Debug("recorded", "type", env.Type, "lane", lane, "seq", seq)
	return nil
}

// settle brings the run to rest: every transition that is due without new
// input is recorded, in this order, so a session resumed after a crash at
// any point finishes what the previous one started:
//
//  0. a sheet with versioned Claude pins gets its stale-sheet audit, once
//     per run;
//  1. a usage-exhausted outcome whose group is not yet recorded as
//     exhausted gets its group-exhausted event (before any decision reads
//     the run's groups);
//  2. after a run-level cancel, every non-final lane is cancelled;
//  3. every lane in created or terminal state is decided;
//  4. every launching execution whose job this session has not published
//     is published (again: the same execution id, so a job queued before
//     a crash is deduplicated, and the worker's create-only claim keeps it
//     from ever running twice), except a strict-contract native one, which
//     is finished unsupported and settled again;
//  5. once every lane is final, and every cancelled lane's running
//     attempt has reported or CancelGrace has passed since its cancel,
//     the execution directories an engine prepared but died before
//     launching are removed, and run-final is recorded.
//
// It returns how long to wait before settling again for a pending cancel
// grace (0: nothing pending).
func (d *driver) settle(ctx context.Context) (time.Duration, error) {
	if d.r.Closed != nil {
		return 0, nil
	}
	clear(d.passReports)
	if err := d.reportStaleSheet(ctx); err != nil {
		return 0, err
	}
	for i := range d.r.Lanes {
		if err := d.recordExhaustion(ctx, i); err != nil {
			return 0, err
		}
	}
	if c := d.r.Cancel; c != nil {
		for i := range d.r.Lanes {
			if !d.r.Lanes[i].State.Final() {
				if err := d.appendEvent(ctx, i, events.Cancel{Reason: c.Reason, By: c.By}); err != nil {
					return 0, err
				}
			}
		}
	}
	if err := d.decideAll(ctx); err != nil {
		return 0, err
	}
	ended := false
	for i := range d.r.Lanes {
		l := d.r.Lanes[i]
		if d.unsupported(l) {
			if err := d.appendEvent(ctx, i, unsupportedFinish(l)); err != nil {
				return 0, err
			}
			ended = true
			continue
		}
		if l.State == machines.StateLaunching && !d.published[l.Dispatch.ExecutionID] {
			if err := d.publish(ctx, i); err != nil {
				return 0, err
			}
		}
	}
	if ended {
		// The lane is terminal: decide it (stop) now, not at the next
		// report, which may never come.
		return d.settle(ctx)
	}
	if !d.r.Final() {
		return 0, nil
	}
	if wait := d.cancelGrace(); wait > 0 {
		return wait, nil
	}
	d.removeUnlaunched(ctx)
	rf := finalSummary(d.r, d.envs)
	rf.ReportsThrough = max(d.reportAfter, d.handled)
	return 0, d.appendEvent(ctx, events.RunLane, rf)
}

// decideAll decides every lane that is due (step 3 of settle), preparing
// the files of the launches it decides side by side (see launch), and
// records them all before it returns.
func (d *driver) decideAll(ctx context.Context) error {
	d.batch = &launchBatch{sem: make(chan struct{}, maxParallelPrepare)}
	defer func() {
		// On an error, preparations still running finish before the
		// session reloads; what they made is never launched.
		if d.batch != nil {
			for _, pl := range d.batch.pending {
				<-pl.done
			}
		}
		d.batch = nil
	}()
	for i := range d.r.Lanes {
		if err := d.decide(ctx, i); err != nil {
			return err
		}
	}
	return d.flushLaunches(ctx)
}

// cancelGrace returns how long run-final must still wait for the report of
// an attempt that was running when its lane was cancelled.
func (d *driver) cancelGrace() time.Duration {
	var wait time.Duration
	now := d.e.cfg.Now()
	for i, l := range d.r.Lanes {
		if l.State != machines.StateCancelled || l.Claim == nil || d.settled[l.Claim.ExecutionID] {
			continue
		}
		at, ok := d.cancelledAt[i]
		if !ok {
			continue
		}
		if left := at.Add(d.e.cfg.CancelGrace).Sub(now); left > wait {
			wait = left
		}
	}
	return wait
}

// recordExhaustion appends group-exhausted for lane i's latest outcome if it
// is usage-exhausted and its group is not yet exhausted. Only a lane still
// in terminal state can lack it (the decision that moves the lane on comes
// after this step), and its dispatch is the exhausted execution.
func (d *driver) recordExhaustion(ctx context.Context, i int) error {
	l := d.r.Lanes[i]
	n := len(l.History)
	if l.State != machines.StateTerminal || n == 0 || l.Dispatch == nil {
		return nil
	}
	last := l.History[n-1]
	if last.ParentOperation != nil || last.Status != policy.OutcomeUsageExhausted {
		return nil
	}
	group := l.Policy.Attempts[last.AttemptIndex].ExhaustionGroup
	for _, g := range d.r.Exhausted {
		if g == group {
			return nil
		}
	}
	return d.appendEvent(ctx, events.RunLane, events.GroupExhausted{Provider: group, FromLane: i, ExecutionID: l.Dispatch.ExecutionID})
}

// reportStaleSheet records, once per run, that the run's sheet pins
// versioned Claude IDs which read-time normalization replaced with their
// family alias (the seed: "once per parent run, report that the persisted
// sheet is stale"). The log is the once: a resumed session sees the audit
// and records nothing.
func (d *driver) reportStaleSheet(ctx context.Context) error {
	if d.staleReported {
		return nil
	}
	d.staleReported = true // a sheet that does not parse has nothing to report
	sheet, err := policy.ParseSheet(d.r.Created.Sheet, d.e.cfg.Policy)
	if err != nil {
		return nil
	}
	notice := policy.StaleSheetNotice(sheet.VersionedClaudePins())
	if notice == "" {
		return nil
	}
	d.log.Warn("stale model sheet", "notice", notice)
	if err := d.audit(ctx, events.RunLane, events.Audit{Reason: events.AuditStaleSheet, Detail: notice}); err != nil {
		d.staleReported = false
		return err
	}
	return nil
}
