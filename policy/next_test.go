package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// Fixtures shared by the next, history, recovery and decode tests. Lanes
// are built directly (not parsed) so these tests depend only on the types.

const (
	fxGrok   = "grok:grok-4.7@xhigh"
	fxCursor = "cursor:composer-2@default"
	fxAlias  = "inherit-parent"
	fxDigest = "3b5d5c3712955042212316173ccf37be800000000000000000000000000000ab"
)

// fxAttempt is an allowed external descriptor attempt with included funding.
func fxAttempt(desc string, group Provider) AttemptPolicy {
	// Built by hand rather than with ParseAttempt so these tests depend on
	// the types only.
	a := Attempt{Kind: KindAlias, Alias: Alias(desc)}
	route := RouteNative
	if prov, rest, ok := strings.Cut(desc, ":"); ok {
		model, effort, _ := strings.Cut(rest, "@")
		a = Attempt{Kind: KindDescriptor, Provider: Provider(prov), Model: model, Effort: Effort(effort)}
		route = RouteExternal
	}
	return AttemptPolicy{
		Descriptor: desc, Attempt: a, ExhaustionGroup: group,
		Funding: FundingIncluded, APISpend: APISpendDeny, Route: route,
		Authorization: Authorization{State: "allowed"},
	}
}

func fxBlocked(a AttemptPolicy) AttemptPolicy {
	a.Funding = FundingUnknown
	a.Authorization = Authorization{State: "blocked", Reason: "funding unknown for provider " + string(a.ExhaustionGroup)}
	return a
}

// fxLane is grok -> cursor -> inherit-parent (claude parent) under the
// default quota-only fallback and no continuation.
func fxLane() LanePolicy {
	return LanePolicy{
		ID:       "swarm workers#1",
		Attempts: []AttemptPolicy{fxAttempt(fxGrok, Grok), fxAttempt(fxCursor, Cursor), fxAttempt(fxAlias, Claude)},
		Fallback: DefaultFallback(),
	}
}

func fxLaneWith(mut func(*LanePolicy)) LanePolicy {
	l := fxLane()
	mut(&l)
	return l
}

func fxBroad(l *LanePolicy) {
	l.Fallback = FallbackPolicy{On: []Outcome{OutcomeUsageExhausted, OutcomeRouteUnavailable, OutcomeTerminalFailure, OutcomeDeadlineExceeded}}
}

func fxContinue(max int, on ...ContinuationCause) func(*LanePolicy) {
	return func(l *LanePolicy) { l.Continuation = &ContinuationPolicy{On: on, MaxExecutions: max} }
}

func fxBoth(l *LanePolicy) { fxContinue(2, ContinuePermission, ContinueHandoff)(l) }

type fxOpt func(*Event)

func fxEvent(i int, s Outcome, opts ...fxOpt) Event {
	e := Event{AttemptIndex: i, Status: s}
	for _, o := range opts {
		o(&e)
	}
	return e
}

func fxStarted(b bool) fxOpt { return func(e *Event) { e.ProcessStarted = &b } }

func fxInspected(state, ref string) fxOpt {
	return func(e *Event) { e.Inspection = &Inspection{State: state, EvidenceRef: ref} }
}

var fxClear = fxInspected(InspectionClear, "diff, output and tool effects reviewed")

func fxDenied(c DeniedCause) fxOpt { return func(e *Event) { e.DeniedCause = c } }

func fxOrdinal(n int) fxOpt { return func(e *Event) { e.ContinuationOrdinal = &n } }

func fxExecOpt(x ExecutionIdentity) fxOpt { return func(e *Event) { e.Execution = &x } }

func fxRecoveryOpt(r Recovery) fxOpt { return func(e *Event) { e.Recovery = &r } }

func fxHandoff(op OperationKind, task, cp, ref string) fxOpt {
	return func(e *Event) { e.Handoff = &Handoff{Operation: op, TaskID: task, CheckpointID: cp, Ref: ref} }
}

func fxOp(i int, s Outcome, kind OperationKind, task, cp string) Event {
	return Event{AttemptIndex: i, Status: s, ParentOperation: &ParentOperation{Kind: kind, TaskID: task, CheckpointID: cp}}
}

