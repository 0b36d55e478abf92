package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// A lane awaiting a parent operation goes through the operation ledger
// (docs/CONTRACT.md) in its own log:
//
//	OperationValidate  op-validate against the lane's worktree and output;
//	                   records operation-step validated with the digest.
//	OperationBegin     revalidates, records operation-step begun: the
//	                   pending record. The parent performs the operation
//	                   only once it is recorded.
//	OperationDone      settles the pending record (complete or rejected)
//	                   only when its digest and HEAD still match.
//
// Validation and the checks run in the calling process, which must see
// the lane's worktree; the engine that drives the run applies the step
// only if the lane still waits for it in the same state.

// ErrOperationPending: the lane's operation was begun and is pending; it
// must be settled (operation done or reject), never begun again.
var ErrOperationPending = errors.New("engine: the lane's operation is already begun (pending)")

// OperationScope is the parent's own allowance for a handoff: the HEAD the
// worker was given and the files and check ids it may name.
type OperationScope struct {
	ExpectedHead string
	Files        []string
	Checks       []string
}

// operationRepo is the worktree a lane's worker wrote in, with symlinks in
// the engine's own recorded path (a data directory under a symlinked home)
// resolved: op-validate wants the canonical path. A path that does not
// resolve is passed on as recorded, for Validate to refuse by name.
func operationRepo(l machines.LaneRecord) string {
	dir := l.Dispatch.Paths.Cwd
	if l.Dispatch.Paths.Worktree != "" {
		dir = l.Dispatch.Paths.Worktree
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// awaitingOperation loads the lane and checks it awaits a recorded
// operation.
func (e *Engine) awaitingOperation(ctx context.Context, run string, lane int) (machines.LaneRecord, *policy.Operation, error) {
	l, err := e.waitingLane(ctx, run, lane, machines.StateAwaitingOperation)
	if err != nil {
		return l, nil, err
	}
	if l.Request == nil || l.Request.Decision.Operation == nil {
		return l, nil, fmt.Errorf("run %s lane %d: awaiting an operation that is not recorded: %w", run, lane, ErrInconsistentLog)
	}
	return l, l.Request.Decision.Operation, nil
}

// validateLane runs op-validate for the lane: its output file is the
// response, its worktree the repository, its request the task and
// checkpoint. The handoff must also be the one its receipt recorded.
func validateLane(ctx context.Context, l machines.LaneRecord, op *policy.Operation, s OperationScope) (*contract.Validation, error) {
	resp, err := contract.ReadResponse(l.Dispatch.Paths.Output)
	if err != nil {
		return nil, err
	}
	v, err := contract.Validate(ctx, contract.ValidateRequest{
		Response: resp, Repo: operationRepo(l), Task: op.TaskID, Checkpoint: op.CheckpointID,
		ExpectedHead: s.ExpectedHead, Files: s.Files, Checks: s.Checks,
	})
	if err != nil {
		return nil, err
	}
	if v.Operation != op.Kind {
		return nil, &contract.Refusal{Reason: fmt.Sprintf("the handoff asks for %s; the lane awaits %s", v.Operation, op.Kind)}
	}
	if h := l.Handoff; h != nil {
		files, checks := slices.Sorted(slices.Values(h.Files)), slices.Sorted(slices.Values(h.Checks))
		if h.Operation != v.Operation || !slices.Equal(files, validatedPaths(v)) || !slices.Equal(checks, v.Checks) {
			return nil, &contract.Refusal{Reason: "the output file's handoff is not the one the execution's receipt recorded"}
		}
	}
	return v, nil
}

func validatedPaths(v *contract.Validation) []string {
	out := make([]string, len(v.Files))
	for i, f := range v.Files {
		out[i] = f.Path
	}
	return out
}

func stepOf(l machines.LaneRecord, op *policy.Operation, kind events.OperationStepKind, nonce, by string, v *contract.Validation) events.OperationStep {
	return events.OperationStep{
		ExecutionID: l.Dispatch.ExecutionID, Step: kind, Nonce: nonce,
		Operation: policy.ParentOperation{Kind: op.Kind, TaskID: op.TaskID, CheckpointID: op.CheckpointID},
		Repo:      v.Repo, Head: v.Head, Digest: v.Digest, Files: validatedPaths(v), Checks: append([]string{}, v.Checks...), By: by,
	}
}

// OperationValidate validates the handoff of the lane awaiting an
// operation against its worktree (switchyard operation validate) and
// records the validated scope and digest in the run's log. A refused
// handoff is a *contract.Refusal and records nothing.
func (e *Engine) OperationValidate(ctx context.Context, run string, lane int, s OperationScope) (*contract.Validation, error) {
	l, op, err := e.awaitingOperation(ctx, run, lane)
	if err != nil {
		return nil, err
	}
	if l.Pending != nil {
		return nil, fmt.Errorf("run %s lane %d: %w (digest %s); settle it with operation done or reject", run, lane, ErrOperationPending, l.Pending.Digest)
	}
	v, err := validateLane(ctx, l, op, s)
	if err != nil {
		return nil, err
	}
	step := stepOf(l, op, events.OperationValidated, e.cfg.NewID(), e.cfg.Actor, v)
	err = e.sendControl(ctx, events.Control{Kind: events.ControlOperationStep, Run: run, Lane: lane,
		ExecutionID: l.Dispatch.ExecutionID, Step: &step})
	return v, err
}

// OperationBegin reserves the validated operation (switchyard operation
// begin): digest must be the lane's last validated digest, and the
// worktree must still validate to it at the same HEAD. It then waits up to
// wait for the engine to record the begun step: the operation is pending
// only once the log holds it, and only the parent whose step was recorded
// may perform it (a parent that lost a race gets ErrOperationPending).
func (e *Engine) OperationBegin(ctx context.Context, run string, lane int, digest string, wait time.Duration) (events.OperationStep, error) {
	l, op, err := e.awaitingOperation(ctx, run, lane)
	if err != nil {
		return events.OperationStep{}, err
	}
	if l.Pending != nil {
		return events.OperationStep{}, fmt.Errorf("run %s lane %d: %w (digest %s); settle it with operation done or reject", run, lane, ErrOperationPending, l.Pending.Digest)
	}
	val := l.Validated
	switch {
	case val == nil:
		return events.OperationStep{}, &contract.Refusal{Reason: fmt.Sprintf("run %s lane %d: no validated operation: run switchyard operation validate first", run, lane)}
	case val.Digest != digest:
		return events.OperationStep{}, &contract.Refusal{Reason: fmt.Sprintf("--digest %s is not the lane's last validated digest %s", digest, val.Digest)}
	}
	v, err := validateLane(ctx, l, op, OperationScope{ExpectedHead: val.Head, Files: val.Files, Checks: val.Checks})
	if err != nil {
		return events.OperationStep{}, err
	}
	if v.Digest != val.Digest {
		return events.OperationStep{}, &contract.Refusal{Reason: fmt.Sprintf("the worktree changed since it was validated: its digest is now %s, not %s; validate again", v.Digest, val.Digest)}
	}
	step := stepOf(l, op, events.OperationBegun, e.cfg.NewID(), e.cfg.Actor, v)
	if err := e.sendControl(ctx, events.Control{Kind: events.ControlOperationStep, Run: run, Lane: lane,
		ExecutionID: l.Dispatch.ExecutionID, Step: &step}); err != nil {
		return events.OperationStep{}, err
	}
	return step, e.awaitPending(ctx, run, lane, step, wait)
}

// awaitPending polls the log until the lane's pending record is step
// (recorded), another parent's (lost race) or gone, or wait passes.
func (e *Engine) awaitPending(ctx context.Context, run string, lane int, step events.OperationStep, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		r, _, err := e.load(ctx, run)
		if err != nil {
			return err
		}
		l := r.Lanes[lane]
		switch {
		case l.Pending != nil && l.Pending.Nonce == step.Nonce:
			return nil
		case l.Pending != nil:
			return fmt.Errorf("run %s lane %d: %w by another parent (%s); do not perform the operation", run, lane, ErrOperationPending, l.Pending.By)
		case l.State != machines.StateAwaitingOperation || l.Dispatch == nil || l.Dispatch.ExecutionID != step.ExecutionID:
			return &LaneError{Run: run, Lane: lane, State: l.State, Want: string(machines.StateAwaitingOperation), Err: ErrNotWaiting}
		case l.Validated != nil && l.Validated.Digest != step.Digest:
			return &contract.Refusal{Reason: "another validation replaced the one begun; validate and begin again"}
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("run %s lane %d: the begin was sent but is not recorded yet (is `switchyard serve` running?): %w", run, lane, ErrBeginNotRecorded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ErrBeginNotRecorded: a begin was sent but no engine recorded it within
// the wait; the operation is not pending yet and must not be performed.
var ErrBeginNotRecorded = errors.New("engine: operation begin not recorded; do not perform the operation until status shows it pending")

// OperationSettle settles the lane's pending operation (switchyard
// operation done / reject). The pending record must exist, and:
//
//   - a succeeded commit-checkpoint's ref must be the worktree's HEAD, a
//     commit whose only parent is the pending HEAD and which records
//     exactly the pending files with the pending digest;
//   - any other settlement (run-checks, failed, rejected) needs the
//     worktree still at the pending HEAD with the pending digest.
//
// rejected settles the ledger record as rejected (result failed).
func (e *Engine) OperationSettle(ctx context.Context, run string, lane int, result events.OperationResult, rejected bool, ref, detail string) error {
	if result != events.OperationSucceeded && result != events.OperationFailed {
		return invalidf("operation result %q: want succeeded or failed", result)
	}
	if rejected && result != events.OperationFailed {
		return invalidf("a rejected operation has result failed")
	}
	l, op, err := e.awaitingOperation(ctx, run, lane)
	if err != nil {
		return err
	}
	p := l.Pending
	if p == nil {
		return &contract.Refusal{Reason: fmt.Sprintf("run %s lane %d has no pending operation: run switchyard operation validate and begin before performing it", run, lane)}
	}
	if result == events.OperationSucceeded && op.Kind == policy.OpCommitCheckpoint {
		if strings.TrimSpace(ref) == "" {
			return &contract.Refusal{Reason: "a succeeded commit-checkpoint needs --ref COMMIT: the commit the parent made"}
		}
		full, err := contract.VerifyCommit(ctx, contract.CommitCheck{Repo: p.Repo, Commit: ref, Head: p.Head,
			Operation: string(op.Kind), Checks: p.Checks, Files: p.Files, Digest: p.Digest})
		if err != nil {
			return err
		}
		ref = full
	} else {
		v, err := validateLane(ctx, l, op, OperationScope{ExpectedHead: p.Head, Files: p.Files, Checks: p.Checks})
		if err != nil {
			return err
		}
		if v.Digest != p.Digest {
			return &contract.Refusal{Reason: fmt.Sprintf("the worktree changed since the operation was begun: digest %s, pending %s", v.Digest, p.Digest)}
		}
	}
	done := events.OperationDone{Result: result, Ref: ref, Detail: detail, Digest: p.Digest, Head: p.Head, Ledger: events.LedgerComplete}
	if rejected {
		done.Ledger = events.LedgerRejected
	}
	done.Operation.Kind, done.Operation.TaskID, done.Operation.CheckpointID = op.Kind, op.TaskID, op.CheckpointID
	return e.sendControl(ctx, events.Control{
		Kind: events.ControlOperationDone, Run: run, Lane: lane, ExecutionID: l.Dispatch.ExecutionID, Operation: &done,
	})
}
