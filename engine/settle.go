package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// WaitSettled waits until the engine driving run (in this process or
// another) has recorded every worker report stored for run when
// WaitSettled is called, and has nothing left to do with them: no lane
// runs an external attempt, and no lane waits in terminal for the
// decision that follows a finish; and once every lane is final, run-final
// is recorded. A run that is final is settled.
//
// A self-contained `switchyard run` calls it after stopping its own
// workers, whose stopped attempts' reports are then stored, and before it
// stops its engine, so those attempts are recorded (and their lanes
// stopped) rather than left running in the log. Controls are not waited
// for: the engine records them without a report sequence. It returns
// ctx's error if ctx ends first; the run's log is then as far as it got.
func (e *Engine) WaitSettled(ctx context.Context, run string) error {
	last, err := e.cfg.Queue.LastReportSeq(ctx, run)
	if err != nil {
		return fmt.Errorf("run %s: newest report: %w", run, err)
	}
	r, envs, err := e.load(ctx, run)
	if err != nil {
		return err
	}
	mark := handledMark(envs)
	target, err := e.lastWorkerReport(ctx, run, mark, last)
	if err != nil {
		return err
	}
	var after uint64
	if n := len(envs); n > 0 {
		after = envs[n-1].Seq
	}
	if settled(r, mark, target) {
		return nil
	}
	ch, err := e.cfg.Store.Watch(ctx, run, after)
	if err != nil {
		return fmt.Errorf("watch run %s: %w", run, err)
	}
	for env := range ch {
		if err := r.Apply(env); err != nil {
			return fmt.Errorf("run %s: %w: %w", run, ErrInconsistentLog, err)
		}
		mark = max(mark, env.ReportSeq())
		if settled(r, mark, target) {
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("watch run %s ended before the run settled", run)
}

// lastWorkerReport is the sequence of run's newest report in (mark, last]
// that is not a control (0: none): the reports the log must record before
// the run is settled.
func (e *Engine) lastWorkerReport(ctx context.Context, run string, mark, last uint64) (uint64, error) {
	if last <= mark {
		return 0, nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := e.cfg.Queue.SubscribeReports(sctx, run, mark)
	if err != nil {
		return 0, fmt.Errorf("run %s: read reports: %w", run, err)
	}
	var target uint64
	for rd := range ch {
		if rd.Err != nil {
			if _, err := events.DecodeControl(rd.Raw); err == nil {
				if rd.Seq >= last {
					return target, nil
				}
				continue
			}
		}
		target = rd.Seq
		if rd.Seq >= last {
			return target, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("run " + run + ": the reports ended before the newest one")
}

// settled reports whether r has recorded its reports through target
// (mark is the highest report sequence its log records) and no lane
// still runs an external attempt or awaits the decision after a finish;
// a run whose lanes are all final is settled once run-final is recorded.
func settled(r *machines.Run, mark, target uint64) bool {
	if r.Closed != nil {
		return true
	}
	if mark < target {
		return false
	}
	open := false
	for _, l := range r.Lanes {
		switch {
		case l.State == machines.StateTerminal:
			return false
		case l.State == machines.StateRunning && l.Dispatch != nil && l.Dispatch.Route == policy.RouteExternal:
			return false
		}
		open = open || !l.State.Final()
	}
	// Every lane final: run-final is due.
	return open
}
