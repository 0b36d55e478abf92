package policy

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// snapshotDigestPattern is a lowercase hex SHA-256, the only digest form the
// parent records for a reviewed continuation snapshot.
var snapshotDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// recoveryReady is the continuation gate: it reports why the recovery the
// parent recorded on st.Events[anchor] does not yet authorize a same-route
// continuation of that event's attempt, or nil when it does.
//
// The anchor is the interrupted execution: the permission-blocked event, or
// for a handoff the needs-parent-operation event (the parent rewrites that
// event with its inspection and recovery once the operation completed; the
// parentOperation event has no identity of its own to continue from). The
// gate requires, in order:
//
//   - a clear inspection with a non-blank evidenceRef;
//   - a recovery whose six refs (correction, blockageId, snapshotRef,
//     partialWorkRef, sideEffectsRef, stoppedWritersRef) are non-blank and
//     whose snapshotDigest is 64 lowercase hex digits;
//   - the prior execution (the event's execution) and the prepared
//     nextExecution, with a non-blank id;
//   - nextExecution's output, receipt and workspace paths absolute, clean
//     and distinct from each other;
//   - descriptor, apiSpend, access and contract equal across the attempt,
//     the lane state, the prior and the next execution (an attempt resolved
//     from a legacy sheet has apiSpend unset and accepts a legacy execution);
//   - no id or path already used in the history (a read-only lane may reuse
//     its workspace, the shared checkout; a writer needs a fresh worktree);
//     with fs, history paths are also compared after resolving symlinks, so
//     a prior workspace that links to the next one is reuse;
//   - the execution immediately before the anchor did not record the same
//     blockageId or correction: a repeated blockage or an unchanged
//     correction never replays automatically (an older execution's blockage
//     may come back);
//   - with fs, live preparation: the workspace exists (any kind of file) at
//     its canonical path, the output and receipt do not exist yet and their
//     directories are canonical.
//
// A failure is reported by Next as policy-denied missing-readiness: the
// reference helper declares repeat-denial but never emits it.
func recoveryReady(lane LanePolicy, st LaneState, anchor int, fs FileFacts) error {
	if anchor < 0 || anchor >= len(st.Events) {
		return fmt.Errorf("no interrupted execution to continue")
	}
	ev := st.Events[anchor]
	if ev.AttemptIndex < 0 || ev.AttemptIndex >= len(lane.Attempts) {
		return fmt.Errorf("attempt %d is not on the lane", ev.AttemptIndex)
	}
	attempt := lane.Attempts[ev.AttemptIndex]

	if ev.Inspection == nil || ev.Inspection.State != InspectionClear || blank(ev.Inspection.EvidenceRef) {
		return fmt.Errorf("continuation needs a clear inspection with an evidenceRef")
	}
	r := ev.Recovery
	if r == nil {
		return fmt.Errorf("no recovery recorded")
	}
	for _, f := range []struct{ name, value string }{
		{"correction", r.Correction},
		{"blockageId", r.BlockageID},
		{"snapshotRef", r.SnapshotRef},
		{"partialWorkRef", r.PartialWorkRef},
		{"sideEffectsRef", r.SideEffectsRef},
		{"stoppedWritersRef", r.StoppedWritersRef},
	} {
		if blank(f.value) {
			return fmt.Errorf("recovery.%s is blank", f.name)
		}
	}
	if !snapshotDigestPattern.MatchString(r.SnapshotDigest) {
		return fmt.Errorf("recovery.snapshotDigest must be 64 lowercase hex digits")
	}
	prior, next := ev.Execution, r.NextExecution
	if prior == nil {
		return fmt.Errorf("no execution names the prior run")
	}
	if next == nil {
		return fmt.Errorf("recovery.nextExecution is missing")
	}
	if blank(next.ID) {
		return fmt.Errorf("recovery.nextExecution.id is blank")
	}
	paths := []struct{ name, value string }{
		{"outputPath", next.OutputPath},
		{"receiptPath", next.ReceiptPath},
		{"workspacePath", next.WorkspacePath},
	}
	for _, p := range paths {
		if !absClean(p.value) {
			return fmt.Errorf("recovery.nextExecution.%s must be an absolute normalized path, got %q", p.name, p.value)
		}
	}
	if next.OutputPath == next.ReceiptPath || next.OutputPath == next.WorkspacePath || next.ReceiptPath == next.WorkspacePath {
		return fmt.Errorf("recovery.nextExecution paths alias each other")
	}

	switch {
	case prior.Descriptor != attempt.Descriptor || next.Descriptor != attempt.Descriptor:
		return fmt.Errorf("descriptor differs: attempt %q, prior %q, next %q", attempt.Descriptor, prior.Descriptor, next.Descriptor)
	case !spendMatches(attempt.APISpend, prior.APISpend) || next.APISpend != prior.APISpend:
		return fmt.Errorf("apiSpend differs: attempt %q, prior %q, next %q", attempt.APISpend, prior.APISpend, next.APISpend)
	case prior.Access != st.Access || next.Access != st.Access:
		return fmt.Errorf("access differs: lane %q, prior %q, next %q", st.Access, prior.Access, next.Access)
	case next.Contract != prior.Contract:
		return fmt.Errorf("contract differs: prior %q, next %q", prior.Contract, next.Contract)
	}

	if err := checkFresh(st, anchor, next, fs); err != nil {
		return err
	}
	if j := previousExecution(st.Events, anchor); j >= 0 && st.Events[j].Recovery != nil {
		switch prev := st.Events[j].Recovery; {
		case prev.BlockageID == r.BlockageID:
			return fmt.Errorf("blockageId %q repeats the blockage of events[%d]", r.BlockageID, j)
		case prev.Correction == r.Correction:
			return fmt.Errorf("correction repeats the one recorded on events[%d]", j)
		}
	}
	if fs != nil {
		return checkLive(fs, next)
	}
	return nil
}