// fxExec is execution n of the grok attempt under access.
func fxExec(n int, access Access) ExecutionIdentity {
	ws := "/repo"
	if access == IsolatedWrite {
		ws = fmt.Sprintf("/runs/r1/wt-%d", n)
	}
	return ExecutionIdentity{
		ID:            fmt.Sprintf("exec-%d", n),
		OutputPath:    fmt.Sprintf("/runs/r1/exec-%d/output.md", n),
		ReceiptPath:   fmt.Sprintf("/runs/r1/exec-%d/receipt.json", n),
		WorkspacePath: ws,
		Descriptor:    fxGrok, APISpend: APISpendDeny, Access: access, Contract: ContractStrict,
	}
}

// fxRecovery prepares execution n+1 after blockage n.
func fxRecovery(n int, access Access) Recovery {
	next := fxExec(n+1, access)
	return Recovery{
		Correction:        fmt.Sprintf("granted the denied edit tool (blockage %d)", n),
		BlockageID:        fmt.Sprintf("blk-%d", n),
		SnapshotRef:       fmt.Sprintf("refs/snapshots/r1/%d", n),
		SnapshotDigest:    fxDigest,
		PartialWorkRef:    fmt.Sprintf("partial-%d.patch", n),
		SideEffectsRef:    fmt.Sprintf("side-effects-%d.md", n),
		StoppedWritersRef: fmt.Sprintf("stopped-%d.json", n),
		NextExecution:     &next,
	}
}

// fxBlockedRun is execution n of attempt 0, permission-blocked, inspected
// clear, with a ready recovery for execution n+1.
func fxBlockedRun(n int, access Access, opts ...fxOpt) Event {
	base := []fxOpt{fxStarted(true), fxDenied(DeniedPermission), fxClear, fxExecOpt(fxExec(n, access)), fxRecoveryOpt(fxRecovery(n, access))}
	return fxEvent(0, OutcomePermissionBlocked, append(base, opts...)...)
}

// fxHandoffRun is execution n of attempt 0 delivering a run-checks handoff,
// inspected clear, with a ready recovery for execution n+1.
func fxHandoffRun(n int, access Access, opts ...fxOpt) Event {
	base := []fxOpt{fxStarted(true), fxHandoff(OpRunChecks, "task-7", "cp-3", ""), fxClear, fxExecOpt(fxExec(n, access)), fxRecoveryOpt(fxRecovery(n, access))}
	return fxEvent(0, OutcomeNeedsParentOp, append(base, opts...)...)
}

func fxState(access Access, groups []Provider, events ...Event) LaneState {
	if groups == nil {
		groups = []Provider{}
	}
	if events == nil {
		events = []Event{}
	}
	return LaneState{Events: events, ExhaustedGroups: groups, Access: access}
}

// fxFS is an in-memory FileFacts: dirs and files exist at their canonical
// paths; links map a path to its canonical target.
type fxFS struct {
	dirs, files map[string]bool
	links       map[string]string
}

var _ FileFacts = fxFS{}

func (f fxFS) Realpath(p string) (string, error) {
	if t, ok := f.links[p]; ok {
		return t, nil
	}
	if f.dirs[p] || f.files[p] {
		return p, nil
	}
	return "", errors.New("no such file or directory: " + p)
}

func (f fxFS) Exists(p string) bool {
	_, link := f.links[p]
	return link || f.dirs[p] || f.files[p]
}

func (f fxFS) IsDir(p string) bool {
	if t, ok := f.links[p]; ok {
		return f.dirs[t]
	}
	return f.dirs[p]
}

// fxPrepared is the live filesystem after the parent prepared execution n
// under access: its workspace and output directories exist, its files don't.
func fxPrepared(n int, access Access) fxFS {
	x := fxExec(n, access)
	return fxFS{dirs: map[string]bool{
		"/": true, "/runs": true, "/runs/r1": true, x.WorkspacePath: true,
		filepath.Dir(x.OutputPath): true, filepath.Dir(x.ReceiptPath): true,
	}}
}

func fxLaunch(l LanePolicy, i int) Decision {
	a := l.Attempts[i]
	return Decision{Kind: DecideLaunch, AttemptIndex: intPtr(i), Attempt: &a, Execution: 1}
}

func fxContinued(l LanePolicy, i, k int, prepared ExecutionIdentity) Decision {
	a := l.Attempts[i]
	return Decision{Kind: DecideContinue, AttemptIndex: intPtr(i), Attempt: &a, Execution: k, PreparedExecution: &prepared}
}

