package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// Same-route continuation.
//
// An interrupted execution (a handoff whose parent operation succeeded, or
// a verified permission blockage) may continue on the same descriptor when
// the sheet's # continuation allows it. policy.Next decides it, and needs
// the parent's clear inspection and prepared recovery on the interrupted
// outcome first; without them it answers policy-denied missing-readiness.
// The engine does not record that answer while no recovery was ever given:
// the lane waits for the parent (WaitRecovery, switchyard recover). The
// parent's answer is recorded as a recover event: clear with the recovery
// (whose nextExecution the engine prepares: a fresh execution id, output
// and receipt under the data directory, and the run's checkout or, for a
// writer, a fresh worktree at the recovery's snapshot), or unsafe, which
// declines; the next decision then reads it.

// awaitingRecovery reports whether decision dec on lane state st is the
// one that waits for the parent's recovery rather than a stop: Next asked
// for readiness the parent has not answered yet.
func awaitingRecovery(st policy.LaneState, dec policy.Decision) bool {
	if dec.Kind != policy.DecidePolicyDenied || dec.Reason != string(policy.DenyMissingReadiness) {
		return false
	}
	a := policy.Anchor(st.Events)
	if a < 0 {
		return false
	}
	ev := st.Events[a]
	// A started writer was inspected before (the writer gate comes first):
	// a clear verdict still leaves the recovery to the parent.
	return (ev.Status == policy.OutcomePermissionBlocked || ev.Status == policy.OutcomeNeedsParentOp) &&
		(ev.Inspection == nil || ev.Inspection.State == string(events.VerdictClear)) && ev.Recovery == nil
}

// awaitsRecovery reports whether lane i of r waits for the parent's
// recovery.
func awaitsRecovery(r *machines.Run, i int) bool {
	l := r.Lanes[i]
	if l.State != machines.StateTerminal {
		return false
	}
	st, err := r.LaneState(i)
	if err != nil {
		return false
	}
	return awaitingRecovery(st, policy.Next(l.Policy, st, nil))
}

// RecoverInput is the parent's answer to an interrupted execution.
type RecoverInput struct {
	// Clear continues (with the recovery fields below); false declines
	// and the lane stops.
	Clear bool
	// EvidenceRef names what the parent inspected: partial work, tool
	// effects, the interruption. Required.
	EvidenceRef string
	// The recovery, for Clear: the concrete correction, an id of the
	// blockage, the reviewed snapshot to continue from (a git commit of
	// the run's checkout for a writer) and its SHA-256 digest, and refs to
	// the partial work, side effects and stopped writers the parent
	// checked.
	Correction, BlockageID, SnapshotRef, SnapshotDigest string
	PartialWorkRef, SideEffectsRef, StoppedWritersRef   string
}

