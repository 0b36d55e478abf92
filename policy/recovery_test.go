package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecoveryReady covers each clause of the continuation gate on a
// permission-blocked writer whose parent prepared execution 2. Each row
// breaks one clause of an otherwise ready state.
func TestRecoveryReady(t *testing.T) {
	t.Parallel()
	iw := IsolatedWrite
	mutRec := func(f func(r *Recovery)) fxOpt { return func(e *Event) { f(e.Recovery) } }
	mutNext := func(f func(x *ExecutionIdentity)) fxOpt { return func(e *Event) { f(e.Recovery.NextExecution) } }
	cases := []struct {
		name   string
		access Access
		lane   func(*LanePolicy)
		before []Event // history before the blocked event
		opts   []fxOpt // applied to the blocked event
		fs     FileFacts
		want   string // error substring; "" means ready
	}{
		{name: "ready writer", access: iw},
		{name: "ready writer with live preparation", access: iw, fs: fxPrepared(2, iw)},
		{name: "ready read-only lane reusing its checkout", access: ReadOnly, fs: fxPrepared(2, ReadOnly)},
		{name: "legacy sheet attempt accepts legacy apiSpend", access: iw,
			lane: func(l *LanePolicy) { l.Attempts[0].APISpend = APISpendUnset },
			opts: []fxOpt{func(e *Event) {
				e.Execution.APISpend = APISpendLegacy
				e.Recovery.NextExecution.APISpend = APISpendLegacy
			}}},

		{name: "no inspection", access: iw, opts: []fxOpt{func(e *Event) { e.Inspection = nil }}, want: "clear inspection"},
		{name: "unsafe inspection", access: iw, opts: []fxOpt{fxInspected(InspectionUnsafe, "x")}, want: "clear inspection"},
		{name: "inspection none", access: iw, opts: []fxOpt{fxInspected(InspectionNone, "x")}, want: "clear inspection"},
		{name: "blank evidence", access: iw, opts: []fxOpt{fxInspected(InspectionClear, " \t")}, want: "clear inspection"},
		{name: "no recovery", access: iw, opts: []fxOpt{func(e *Event) { e.Recovery = nil }}, want: "no recovery"},
		{name: "blank correction", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.Correction = " " })}, want: "recovery.correction is blank"},
		{name: "blank blockageId", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.BlockageID = "" })}, want: "recovery.blockageId is blank"},
		{name: "blank snapshotRef", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.SnapshotRef = "" })}, want: "recovery.snapshotRef is blank"},
		{name: "blank partialWorkRef", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.PartialWorkRef = "" })}, want: "recovery.partialWorkRef is blank"},
		{name: "blank sideEffectsRef", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.SideEffectsRef = "" })}, want: "recovery.sideEffectsRef is blank"},
		{name: "blank stoppedWritersRef", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.StoppedWritersRef = "" })}, want: "recovery.stoppedWritersRef is blank"},
		{name: "uppercase digest", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) {
			r.SnapshotDigest = "3B5D5C3712955042212316173CCF37BE800000000000000000000000000000AB"
		})}, want: "snapshotDigest"},
		{name: "short digest", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.SnapshotDigest = fxDigest[:63] })}, want: "snapshotDigest"},
		{name: "digest with trailing newline", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.SnapshotDigest = fxDigest + "\n" })}, want: "snapshotDigest"},
		{name: "no prior execution", access: iw, opts: []fxOpt{func(e *Event) { e.Execution = nil }}, want: "prior run"},
		{name: "no next execution", access: iw, opts: []fxOpt{mutRec(func(r *Recovery) { r.NextExecution = nil })}, want: "nextExecution is missing"},
		{name: "blank next id", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.ID = " " })}, want: "nextExecution.id is blank"},
		{name: "relative output path", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.OutputPath = "out.md" })}, want: "nextExecution.outputPath must be an absolute normalized path"},
		{name: "unclean receipt path", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.ReceiptPath = "/runs/r1/../r1/exec-2/receipt.json" })}, want: "nextExecution.receiptPath must be an absolute normalized path"},
		{name: "trailing slash workspace", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.WorkspacePath = "/runs/r1/wt-2/" })}, want: "nextExecution.workspacePath must be an absolute normalized path"},
		{name: "empty workspace", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.WorkspacePath = "" })}, want: "workspacePath must be an absolute"},
		{name: "output aliases receipt", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.ReceiptPath = x.OutputPath })}, want: "alias each other"},
		{name: "next descriptor differs", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.Descriptor = fxCursor })}, want: "descriptor differs"},
		{name: "prior descriptor differs", access: iw, opts: []fxOpt{func(e *Event) { e.Execution.Descriptor = fxCursor }}, want: "descriptor differs"},
		{name: "next apiSpend widened", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.APISpend = APISpendApproved })}, want: "apiSpend differs"},
		{name: "prior apiSpend differs from the sheet", access: iw,
			opts: []fxOpt{func(e *Event) {
				e.Execution.APISpend = APISpendLegacy
				e.Recovery.NextExecution.APISpend = APISpendLegacy
			}}, want: "apiSpend differs"},
		{name: "next access differs", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.Access = ReadOnly })}, want: "access differs"},
		{name: "prior access differs from the lane", access: iw, opts: []fxOpt{func(e *Event) { e.Execution.Access = ReadOnly }}, want: "access differs"},
		{name: "contract differs", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.Contract = ContractLegacy })}, want: "contract differs"},
		{name: "reused prior id", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.ID = "exec-1" })}, want: `id "exec-1" is already used`},
		{name: "reused prior output", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.OutputPath = "/runs/r1/exec-1/output.md" })}, want: "outputPath"},
		{name: "reused event receipt path", access: iw,
			opts: []fxOpt{func(e *Event) {
				e.ReceiptPath = "/elsewhere/receipt.json"
				e.Recovery.NextExecution.ReceiptPath = "/elsewhere/receipt.json"
			}}, want: "receiptPath"},
		{name: "writer reuses its worktree", access: iw, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.WorkspacePath = "/runs/r1/wt-1" })}, want: "workspacePath"},
		{name: "workspace on an earlier output", access: ReadOnly, opts: []fxOpt{mutNext(func(x *ExecutionIdentity) { x.WorkspacePath = "/runs/r1/exec-1/output.md" })}, want: "workspacePath"},
		{name: "reused identity from an earlier event", access: iw,
			before: []Event{fxEvent(0, OutcomeTerminalFailure, fxExecOpt(ExecutionIdentity{ID: "exec-2"}))}, want: `id "exec-2"`},
		{name: "repeated blockageId", access: iw, lane: fxContinue(4, ContinuePermission),
			before: []Event{fxEvent(0, OutcomePermissionBlocked, fxRecoveryOpt(Recovery{BlockageID: "blk-1", Correction: "something else"}))}, want: "repeats the blockage"},
		{name: "unchanged correction", access: iw, lane: fxContinue(4, ContinuePermission),
			before: []Event{fxEvent(0, OutcomePermissionBlocked, fxRecoveryOpt(Recovery{BlockageID: "blk-0", Correction: fxRecovery(1, iw).Correction}))}, want: "correction repeats"},

		{name: "live: workspace missing", access: iw, fs: fxFS{dirs: map[string]bool{"/runs/r1/exec-2": true}}, want: "does not exist"},
		{name: "live: workspace behind a symlink", access: iw,
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.links = map[string]string{"/runs/r1/wt-2": "/real/wt-2"}
				f.dirs["/real/wt-2"] = true
				return f
			}(), want: "not canonical"},
		{name: "live: receipt exists", access: iw,
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.files = map[string]bool{"/runs/r1/exec-2/receipt.json": true}
				return f
			}(), want: `receipt "/runs/r1/exec-2/receipt.json" already exists`},
		{name: "live: dangling output symlink exists", access: iw,
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.links = map[string]string{"/runs/r1/exec-2/output.md": "/nowhere"}
				return f
			}(), want: "already exists"},
		{name: "live: output directory missing", access: iw,
			fs: fxFS{dirs: map[string]bool{"/runs/r1/wt-2": true}}, want: "output directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lane := fxLaneWith(fxBoth)
			if tc.lane != nil {
				tc.lane(&lane)
			}
			blocked := fxBlockedRun(1, tc.access, tc.opts...)
			events := append(append([]Event{}, tc.before...), blocked)
			st := fxState(tc.access, nil, events...)
			err := recoveryReady(lane, st, len(events)-1, tc.fs)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRecoveryReadyAnchorBounds proves the gate refuses, rather than
// panics on, an anchor outside the history or the lane.
func TestRecoveryReadyAnchorBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []Event
		anchor int
		want   string
	}{
		{"negative anchor", []Event{fxBlockedRun(1, ReadOnly)}, -1, "no interrupted execution"},
		{"anchor past the history", []Event{fxBlockedRun(1, ReadOnly)}, 1, "no interrupted execution"},
		{"attempt off the lane", []Event{fxEvent(9, OutcomePermissionBlocked)}, 0, "not on the lane"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := recoveryReady(fxLane(), fxState(ReadOnly, nil, tc.events...), tc.anchor, nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
