package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// settleWait bounds how long an interrupted self-contained run lets its
// engine record what its stopped workers reported.
const settleWait = 10 * time.Second

// selfDrive is a self-contained run's own engine and workers, each under
// its own context: an interrupt stops the workers first and lets the
// engine record what they report before it stops too.
type selfDrive struct {
	engineCtx, workerCtx    context.Context
	stopEngine, stopWorkers context.CancelFunc
	engines, workers        sync.WaitGroup
}

// newSelfDrive returns a selfDrive whose contexts outlive ctx (an
// interrupt ends ctx; the drive is stopped explicitly).
func newSelfDrive(ctx context.Context) *selfDrive {
	d := &selfDrive{}
	base := context.WithoutCancel(ctx)
	d.engineCtx, d.stopEngine = context.WithCancel(base)
	d.workerCtx, d.stopWorkers = context.WithCancel(base)
	return d
}

// haltWorkers stops the workers and waits for them: each running CLI got
// SIGTERM and each stopped attempt's report is stored.
func (d *selfDrive) haltWorkers() {
	d.stopWorkers()
	d.workers.Wait()
}

// stop stops the workers, then the engine, and waits for both.
func (d *selfDrive) stop() {
	d.haltWorkers()
	d.stopEngine()
	d.engines.Wait()
}

// interruptSelfContained stops an interrupted self-contained run's drive
// in order: its workers first (each running CLI gets SIGTERM, its
// process group, and the stopped attempt's report, a cancelled receipt,
// is stored), then, once its engine has recorded those reports and the
// decisions they lead to (engine.WaitSettled, up to settleWait), the
// engine. It then says, from the run's log, what each lane that was not
// final became. before is the run's status when the interrupt came. It
// returns the run's status once the drive stopped (ok false when it could
// not be read), which run --json prints.
func interruptSelfContained(ctx context.Context, stderr io.Writer, conn *engineConn, flags string, eng *engine.Engine,
	runID string, before engine.RunStatus, drive *selfDrive) (after engine.RunStatus, ok bool) {
	fmt.Fprintf(stderr, "switchyard run: interrupted; stopping this run's workers, then its engine once it has recorded how their attempts ended (up to %v; interrupt again to stop at once)\n", settleWait)
	drive.haltWorkers()
	sctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), settleWait, fmt.Errorf("not within %v", settleWait))
	again, stopAgain := context.WithCancelCause(sctx)
	go func() {
		select {
		case <-laterSignals(ctx):
			stopAgain(errors.New("interrupted again"))
		case <-again.Done():
		}
	}()
	settleErr := eng.WaitSettled(again, runID)
	if settleErr != nil && again.Err() != nil {
		settleErr = context.Cause(again)
	}
	stopAgain(nil)
	cancel()
	drive.stop()

	resume := fmt.Sprintf("  resume it with `switchyard serve%s` (it drives every unfinished run; workers: `switchyard worker --provider P%s`), then follow it with `switchyard status --run %s --watch%s`\n",
		flags, flags, runID, flags)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	after, err := eng.Status(cctx, runID)
	if err != nil {
		fmt.Fprintf(stderr, "switchyard run: stopped this run's workers and engine, but cannot read run %s afterwards (%v); it stays stored in %s: check it with `switchyard status --run %s%s`\n",
			runID, err, conn.dataDir, runID, flags)
		fmt.Fprint(stderr, resume)
		return engine.RunStatus{}, false
	}
	lines := interruptLines(before, after)
	if after.Final {
		fmt.Fprintf(stderr, "switchyard run: run %s is final now (%s); nothing to resume; print its report with `switchyard report --run %s%s`\n",
			runID, after.Summary, runID, flags)
	} else {
		fmt.Fprintf(stderr, "switchyard run: run %s is not final and stays stored in %s\n", runID, conn.dataDir)
	}
	if len(lines.ended) > 0 {
		fmt.Fprintf(stderr, "  each running CLI was sent SIGTERM; this run's engine recorded, before it stopped:\n")
		for _, l := range lines.ended {
			fmt.Fprintf(stderr, "    %s\n", l)
		}
	}
	if len(lines.unrecorded) > 0 {
		why := "it did not settle"
		if settleErr != nil {
			why = settleErr.Error()
		}
		fmt.Fprintf(stderr, "  not recorded yet: %s: each CLI was sent SIGTERM, but this run's engine did not record how its attempt ended (%s); status shows these lanes %s until a serve resumes the run and records it (the attempt never runs again)\n",
			strings.Join(lines.unrecorded, ", "), why, machines.StateRunning)
	}
	if len(lines.decide) > 0 {
		fmt.Fprintf(stderr, "  next step not decided: %s: the attempt's end is recorded; the engine decides what follows when the run resumes\n", strings.Join(lines.decide, ", "))
	}
	if len(lines.queued) > 0 {
		fmt.Fprintf(stderr, "  not started: %s: the job stays queued and a worker starts it when the run resumes\n", strings.Join(lines.queued, ", "))
	}
	if len(lines.parent) > 0 {
		fmt.Fprintf(stderr, "  waiting for the parent: %s: they keep waiting; the answer is applied when the run resumes\n", strings.Join(lines.parent, ", "))
	}
	if !after.Final {
		fmt.Fprint(stderr, resume)
	}
	return after, true
}

// interruptLanes sorts the lanes that were not final when a run was
// interrupted by what they are after its drive stopped.
type interruptLanes struct {
	ended      []string // final now: "lane N D: STATE (REASON)"
	unrecorded []string // still running an external attempt in the log
	decide     []string // terminal: the next decision is due
	queued     []string // launching: the job is queued, nothing started
	parent     []string // waiting for the parent (native, verdict, operation, recovery)
}

// interruptLines compares before (at the interrupt) with after (once the
// drive stopped).
func interruptLines(before, after engine.RunStatus) interruptLanes {
	var out interruptLanes
	for i, l := range after.Lanes {
		if i < len(before.Lanes) && before.Lanes[i].State.Final() {
			continue
		}
		desc := fmt.Sprintf("lane %d", l.Lane)
		if l.Descriptor != "" {
			desc += " " + l.Descriptor
		}
		external := l.Route == policy.RouteExternal
		switch {
		case l.State.Final():
			d := fmt.Sprintf("%s: %s", desc, l.State)
			if l.Reason != "" {
				d += " (" + l.Reason + ")"
			}
			out.ended = append(out.ended, d)
		case l.State == machines.StateRunning && external:
			out.unrecorded = append(out.unrecorded, desc)
		case l.State == machines.StateTerminal:
			out.decide = append(out.decide, desc)
		case l.State == machines.StateLaunching && external:
			out.queued = append(out.queued, desc)
		case l.WaitingFor != engine.WaitNone && l.WaitingFor != engine.WaitWorker && l.WaitingFor != engine.WaitEngine:
			out.parent = append(out.parent, desc)
		}
	}
	return out
}
