package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// NativeJob is a native attempt handed to the parent harness: it runs the
// descriptor or alias with its own subagent primitive, writes the final
// response to Paths.Output, and reports the explicit host terminal metadata
// with NativeReport (switchyard native report).
type NativeJob struct {
	ExecutionID  string        `json:"executionId"`
	Run          string        `json:"run"`
	Lane         int           `json:"lane"`
	AttemptIndex int           `json:"attemptIndex"`
	Descriptor   string        `json:"descriptor"`
	Parent       policy.Parent `json:"parent"`
	Mode         policy.Access `json:"mode"`
	// Agent is the shipped Claude agent that covers the descriptor,
	// pstack-<stem>-<effort>, from the same coverage that routed it native
	// (a claude parent's descriptor lane); dispatch through it. Unset for
	// an alias (inherit-parent, auto: the parent's own model and effort)
	// and on a codex parent (spawn_agent with Model and Effort).
	Agent string `json:"agent,omitempty"`
	// Model and Effort are the descriptor's, after read-time
	// normalization (a versioned Claude pin becomes its family alias);
	// unset for an alias.
	Model  string        `json:"model,omitempty"`
	Effort policy.Effort `json:"effort,omitempty"`
	// Contract is the run's worker contract (always legacy: a strict
	// native lane ends unsupported and is never handed out).
	Contract policy.Contract `json:"contract"`
	// Paths: Prompt is the prompt to hand the subagent (the prepared
	// worker contract, the assignment, then the task), Output where its
	// final response goes, Cwd where it works (a fresh worktree for
	// writers), Artifact the distinct output artifact of a read-only lane
	// (the one file its subagent may write). Receipt and Progress are
	// reserved names; a native lane has no runner receipt.
	Paths events.Paths `json:"paths"`
	// TimeoutMs is the run's per-attempt deadline; 0 means none.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// ReportCommand is the command that records the attempt's end.
	ReportCommand string `json:"reportCommand"`
}

// nativeWorker is the worker id of native claims and reports.
func nativeWorker(parent policy.Parent) string { return "native:" + string(parent) }

// NativeNext hands the parent harness its next native job, claiming its
// execution id first so a job is handed out at most once, and publishes the
// claimed report that moves the lane to running. A job whose execution is
// already claimed (delivered again because an earlier NativeNext failed
// before acknowledging it) is never handed out again: it is reported
// abandoned, so its lane finishes the attempt failed and moves on. With wait it blocks
// until a job arrives or ctx is done; without, it looks for
// Config.NativePoll and returns nil, nil when there is none.
func (e *Engine) NativeNext(ctx context.Context, parent policy.Parent, wait bool) (*NativeJob, error) {
	if _, err := policy.ParseParent(string(parent)); err != nil {
		return nil, err
	}
	subject := events.NativeJobSubject(string(parent))
	cons, err := e.cfg.Queue.Jobs(ctx, subject, events.JobOptions{})
	if err != nil {
		return nil, fmt.Errorf("native jobs for %s: %w", parent, err)
	}
	pctx := ctx
	if !wait {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, e.cfg.NativePoll)
		defer cancel()
	}
	worker := nativeWorker(parent)
	for {
		d, err := cons.Next(pctx)
		switch {
		case err != nil && !wait && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			return nil, nil
		case errors.Is(err, events.ErrInvalid):
			e.log.Warn("malformed native job dropped", "subject", subject, "err", err)
			continue
		case err != nil:
			return nil, fmt.Errorf("next native job for %s: %w", parent, err)
		}
		job := d.Job
		if why, err := e.nativeNotWanted(ctx, job); err != nil {
			_ = d.Nak(ctx, 0)
			return nil, err
		} else if why != "" {
			if err := e.dropUnwantedNative(ctx, d, why); err != nil {
				return nil, err
			}
			continue
		}
		lease, err := e.cfg.Claims.Claim(ctx, job.ExecutionID, worker, e.cfg.NativeLeaseTTL)
		if errors.Is(err, events.ErrClaimed) {
			if err := e.dropClaimedNative(ctx, d, worker); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			_ = d.Nak(ctx, 0)
			return nil, fmt.Errorf("claim native execution %s: %w", job.ExecutionID, err)
		}
		rep := events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: events.ReportClaimed,
			WorkerID: worker, Lease: &events.LeaseInfo{TTLMs: lease.TTL.Milliseconds(), Revision: lease.Revision}, Time: e.cfg.Now()}
		claimSeq, err := e.cfg.Queue.PublishReport(ctx, rep)
		if err != nil {
			return nil, fmt.Errorf("report native claim of %s: %w", job.ExecutionID, err)
		}
		// The claimed report is the hand-out: the engine applies the run's
		// reports and controls in stream order, so a cancel sent before it
		// (recorded or still on its way to the engine) wins, and the job is
		// not handed out.
		if why, err := e.cancelledBefore(ctx, job, claimSeq); err != nil {
			_ = d.Nak(ctx, 0)
			return nil, err
		} else if why != "" {
			if _, err := e.cfg.Claims.Release(ctx, lease); err != nil {
				e.log.Warn("release the claim of a cancelled native job", "execution", job.ExecutionID, "err", err)
			}
			if err := e.dropUnwantedNative(ctx, d, why); err != nil {
				return nil, err
			}
			continue
		}
		if err := d.Ack(ctx); err != nil {
			return nil, fmt.Errorf("ack native job %s: %w", job.ExecutionID, err)
		}
		e.log.Info("native job handed out", "execution", job.ExecutionID, "run", job.Run, "lane", job.Lane)
		return e.nativeJob(job), nil
	}
}

