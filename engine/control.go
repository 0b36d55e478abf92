package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// Control inputs travel as events.Control messages on the run's control
// subject (events.ControlSubject, inside the reports stream), so the engine
// that drives the run reads them in one ordered sequence with the workers'
// reports and is still the only writer of lane events. Any process connected
// to the same NATS can send them; with no engine running they wait in the
// stream until one starts.
//
// Each sender checks the lane against the log first, so a verdict for a
// lane that is not inspecting is refused at once (ErrNotWaiting), and names
// the execution it answers. The engine applies a control only if the lane
// still waits for it on that execution; otherwise it is logged and dropped,
// which also makes a control delivered again to a resumed session
// harmless.

// Verdict sends the parent's inspection verdict on lane's started writer
// (switchyard inspect): clear lets the lane go on to its next authorized
// attempt, unsafe stops it. evidenceRef (required) names what the parent
// inspected; it is the parent's attestation, not something the engine
// verifies. The lane must be inspecting.
//
// Verdict names no reviewed state: the next writer starts from the
// checkout's HEAD, and its launch and the run report say so. VerdictFrom
// names one.
func (e *Engine) Verdict(ctx context.Context, run string, lane int, state events.VerdictState, evidenceRef string) error {
	return e.VerdictFrom(ctx, run, lane, state, evidenceRef, "")
}

// VerdictFrom is Verdict naming the reviewed state.
//
// from, with a clear verdict, names the reviewed state the lane's next
// writer starts from: a commit or snapshot ref that must resolve to a
// commit in the run's repository (git rev-parse --verify <from>^{commit});
// the verdict records the commit it resolved to, so the ref cannot move
// afterwards. Without it the next writer starts from the checkout's HEAD,
// and its launch and the run report say so.
func (e *Engine) VerdictFrom(ctx context.Context, run string, lane int, state events.VerdictState, evidenceRef, from string) error {
	_, err := e.RecordVerdict(ctx, run, lane, state, evidenceRef, from)
	return err
}

// RecordVerdict is VerdictFrom, and also says in words what the lane does
// once the verdict applies (see AfterVerdict): the next writer and where
// it starts only when the lane's next decision launches one.
func (e *Engine) RecordVerdict(ctx context.Context, run string, lane int, state events.VerdictState, evidenceRef, from string) (string, error) {
	if state != events.VerdictClear && state != events.VerdictUnsafe {
		return "", invalidf("verdict state %q: want clear or unsafe", state)
	}
	if strings.TrimSpace(evidenceRef) == "" {
		return "", invalidf("a verdict needs an evidence ref")
	}
	if from != "" && state != events.VerdictClear {
		return "", invalidf("--from %q goes with a clear verdict only: an unsafe verdict stops the lane, so no writer starts from it", from)
	}
	l, err := e.waitingLane(ctx, run, lane, machines.StateInspecting)
	if err != nil {
		return "", err
	}
	r, _, err := e.load(ctx, run)
	if err != nil {
		return "", err
	}
	v := &events.Verdict{State: state, EvidenceRef: evidenceRef, By: e.cfg.Actor}
	if from != "" {
		commit, err := resolveCommit(ctx, r.Created.Cwd, from)
		if err != nil {
			return "", err
		}
		v.FromRef, v.FromCommit = from, commit
	}
	next := AfterVerdict(r, lane, state, from)
	return next, e.sendControl(ctx, events.Control{
		Kind: events.ControlVerdict, Run: run, Lane: lane, ExecutionID: l.Dispatch.ExecutionID, Verdict: v,
	})
}

// OperationDone settles lane's pending operation as complete with result
// (see OperationSettle): the operation must have been validated and begun.
// ref points at its product (a commit, a check log).
func (e *Engine) OperationDone(ctx context.Context, run string, lane int, result events.OperationResult, ref string) error {
	return e.OperationSettle(ctx, run, lane, result, false, ref, "")
}

// Cancel sends a cancellation of one lane, or of the whole run when lane is
// events.RunLane (switchyard cancel). The engine records cancel on every
// lane that is not final; a worker running the lane's attempt sees the
// cancel in the store and signals its child, whose cancelled receipt is
// recorded (as an audit: the lane is already final) before run-final. reason
// is required.
func (e *Engine) Cancel(ctx context.Context, run string, lane int, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return invalidf("a cancel needs a reason")
	}
	r, _, err := e.load(ctx, run)
	if err != nil {
		return err
	}
	if lane != events.RunLane && (lane < 0 || lane >= len(r.Lanes)) {
		return fmt.Errorf("run %s lane %d: %w", run, lane, ErrUnknownLane)
	}
	if r.Closed != nil {
		return &LaneError{Run: run, Lane: events.RunLane, Err: ErrFinal}
	}
	if lane != events.RunLane {
		if s := r.Lanes[lane].State; s.Final() {
			return &LaneError{Run: run, Lane: lane, State: s, Want: "running or waiting", Err: ErrFinal}
		}
	}
	return e.sendControl(ctx, events.Control{
		Kind: events.ControlCancel, Run: run, Lane: lane, Cancel: &events.Cancel{Reason: reason, By: e.cfg.Actor},
	})
}