// Recover sends the parent's answer to lane's interrupted execution
// (switchyard recover). The lane must be waiting for it (WaitRecovery).
func (e *Engine) Recover(ctx context.Context, run string, lane int, in RecoverInput) error {
	if strings.TrimSpace(in.EvidenceRef) == "" {
		return invalidf("a recover needs an evidence ref (what the parent inspected)")
	}
	rec := events.Recover{State: events.VerdictUnsafe, EvidenceRef: in.EvidenceRef, By: e.cfg.Actor}
	if in.Clear {
		rec.State = events.VerdictClear
		rec.Recovery = &policy.Recovery{Correction: in.Correction, BlockageID: in.BlockageID, SnapshotRef: in.SnapshotRef,
			SnapshotDigest: in.SnapshotDigest, PartialWorkRef: in.PartialWorkRef, SideEffectsRef: in.SideEffectsRef,
			StoppedWritersRef: in.StoppedWritersRef}
		for _, f := range []struct{ flag, v string }{
			{"correction", in.Correction}, {"blockage id", in.BlockageID}, {"snapshot ref", in.SnapshotRef},
			{"partial work ref", in.PartialWorkRef}, {"side effects ref", in.SideEffectsRef}, {"stopped writers ref", in.StoppedWritersRef},
		} {
			if strings.TrimSpace(f.v) == "" {
				return invalidf("a clear recover needs the %s", f.flag)
			}
		}
		if !isSHA256Hex(in.SnapshotDigest) {
			return invalidf("snapshot digest %q: want the snapshot's SHA-256, 64 lowercase hex digits", in.SnapshotDigest)
		}
	}
	r, _, err := e.load(ctx, run)
	if err != nil {
		return err
	}
	if lane < 0 || lane >= len(r.Lanes) {
		return fmt.Errorf("run %s lane %d: %w", run, lane, ErrUnknownLane)
	}
	l := r.Lanes[lane]
	switch {
	case l.State.Final():
		return &LaneError{Run: run, Lane: lane, State: l.State, Want: "awaiting recovery", Err: ErrFinal}
	case !awaitsRecovery(r, lane):
		return &LaneError{Run: run, Lane: lane, State: l.State, Want: "awaiting recovery", Err: ErrNotWaiting}
	}
	if in.Clear && r.Created.Access == policy.IsolatedWrite {
		if _, err := git(ctx, r.Created.Cwd, "rev-parse", "--verify", "--quiet", in.SnapshotRef+"^{commit}"); err != nil {
			return invalidf("snapshot ref %q is not a commit of %s: a writer continues in a fresh worktree of the reviewed snapshot", in.SnapshotRef, r.Created.Cwd)
		}
	}
	return e.sendControl(ctx, events.Control{
		Kind: events.ControlRecover, Run: run, Lane: lane, ExecutionID: l.Dispatch.ExecutionID, Recover: &rec,
	})
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// recover records the parent's recover control on lane i, preparing the
// continuation's identity for a clear one.
func (d *driver) recover(ctx context.Context, i int, c events.Control) error {
	rec := *c.Recover
	if rec.Recovery != nil {
		st, err := d.r.LaneState(i)
		if err != nil {
			return err
		}
		a := policy.Anchor(st.Events)
		prior := st.Events[a].Execution
		if prior == nil {
			return fmt.Errorf("lane %d: the interrupted outcome names no execution: %w", i, ErrInconsistentLog)
		}
		next, err := d.prepareContinuation(ctx, i, prior, rec.Recovery.SnapshotRef)
		if err != nil {
			return fmt.Errorf("lane %d: prepare the continuation: %w", i, err)
		}
		recovery := *rec.Recovery
		recovery.NextExecution = next
		rec.Recovery = &recovery
	}
	return d.appendEvent(ctx, i, rec)
}

// prepareContinuation names a fresh execution of prior's attempt: a new id,
// its output and receipt under the data directory (created by the launch),
// and its workspace: the run's checkout, or for a writer a fresh worktree
// of snapshotRef, created now.
func (d *driver) prepareContinuation(ctx context.Context, i int, prior *policy.ExecutionIdentity, snapshotRef string) (*policy.ExecutionIdentity, error) {
	e := d.e
	id := e.cfg.NewID()
	if err := events.ValidateExecutionID(id); err != nil {
		return nil, err
	}
	dir := e.executionDir(d.run, i, id)
	next := &policy.ExecutionIdentity{ID: id, OutputPath: filepath.Join(dir, outputFile), ReceiptPath: filepath.Join(dir, receiptFile),
		WorkspacePath: d.r.Created.Cwd, Descriptor: prior.Descriptor, APISpend: prior.APISpend, Access: prior.Access, Contract: prior.Contract}
	if d.r.Created.Access == policy.IsolatedWrite {
		next.WorkspacePath = e.worktreeDir(d.run, i, id)
		if err := e.addWorktreeAt(ctx, d.r.Created.Cwd, next.WorkspacePath, snapshotRef); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// continuationNote is what a continued execution is told after the task:
// that it continues an interrupted execution, the parent's correction and
// the snapshot to continue from (the recovery on the interrupted outcome).
func continuationNote(history []policy.Event) string {
	a := policy.Anchor(history)
	if a < 0 || history[a].Recovery == nil {
		return ""
	}
	r := history[a].Recovery
	return fmt.Sprintf("Continuation: an earlier execution of this task was interrupted (%s) and the parent has dealt with it.\n"+
		"Correction: %s\nContinue from the reviewed snapshot %s; do not redo work it already contains.\n",
		history[a].Status, r.Correction, r.SnapshotRef)
}