// nativeJob is what the parent needs of job to run it natively.
func (e *Engine) nativeJob(job events.Job) *NativeJob {
	nj := &NativeJob{
		ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, AttemptIndex: job.AttemptIndex,
		Descriptor: job.Descriptor, Parent: job.Parent, Mode: job.Mode, Contract: job.Contract,
		Paths: job.Paths, TimeoutMs: job.TimeoutMs,
		ReportCommand: fmt.Sprintf("switchyard native report --execution %s --status <outcome> [--process-started true|false] [--evidence REF]", job.ExecutionID),
	}
	if nj.Contract == "" {
		nj.Contract = policy.ContractLegacy
	}
	if job.Model != "" { // a descriptor, not an alias
		nj.Model, nj.Effort = job.Model, job.Effort
		// policy.Resolve routes a descriptor natively only to its own
		// provider's parent, so the parent decides: Claude's Agent tool
		// takes the rolling alias of a versioned pin and a named agent.
		if job.Parent == policy.ParentClaude {
			if alias, ok := policy.VersionedClaudeAlias(job.Model); ok {
				nj.Model = alias
			}
			nj.Agent, _ = e.cfg.Policy.ClaudeNativeAgent(job.Model, job.Effort)
		}
	}
	return nj
}

// nativeNotWanted says why job's lane no longer wants it ("" when it
// does): its run is unknown or final, the run or the lane was cancelled, the
// lane is final, or it no longer waits for this execution.
func (e *Engine) nativeNotWanted(ctx context.Context, job events.Job) (string, error) {
	r, _, err := e.load(ctx, job.Run)
	switch {
	case errors.Is(err, ErrUnknownRun):
		return "its run is not in the store", nil
	case errors.Is(err, ErrInconsistentLog):
		return "its run's log does not fold, so no engine drives it", nil
	case err != nil:
		return "", fmt.Errorf("check native job %s against its run: %w", job.ExecutionID, err)
	case r.Closed != nil:
		return "its run is final", nil
	case r.Cancel != nil:
		return "its run was cancelled", nil
	case job.Lane < 0 || job.Lane >= len(r.Lanes):
		return "its run has no such lane", nil
	}
	l := r.Lanes[job.Lane]
	switch {
	case l.State.Final():
		return "its lane is " + string(l.State), nil
	case l.Dispatch == nil || l.Dispatch.ExecutionID != job.ExecutionID:
		return "its lane no longer waits for this execution", nil
	}
	return "", nil
}