// waitingLane loads run and returns lane if it is in state want.
func (e *Engine) waitingLane(ctx context.Context, run string, lane int, want machines.State) (machines.LaneRecord, error) {
	r, _, err := e.load(ctx, run)
	if err != nil {
		return machines.LaneRecord{}, err
	}
	if lane < 0 || lane >= len(r.Lanes) {
		return machines.LaneRecord{}, fmt.Errorf("run %s lane %d: %w", run, lane, ErrUnknownLane)
	}
	l := r.Lanes[lane]
	switch {
	case l.State.Final():
		return l, &LaneError{Run: run, Lane: lane, State: l.State, Want: string(want), Err: ErrFinal}
	case l.State != want || l.Dispatch == nil:
		return l, &LaneError{Run: run, Lane: lane, State: l.State, Want: string(want), Err: ErrNotWaiting}
	}
	return l, nil
}

// sendControl stamps and publishes c.
func (e *Engine) sendControl(ctx context.Context, c events.Control) error {
	c.ID, c.Time = e.cfg.NewID(), e.cfg.Now()
	if _, err := e.ctl.PublishControl(ctx, c); err != nil {
		return fmt.Errorf("send %s for run %s: %w", c.Kind, c.Run, err)
	}
	e.log.Info("control sent", "kind", c.Kind, "run", c.Run, "lane", c.Lane)
	return nil
}

// control applies one control input to the run, if the lane still waits
// for it.
func (d *driver) control(ctx context.Context, c events.Control) error {
	drop := func(why string) error {
		d.log.Info("control dropped", "kind", c.Kind, "lane", c.Lane, "execution", c.ExecutionID, "why", why)
		return nil
	}
	if c.Run != d.run {
		return drop("for another run")
	}
	if c.Kind == events.ControlCancel && c.Lane == events.RunLane {
		if d.r.Cancel != nil {
			return drop("run already cancelled")
		}
		return d.appendEvent(ctx, events.RunLane, *c.Cancel)
	}
	if c.Lane < 0 || c.Lane >= len(d.r.Lanes) {
		return drop("no such lane")
	}
	l := d.r.Lanes[c.Lane]
	if l.State.Final() {
		return drop("lane is " + string(l.State))
	}
	switch c.Kind {
	case events.ControlCancel:
		return d.appendEvent(ctx, c.Lane, *c.Cancel)
	case events.ControlVerdict:
		if l.State != machines.StateInspecting || l.Dispatch.ExecutionID != c.ExecutionID {
			return drop("lane is not inspecting this execution")
		}
		if v := c.Verdict; v.FromCommit != "" {
			// The sender resolved it; the commit must still be there
			// for the next writer's worktree.
			if got, err := resolveCommit(ctx, d.r.Created.Cwd, v.FromCommit); err != nil || got != v.FromCommit {
				return drop(fmt.Sprintf("the reviewed state %s (commit %s) is not a commit in %s", v.FromRef, v.FromCommit, d.r.Created.Cwd))
			}
		}
		return d.appendEvent(ctx, c.Lane, *c.Verdict)
	case events.ControlOperationDone:
		if l.State != machines.StateAwaitingOperation || l.Dispatch.ExecutionID != c.ExecutionID || l.Request == nil || l.Request.Decision.Operation == nil {
			return drop("lane is not awaiting an operation of this execution")
		}
		op, want := c.Operation.Operation, l.Request.Decision.Operation
		if op.Kind != want.Kind || op.TaskID != want.TaskID || op.CheckpointID != want.CheckpointID {
			return drop("operation does not match the request")
		}
		if l.Pending == nil || c.Operation.Digest != l.Pending.Digest || c.Operation.Head != l.Pending.Head {
			return drop("no pending operation with this digest and HEAD")
		}
		return d.appendEvent(ctx, c.Lane, *c.Operation)
	case events.ControlOperationStep:
		if l.State != machines.StateAwaitingOperation || l.Dispatch.ExecutionID != c.ExecutionID || l.Request == nil || l.Request.Decision.Operation == nil {
			return drop("lane is not awaiting an operation of this execution")
		}
		op, want := c.Step.Operation, l.Request.Decision.Operation
		if op.Kind != want.Kind || op.TaskID != want.TaskID || op.CheckpointID != want.CheckpointID {
			return drop("operation does not match the request")
		}
		if l.Pending != nil {
			return drop("the operation is already begun")
		}
		if c.Step.Step == events.OperationBegun && (l.Validated == nil || l.Validated.Digest != c.Step.Digest || l.Validated.Head != c.Step.Head) {
			return drop("begin of a digest that is not the last validated")
		}
		return d.appendEvent(ctx, c.Lane, *c.Step)
	case events.ControlRecover:
		if l.Dispatch == nil || l.Dispatch.ExecutionID != c.ExecutionID || !awaitsRecovery(d.r, c.Lane) {
			return drop("lane is not awaiting a recovery of this execution")
		}
		return d.recover(ctx, c.Lane, c)
	}
	return drop("unknown kind")
}