var fxInspect = Decision{Kind: DecideInspect, Reason: InspectReasonStartedWriter}

type nextCase struct {
	name   string
	golden string // when set, the decision is also checked against testdata/next/<golden>.golden
	lane   LanePolicy
	state  LaneState
	fs     FileFacts
	want   Decision
	// rejected marks a history ValidateHistory refuses; Next must still
	// decide it without panicking.
	rejected bool
}

func nextCases() []nextCase {
	lane := fxLane()
	both := fxLaneWith(fxBoth)
	ro, iw := ReadOnly, IsolatedWrite
	grokOnly := []Provider{Grok}
	return []nextCase{
		// launch
		{name: "empty log launches attempt 0", golden: "launch", lane: lane, state: fxState(ro, nil), want: fxLaunch(lane, 0)},
		{name: "usage-exhausted advances to attempt 1", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(true))), want: fxLaunch(lane, 1)},
		{name: "read-only started attempt advances without inspection", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeUsageExhausted)), want: fxLaunch(lane, 1)},
		{name: "writer proven unstarted advances without inspection", lane: lane,
			state: fxState(iw, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(false))), want: fxLaunch(lane, 1)},
		{name: "started writer with clear inspection advances", lane: lane,
			state: fxState(iw, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(true), fxClear)), want: fxLaunch(lane, 1)},
		{name: "exhausted groups skip an empty log to attempt 2", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}), want: fxLaunch(lane, 2)},
		{name: "exhausted group after a fallback skips to attempt 2", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted, fxStarted(false))), want: fxLaunch(lane, 2)},
		{name: "broad fallback advances on route-unavailable", lane: fxLaneWith(fxBroad),
			state: fxState(ro, nil, fxEvent(0, OutcomeRouteUnavailable, fxStarted(false))), want: fxLaunch(lane, 1)},
		{name: "broad fallback advances on terminal-failure", lane: fxLaneWith(fxBroad),
			state: fxState(ro, nil, fxEvent(0, OutcomeTerminalFailure, fxStarted(true))), want: fxLaunch(lane, 1)},
		{name: "broad fallback advances on deadline-exceeded", lane: fxLaneWith(fxBroad),
			state: fxState(ro, nil, fxEvent(0, OutcomeDeadlineExceeded, fxStarted(true))), want: fxLaunch(lane, 1)},
		{name: "second fallback launches attempt 2", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted), fxEvent(1, OutcomeUsageExhausted)), want: fxLaunch(lane, 2)},

		// continue
		{name: "permission continuation with full readiness continues", golden: "continue", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)), fs: fxPrepared(2, iw), want: fxContinued(both, 0, 2, fxExec(2, iw))},
		{name: "permission continuation without live facts continues", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro)), want: fxContinued(both, 0, 2, fxExec(2, ro))},
		{name: "completed parent operation continues the handoff", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			fs:    fxPrepared(2, iw), want: fxContinued(both, 0, 2, fxExec(2, iw))},
		{name: "third execution within max 3 continues", lane: fxLaneWith(fxContinue(3, ContinuePermission)),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro, fxOrdinal(1))),
			want:  fxContinued(fxLane(), 0, 3, fxExec(3, ro))},

		// parent-operation
		{name: "handoff asks for its parent operation", golden: "parent-operation", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(true), fxClear, fxHandoff(OpCommitCheckpoint, "task-7", "cp-3", "summary.md"))),
			want: Decision{Kind: DecideParentOperation, AttemptIndex: intPtr(0),
				Operation: &Operation{Kind: OpCommitCheckpoint, TaskID: "task-7", CheckpointID: "cp-3", Ref: "summary.md"}}},
		{name: "handoff without ref omits it", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(1, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""))),
			want:  Decision{Kind: DecideParentOperation, AttemptIndex: intPtr(1), Operation: &Operation{Kind: OpRunChecks, TaskID: "t", CheckpointID: "c"}}},

		// stop
		{name: "complete stops complete", golden: "stop-complete", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeComplete)), want: Stop(StopComplete)},
		{name: "complete anywhere stops complete", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeComplete), fxEvent(1, OutcomeFailed)), want: Stop(StopComplete), rejected: true},
		{name: "failed stops not-eligible", golden: "stop-not-eligible", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeFailed)), want: Stop(StopNotEligible)},
		{name: "outcome outside fallback stops not-eligible", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeRouteUnavailable, fxStarted(false))), want: Stop(StopNotEligible)},
		{name: "empty fallback stops even on quota", lane: fxLaneWith(func(l *LanePolicy) { l.Fallback = FallbackPolicy{On: []Outcome{}} }),
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted)), want: Stop(StopNotEligible)},
		{name: "failed parent operation stops not-eligible", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeFailed, OpRunChecks, "task-7", "cp-3")), want: Stop(StopNotEligible)},
		{name: "blocked next attempt stops unauthorized", golden: "stop-unauthorized",
			lane:  fxLaneWith(func(l *LanePolicy) { l.Attempts[1] = fxBlocked(l.Attempts[1]) }),
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted)), want: Stop(StopUnauthorized)},
		{name: "blocked attempt stops unauthorized even if its group is exhausted",
			lane:  fxLaneWith(func(l *LanePolicy) { l.Attempts[1] = fxBlocked(l.Attempts[1]) }),
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted)), want: Stop(StopUnauthorized)},
		{name: "blocked first attempt stops an empty log",
			lane:  fxLaneWith(func(l *LanePolicy) { l.Attempts[0] = fxBlocked(l.Attempts[0]) }),
			state: fxState(ro, nil), want: Stop(StopUnauthorized)},
		{name: "past the end stops chain-exhausted", golden: "stop-chain-exhausted", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(2, OutcomeUsageExhausted)), want: Stop(StopChainExhausted)},
		{name: "every remaining group exhausted stops chain-exhausted", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor, Claude}, fxEvent(0, OutcomeUsageExhausted)), want: Stop(StopChainExhausted)},
		{name: "unsafe writer stops unsafe-writer", golden: "stop-unsafe-writer", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted, fxStarted(true), fxInspected(InspectionUnsafe, "deleted files outside the task"))),
			want:  Stop(StopUnsafeWriter)},
		{name: "unsafe verdict stops a read-only lane", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeUsageExhausted, fxInspected(InspectionUnsafe, "pushed a branch"))), want: Stop(StopUnsafeWriter)},
		{name: "unsafe verdict stops an unstarted writer", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted, fxStarted(false), fxInspected(InspectionUnsafe, "x"))), want: Stop(StopUnsafeWriter)},

		// inspect
		{name: "started writer without inspection inspects", golden: "inspect", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted, fxStarted(true))), want: fxInspect},
		{name: "writer with unknown start inspects", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted)), want: fxInspect},
		{name: "writer inspected none inspects", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted, fxInspected(InspectionNone, "pending"))), want: fxInspect},
		{name: "clear verdict with blank evidence inspects", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeUsageExhausted, fxInspected(InspectionClear, "   "))), want: fxInspect},

		// policy-denied
		{name: "guard denial is unsupported-tool", golden: "policy-denied-unsupported-tool", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro, fxDenied(DeniedGuard))), want: Deny(DenyUnsupportedTool)},
		{name: "other denial is unsupported-tool", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedOther))), want: Deny(DenyUnsupportedTool)},
		{name: "unsupported-tool denial is unsupported-tool", lane: both,
			state: fxState(ro, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedUnsupportedTool))), want: Deny(DenyUnsupportedTool)},
		{name: "changed-files denial is changed-files", golden: "policy-denied-changed-files", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro, fxDenied(DeniedChangedFiles))), want: Deny(DenyChangedFiles)},
		{name: "permission block without continuation is no-continuation", golden: "policy-denied-no-continuation", lane: lane,
			state: fxState(ro, nil, fxBlockedRun(1, ro)), want: Deny(DenyNoContinuation)},
		{name: "permission block under handoff-only continuation is no-continuation", lane: fxLaneWith(fxContinue(2, ContinueHandoff)),
			state: fxState(ro, nil, fxBlockedRun(1, ro)), want: Deny(DenyNoContinuation)},
		{name: "completed operation without continuation is no-continuation", lane: lane,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")), want: Deny(DenyNoContinuation)},
		{name: "completed operation under permission-only continuation is no-continuation", lane: fxLaneWith(fxContinue(2, ContinuePermission)),
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")), want: Deny(DenyNoContinuation)},
		{name: "third execution past max 2 is exhausted-allowance", golden: "policy-denied-exhausted-allowance", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro)), want: Deny(DenyExhaustedAllowance)},
		{name: "max 1 allows no continuation", lane: fxLaneWith(fxContinue(1, ContinuePermission)),
			state: fxState(ro, nil, fxBlockedRun(1, ro)), want: Deny(DenyExhaustedAllowance)},
		{name: "missing recovery is missing-readiness", golden: "policy-denied-missing-readiness", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro, func(e *Event) { e.Recovery = nil })), want: Deny(DenyMissingReadiness)},
		{name: "repeated blockage id is missing-readiness, never repeat-denial", lane: fxLaneWith(fxContinue(3, ContinuePermission)),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro, func(e *Event) { e.Recovery.BlockageID = "blk-1" })),
			want:  Deny(DenyMissingReadiness)},
		{name: "repeated correction of the execution before is missing-readiness", lane: fxLaneWith(fxContinue(3, ContinuePermission)),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro, func(e *Event) { e.Recovery.Correction = fxRecovery(1, ro).Correction })),
			want:  Deny(DenyMissingReadiness)},
		// Section 4: only the execution immediately before counts.
		{name: "an older execution's blockage and correction may come back", lane: fxLaneWith(fxContinue(4, ContinuePermission)),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro, fxOrdinal(1)),
				fxBlockedRun(3, ro, fxOrdinal(2), func(e *Event) {
					e.Recovery.BlockageID, e.Recovery.Correction = "blk-1", fxRecovery(1, ro).Correction
				})),
			want: fxContinued(fxLane(), 0, 4, fxExec(4, ro))},
		{name: "a prepared workspace that is a file continues", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)),
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				delete(f.dirs, fxExec(2, iw).WorkspacePath)
				f.files = map[string]bool{fxExec(2, iw).WorkspacePath: true}
				return f
			}(),
			want: fxContinued(both, 0, 2, fxExec(2, iw))},
		{name: "a missing prepared workspace is missing-readiness", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)),
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				delete(f.dirs, fxExec(2, iw).WorkspacePath)
				return f
			}(),
			want: Deny(DenyMissingReadiness)},
		{name: "a prior workspace linking to the next one is reuse, missing-readiness", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)),
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.links = map[string]string{fxExec(1, iw).WorkspacePath: fxExec(2, iw).WorkspacePath}
				return f
			}(),
			want: Deny(DenyMissingReadiness)},
		{name: "a prior receipt linking to the next output is reuse, missing-readiness", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)),
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.links = map[string]string{fxExec(1, iw).ReceiptPath: fxExec(2, iw).OutputPath}
				return f
			}(),
			want: Deny(DenyMissingReadiness)},

		// Section 4 gate order: the writer gate runs inside the
		// permission-blocked branch before the cause and continuation rules.
		{name: "unsafe blocked writer stops unsafe-writer", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw, fxInspected(InspectionUnsafe, "x"))), want: Stop(StopUnsafeWriter)},
		{name: "unsafe read-only permission block without continuation stops unsafe-writer", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedPermission), fxInspected(InspectionUnsafe, "x"))),
			want:  Stop(StopUnsafeWriter)},
		{name: "unsafe guard denial stops unsafe-writer before unsupported-tool", lane: both,
			state: fxState(ro, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedGuard), fxInspected(InspectionUnsafe, "x"))),
			want:  Stop(StopUnsafeWriter)},
		{name: "started blocked writer without inspection inspects before no-continuation", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomePermissionBlocked, fxStarted(true), fxDenied(DeniedPermission))), want: fxInspect},
		{name: "started changed-files writer without inspection inspects", lane: both,
			state: fxState(iw, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedChangedFiles))), want: fxInspect},
		{name: "unstarted blocked writer goes on to the cause rules", lane: both,
			state: fxState(iw, nil, fxEvent(0, OutcomePermissionBlocked, fxStarted(false), fxDenied(DeniedGuard))), want: Deny(DenyUnsupportedTool)},

		// Section 4 gate order in the handoff branch: identity, then the
		// writer gate, then the operation rules.
		{name: "handoff execution with another descriptor is missing-readiness", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""),
				fxExecOpt(func() ExecutionIdentity { x := fxExec(1, ReadOnly); x.Descriptor = fxCursor; return x }()))),
			want: Deny(DenyMissingReadiness)},
		{name: "handoff identity mismatch is missing-readiness even when unsafe", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(true), fxHandoff(OpRunChecks, "t", "c", ""),
				fxInspected(InspectionUnsafe, "x"),
				fxExecOpt(func() ExecutionIdentity { x := fxExec(1, IsolatedWrite); x.APISpend = APISpendApproved; return x }()))),
			want: Deny(DenyMissingReadiness)},
		{name: "handoff execution under another access mode is missing-readiness", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""), fxExecOpt(fxExec(1, IsolatedWrite)))),
			want:  Deny(DenyMissingReadiness)},
		{name: "handoff execution whose contract differs from the prepared one is missing-readiness", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw, func(e *Event) { e.Recovery.NextExecution.Contract = ContractLegacy }),
				fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			want: Deny(DenyMissingReadiness), rejected: true},
		{name: "unsafe handoff stops unsafe-writer", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""), fxInspected(InspectionUnsafe, "x"))),
			want:  Stop(StopUnsafeWriter)},
		{name: "unsafe handoff with a matching execution stops unsafe-writer", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""), fxInspected(InspectionUnsafe, "x"), fxExecOpt(fxExec(1, ReadOnly)))),
			want:  Stop(StopUnsafeWriter)},
		{name: "started writer handoff without inspection inspects", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(true), fxHandoff(OpRunChecks, "t", "c", ""))), want: fxInspect},
		{name: "started writer handoff without inspection inspects before handoff-malformed", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, " ", "c", ""))), want: fxInspect},
		{name: "completed operation for an uninspected writer handoff inspects", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw, func(e *Event) { e.Inspection = nil }), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			want:  fxInspect, rejected: true},
		{name: "existing output file is missing-readiness", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw)),
			fs: func() FileFacts {
				f := fxPrepared(2, iw)
				f.files = map[string]bool{fxExec(2, iw).OutputPath: true}
				return f
			}(),
			want: Deny(DenyMissingReadiness)},
		{name: "handoff continuation without recovery is missing-readiness", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw, func(e *Event) { e.Recovery = nil }), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			want:  Deny(DenyMissingReadiness)},
		{name: "blank handoff task is handoff-malformed", golden: "policy-denied-handoff-malformed", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, " ", "cp-3", ""))), want: Deny(DenyHandoffMalformed)},
		{name: "missing handoff is handoff-malformed", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp)), want: Deny(DenyHandoffMalformed)},
		{name: "blank handoff ref is handoff-malformed", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", "  "))), want: Deny(DenyHandoffMalformed)},
		{name: "mismatched operation is conflicting-operation", golden: "policy-denied-conflicting-operation", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeComplete, OpCommitCheckpoint, "task-7", "cp-3")), want: Deny(DenyConflictingOperation), rejected: true},
		{name: "operation for another checkpoint is conflicting-operation", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-4")), want: Deny(DenyConflictingOperation), rejected: true},
		{name: "second operation is conflicting-operation", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), fxOp(0, OutcomeFailed, OpRunChecks, "task-7", "cp-3"), fxOp(0, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			want:  Deny(DenyConflictingOperation), rejected: true},
		{name: "operation after a fallback outcome is conflicting-operation", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted), fxOp(0, OutcomeComplete, OpRunChecks, "t", "c")), want: Deny(DenyConflictingOperation), rejected: true},
		{name: "operations only is ambiguous-state", golden: "policy-denied-ambiguous-state", lane: lane,
			state: fxState(ro, nil, fxOp(0, OutcomeComplete, OpRunChecks, "t", "c")), want: Deny(DenyAmbiguousState), rejected: true},
		{name: "anchor off the lane is ambiguous-state", lane: lane,
			state: fxState(ro, nil, fxEvent(7, OutcomePermissionBlocked, fxDenied(DeniedPermission))), want: Deny(DenyAmbiguousState), rejected: true},
		{name: "negative anchor is ambiguous-state", lane: lane,
			state: fxState(ro, nil, fxEvent(-1, OutcomeUsageExhausted)), want: Deny(DenyAmbiguousState), rejected: true},
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	for _, tc := range nextCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, err := json.Marshal(tc.state)
			require.NoError(t, err)
			got := Next(tc.lane, tc.state, tc.fs)
			require.Equal(t, tc.want, got)
			require.Equal(t, got, Next(tc.lane, tc.state, tc.fs), "Next is deterministic")
			after, err := json.Marshal(tc.state)
			require.NoError(t, err)
			require.JSONEq(t, string(before), string(after), "Next must not modify the state")
		})
	}
}