// previousExecution returns the index of the last execution event (not a
// parent operation) before events[anchor], or -1.
func previousExecution(events []Event, anchor int) int {
	for j := anchor - 1; j >= 0; j-- {
		if !isOperation(events[j]) {
			return j
		}
	}
	return -1
}

// checkFresh refuses a prepared execution that reuses an id or path already
// named in the history: earlier executions, earlier prepared executions and
// event receipt paths. With fs, each history path also counts as its
// resolved real path, so a symlink to the prepared path is reuse.
func checkFresh(st LaneState, anchor int, next *ExecutionIdentity, fs FileFacts) error {
	ids := map[string]bool{}
	files := map[string]bool{}      // outputs, receipts
	workspaces := map[string]bool{} // worktrees and checkouts
	mark := func(set map[string]bool, p string) {
		set[p] = true
		if fs != nil && p != "" {
			if real, err := fs.Realpath(p); err == nil {
				set[real] = true
			}
		}
	}
	add := func(x *ExecutionIdentity) {
		if x == nil {
			return
		}
		ids[x.ID] = true
		mark(files, x.OutputPath)
		mark(files, x.ReceiptPath)
		mark(workspaces, x.WorkspacePath)
	}
	for j, e := range st.Events {
		add(e.Execution)
		if e.Recovery != nil && j != anchor {
			add(e.Recovery.NextExecution)
		}
		if e.ReceiptPath != "" {
			mark(files, e.ReceiptPath)
		}
	}
	switch {
	case ids[next.ID]:
		return fmt.Errorf("recovery.nextExecution.id %q is already used in the history", next.ID)
	case files[next.OutputPath] || workspaces[next.OutputPath]:
		return fmt.Errorf("recovery.nextExecution.outputPath %q is already used in the history", next.OutputPath)
	case files[next.ReceiptPath] || workspaces[next.ReceiptPath]:
		return fmt.Errorf("recovery.nextExecution.receiptPath %q is already used in the history", next.ReceiptPath)
	case files[next.WorkspacePath] || (workspaces[next.WorkspacePath] && st.Access != ReadOnly):
		return fmt.Errorf("recovery.nextExecution.workspacePath %q is already used in the history", next.WorkspacePath)
	}
	return nil
}

// checkLive applies the live preparation facts: a canonical existing
// workspace (a directory or not: the reference only asks that it exist), and output and receipt paths that do not exist yet under
// canonical directories (so no symlink can redirect the new run's files).
func checkLive(fs FileFacts, next *ExecutionIdentity) error {
	if !fs.Exists(next.WorkspacePath) {
		return fmt.Errorf("workspace %q does not exist", next.WorkspacePath)
	}
	if real, err := fs.Realpath(next.WorkspacePath); err != nil || real != next.WorkspacePath {
		return fmt.Errorf("workspace %q is not canonical", next.WorkspacePath)
	}
	for _, p := range []struct{ name, value string }{
		{"output", next.OutputPath},
		{"receipt", next.ReceiptPath},
	} {
		if fs.Exists(p.value) {
			return fmt.Errorf("%s %q already exists", p.name, p.value)
		}
		dir := filepath.Dir(p.value)
		if real, err := fs.Realpath(dir); err != nil || real != dir {
			return fmt.Errorf("%s directory %q is not canonical", p.name, dir)
		}
	}
	return nil
}

// spendMatches compares an execution's apiSpend with the attempt's saved
// value; a legacy sheet's unset value is run without --api-spend, which a
// receipt records as legacy.
func spendMatches(saved, got APISpend) bool {
	return got == saved || (saved == APISpendUnset && got == APISpendLegacy)
}

// absClean reports whether p is absolute, already clean and free of NUL.
func absClean(p string) bool {
	return filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// blank reports whether s is empty or only whitespace.
func blank(s string) bool { return strings.TrimSpace(s) == "" }