// cancelledBefore says whether a cancel of job's lane or run was sent
// before the reports-stream sequence seq ("" if not): recorded in the log,
// or still among the run's controls for the engine to apply.
func (e *Engine) cancelledBefore(ctx context.Context, job events.Job, seq uint64) (string, error) {
	if why, err := e.nativeNotWanted(ctx, job); err != nil || why != "" {
		return why, err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ch, err := e.cfg.Queue.SubscribeReports(sctx, job.Run, 0)
	if err != nil {
		return "", fmt.Errorf("read the controls of run %s: %w", job.Run, err)
	}
	for rd := range ch {
		if rd.Seq >= seq {
			return "", nil
		}
		if rd.Err == nil {
			continue
		}
		c, err := events.DecodeControl(rd.Raw)
		if err != nil || c.Kind != events.ControlCancel || c.Run != job.Run {
			continue
		}
		if c.Lane == events.RunLane {
			return "its run was cancelled", nil
		}
		if c.Lane == job.Lane {
			return "its lane was cancelled", nil
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("read the controls of run %s: the stream ended before the native claim", job.Run)
}

// dropUnwantedNative removes a native job whose lane no longer wants it:
// it is never handed out, so no parent runs a subagent for nothing.
func (e *Engine) dropUnwantedNative(ctx context.Context, d *events.Delivery, why string) error {
	job := d.Job
	e.log.Info("native job not handed out", "execution", job.ExecutionID, "run", job.Run, "lane", job.Lane, "why", why)
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("ack unwanted native job %s: %w", job.ExecutionID, err)
	}
	return nil
}

// dropClaimedNative handles a native job delivered again after its
// execution was claimed. A NativeNext returns a job only after its
// acknowledgement succeeded, so the earlier call failed before the parent
// could be sure to have it; the parent may still have seen it, so it is
// never handed out again: a claim still held is abandoned and reported
// abandoned (the attempt finishes failed and the lane moves on), and the
// job is acknowledged.
func (e *Engine) dropClaimedNative(ctx context.Context, d *events.Delivery, worker string) error {
	job := d.Job
	e.log.Warn("native job delivered again after its claim; it is not handed out again", "execution", job.ExecutionID)
	lease, err := e.cfg.Claims.Inspect(ctx, job.ExecutionID)
	if err != nil {
		return fmt.Errorf("inspect native claim %s: %w", job.ExecutionID, err)
	}
	if lease.State == events.LeaseHeld {
		if _, err := e.cfg.Claims.Abandon(ctx, lease, worker); err != nil && !errors.Is(err, events.ErrLeaseLost) {
			return fmt.Errorf("abandon native claim %s: %w", job.ExecutionID, err)
		}
		rep := events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: events.ReportAbandoned,
			WorkerID: worker, Time: e.cfg.Now()}
		if _, err := e.cfg.Queue.PublishReport(ctx, rep); err != nil {
			return fmt.Errorf("report native execution %s abandoned: %w", job.ExecutionID, err)
		}
	}
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("ack redelivered native job %s: %w", job.ExecutionID, err)
	}
	return nil
}

// NativeReport records the end of a native execution from the parent's
// explicit host terminal metadata (the seed: a native event may be recorded
// only from it; nothing verifies it, the parent attests it). status is the
// policy outcome the host showed, processStarted the host's statement (nil:
// none), evidenceRef its structured record. The execution must be the
// current native dispatch of a lane that is launching or running.
func (e *Engine) NativeReport(ctx context.Context, executionID string, status policy.Outcome, processStarted *bool, evidenceRef string) error {
	if err := events.ValidateExecutionID(executionID); err != nil {
		return invalidf("execution id: %v", err)
	}
	if !status.Valid() {
		return invalidf("status %q is not a policy outcome", status)
	}
	r, lane, err := e.findNative(ctx, executionID)
	if err != nil {
		return err
	}
	if status == policy.OutcomeComplete {
		// A complete attempt delivered its final response; without it
		// the lane would be complete with nothing to show.
		out := r.Lanes[lane].Dispatch.Paths.Output
		if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
			return invalidf("status complete needs the attempt's final response at its output path %s, and there is no such file; write the subagent's final response there first, or report the status the attempt ended with", out)
		}
	}
	rep := events.Report{ExecutionID: executionID, Run: r.ID, Lane: lane, Kind: events.ReportFinished,
		WorkerID: nativeWorker(r.Created.Parent), Time: e.cfg.Now(),
		Host: &events.HostMetadata{Status: status, ProcessStarted: processStarted, EvidenceRef: evidenceRef}}
	if _, err := e.cfg.Queue.PublishReport(ctx, rep); err != nil {
		return fmt.Errorf("report native execution %s: %w", executionID, err)
	}
	if l, err := e.cfg.Claims.Inspect(ctx, executionID); err == nil && l.State == events.LeaseHeld {
		if _, err := e.cfg.Claims.Release(ctx, l); err != nil {
			e.log.Warn("release native claim", "execution", executionID, "err", err)
		}
	}
	return nil
}

// findNative finds the non-final run and lane whose current dispatch is the
// native execution id, and checks it has not ended.
func (e *Engine) findNative(ctx context.Context, id string) (*machines.Run, int, error) {
	ids, err := e.cfg.Store.Runs(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	for k := len(ids) - 1; k >= 0; k-- {
		last, err := e.cfg.Store.Last(ctx, ids[k], events.RunLane)
		if err != nil || last.Type == events.TypeRunFinal {
			continue
		}
		r, _, err := e.load(ctx, ids[k])
		if err != nil {
			continue
		}
		for i, l := range r.Lanes {
			if l.Dispatch == nil || l.Dispatch.ExecutionID != id {
				continue
			}
			if l.Dispatch.Route != policy.RouteNative {
				return nil, 0, fmt.Errorf("execution %s of run %s lane %d is external: %w", id, r.ID, i, ErrUnknownExecution)
			}
			if l.State != machines.StateLaunching && l.State != machines.StateRunning {
				return nil, 0, &LaneError{Run: r.ID, Lane: i, State: l.State, Want: "launching or running", Err: ErrNotWaiting}
			}
			return r, i, nil
		}
	}
	return nil, 0, fmt.Errorf("execution %s: %w", id, ErrUnknownExecution)
}