// TestNextValidHistories checks that every case whose history is valid
// also passes ValidateHistory, so the Next table does not lean on states
// the CLI would reject before deciding.
func TestNextValidHistories(t *testing.T) {
	t.Parallel()
	for _, tc := range nextCases() {
		if tc.rejected {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, ValidateHistory(tc.lane, tc.state))
		})
	}
}

// TestNextGolden pins the JSON of one decision per kind and reason.
func TestNextGolden(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range nextCases() {
		if tc.golden == "" {
			continue
		}
		seen[tc.golden] = true
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(Next(tc.lane, tc.state, tc.fs), "", "  ")
			require.NoError(t, err)
			golden.Check(t, "testdata/next/"+tc.golden+".golden", append(got, '\n'))
		})
	}
	want := []string{"launch", "continue", "parent-operation", "inspect"}
	for _, r := range []StopReason{StopComplete, StopChainExhausted, StopNotEligible, StopUnauthorized, StopUnsafeWriter} {
		want = append(want, "stop-"+string(r))
	}
	for _, r := range emittedDenials {
		want = append(want, "policy-denied-"+string(r))
	}
	for _, name := range want {
		require.True(t, seen[name], "no golden for %s", name)
	}
}

// emittedDenials are the policy-denied reasons Next emits; the other four
// declared reasons are never emitted, like the reference helper.
var emittedDenials = []DenyReason{DenyUnsupportedTool, DenyNoContinuation, DenyChangedFiles, DenyExhaustedAllowance,
	DenyMissingReadiness, DenyHandoffMalformed, DenyConflictingOperation, DenyAmbiguousState}

// TestNextNeverEmitsDeclaredOnlyDenials runs every table case and checks
// that the declared-only reasons never appear.
func TestNextNeverEmitsDeclaredOnlyDenials(t *testing.T) {
	t.Parallel()
	for _, tc := range nextCases() {
		d := Next(tc.lane, tc.state, tc.fs)
		for _, r := range []DenyReason{DenyRepeatDenial, DenyLiveWriter, DenyMissingCorrection, DenyMissingOperation} {
			require.False(t, d.Kind == DecidePolicyDenied && d.Reason == string(r), "%s: emitted %s", tc.name, r)
		}
	}
}

// TestNextHeldDecisionsCarryOnlyKindAndReason checks section 4's rule for
// every table case: inspect, stop and policy-denied decisions serialize to
// exactly {"kind","reason"}, never an attemptIndex.
func TestNextHeldDecisionsCarryOnlyKindAndReason(t *testing.T) {
	t.Parallel()
	kinds := map[DecisionKind]int{}
	for _, tc := range nextCases() {
		d := Next(tc.lane, tc.state, tc.fs)
		if d.Kind != DecideInspect && d.Kind != DecideStop && d.Kind != DecidePolicyDenied {
			continue
		}
		kinds[d.Kind]++
		b, err := json.Marshal(d)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, []string{"kind", "reason"}, keys, "%s: %s", tc.name, b)
	}
	for _, k := range []DecisionKind{DecideInspect, DecideStop, DecidePolicyDenied} {
		require.Positive(t, kinds[k], "no table case decides %s", k)
	}
}

// TestNextDecisionJSON checks the wire shape details the parent relies on:
// attemptIndex 0 is present, ref is omitted when empty, stop carries only
// kind and reason.
func TestNextDecisionJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		d         Decision
		has, lack []string
	}{
		{"launch at 0 keeps attemptIndex", fxLaunch(fxLane(), 0), []string{`"attemptIndex":0`, `"execution":1`, `"kind":"launch"`}, []string{"preparedExecution", "reason"}},
		{"operation without ref omits ref", Next(fxLane(), fxState(ReadOnly, nil, fxEvent(0, OutcomeNeedsParentOp, fxHandoff(OpRunChecks, "t", "c", ""))), nil),
			[]string{`"operation":{"kind":"run-checks","taskId":"t","checkpointId":"c"}`}, []string{"ref", "execution"}},
		{"stop is kind and reason only", Stop(StopComplete), []string{`{"kind":"stop","reason":"complete"}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tc.d)
			require.NoError(t, err)
			for _, s := range tc.has {
				require.Contains(t, string(b), s)
			}
			for _, s := range tc.lack {
				require.False(t, strings.Contains(string(b), s), "%s contains %s", b, s)
			}
		})
	}
}
