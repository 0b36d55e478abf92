package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateHistory(t *testing.T) {
	t.Parallel()
	ro, iw := ReadOnly, IsolatedWrite
	lane := fxLane()
	both := fxLaneWith(fxBoth)
	broad := fxLaneWith(fxBroad)
	blocked1 := fxLaneWith(func(l *LanePolicy) { l.Attempts[1] = fxBlocked(l.Attempts[1]) })
	grokOnly := []Provider{Grok}
	runChecks := func(i int, s Outcome) Event { return fxOp(i, s, OpRunChecks, "task-7", "cp-3") }
	cases := []struct {
		name  string
		lane  LanePolicy
		state LaneState
		want  string // error substring; "" means valid
	}{
		// valid histories
		{name: "empty history", lane: lane, state: fxState(ro, nil)},
		{name: "quota fallback to the next attempt", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxOrdinal(0)), fxEvent(1, OutcomeComplete, fxOrdinal(0)))},
		{name: "fallback skips an exhausted authorized attempt", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted), fxEvent(2, OutcomeComplete))},
		{name: "first event skips exhausted attempts", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(2, OutcomeFailed))},
		{name: "broad fallback on route-unavailable", lane: broad,
			state: fxState(ro, nil, fxEvent(0, OutcomeRouteUnavailable), fxEvent(1, OutcomeTerminalFailure), fxEvent(2, OutcomeComplete))},
		{name: "writer advances after a clear inspection", lane: lane,
			state: fxState(iw, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(true), fxClear), fxEvent(1, OutcomeComplete))},
		{name: "unstarted writer advances without inspection", lane: lane,
			state: fxState(iw, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(false)), fxEvent(1, OutcomeComplete))},
		{name: "permission continuation with the prepared execution", lane: both,
			state: fxState(iw, nil, fxBlockedRun(1, iw, fxOrdinal(0)), fxEvent(0, OutcomeComplete, fxOrdinal(1), fxExecOpt(fxExec(2, iw))))},
		{name: "handoff, operation and continuation", lane: both,
			state: fxState(iw, nil, fxHandoffRun(1, iw), runChecks(0, OutcomeComplete), fxEvent(0, OutcomeComplete, fxOrdinal(1), fxExecOpt(fxExec(2, iw))))},
		{name: "clear-inspected writer handoff answered", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(true), fxClear, fxHandoff(OpRunChecks, "task-7", "cp-3", "")), runChecks(0, OutcomeComplete))},
		{name: "unstarted writer handoff answered uninspected", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(false), fxHandoff(OpRunChecks, "task-7", "cp-3", "")), runChecks(0, OutcomeComplete))},
		{name: "handoff then failed operation", lane: lane,
			state: fxState(ro, nil, fxHandoffRun(1, ro), runChecks(0, OutcomeFailed))},
		{name: "operation ordinal is ignored", lane: lane,
			state: fxState(ro, nil, fxHandoffRun(1, ro), func() Event { e := runChecks(0, OutcomeComplete); e.ContinuationOrdinal = intPtr(9); return e }())},
		{name: "continuation then fallback to a later attempt", lane: fxLaneWith(func(l *LanePolicy) { fxBoth(l); fxBroad(l) }),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeTerminalFailure, fxExecOpt(fxExec(2, ro))), fxEvent(1, OutcomeComplete))},

		// attemptIndex in range
		{name: "attemptIndex past the lane", lane: lane, state: fxState(ro, nil, fxEvent(3, OutcomeFailed)),
			want: `state events[0].attemptIndex 3 is out of range: lane "swarm workers#1" has 3 attempts`},
		{name: "negative attemptIndex", lane: lane, state: fxState(ro, nil, fxEvent(-1, OutcomeFailed)),
			want: "state events[0].attemptIndex -1 is out of range"},

		// blocked attempt
		{name: "event on a blocked attempt", lane: blocked1,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted), fxEvent(1, OutcomeFailed)),
			want:  "state events[1]: the saved policy does not authorize attempt 1 (cursor:composer-2@default): funding unknown"},

		// continuationOrdinal
		{name: "first execution with ordinal 1", lane: lane, state: fxState(ro, nil, fxEvent(0, OutcomeFailed, fxOrdinal(1))),
			want: "state events[0].continuationOrdinal is 1, but this is execution 1 of attempt 0 (ordinal 0)"},
		{name: "ordinals restart per attempt", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxOrdinal(0)), fxEvent(1, OutcomeFailed, fxOrdinal(1))),
			want:  "state events[1].continuationOrdinal is 1"},
		{name: "continued execution with ordinal 0", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeComplete, fxOrdinal(0), fxExecOpt(fxExec(2, ro)))),
			want:  "state events[1].continuationOrdinal is 0, but this is execution 2 of attempt 0 (ordinal 1)"},

		// first event
		{name: "history opens with a parent operation", lane: lane, state: fxState(ro, nil, runChecks(0, OutcomeComplete)),
			want: "state events[0]: a parentOperation cannot open the history"},

		// fallback steps
		{name: "fallback to the same attempt", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted), fxEvent(0, OutcomeComplete)),
			want:  "state events[1]: usage-exhausted on attempt 0 (events[0]) may only be followed by a later attempt, got attempt 0"},
		{name: "fallback to an earlier attempt", lane: lane,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted), fxEvent(2, OutcomeUsageExhausted), fxEvent(1, OutcomeComplete)),
			want:  "state events[2]: usage-exhausted on attempt 2 (events[1]) may only be followed by a later attempt, got attempt 1"},
		{name: "outcome outside fallback advances", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeRouteUnavailable), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: nothing may follow events[0]: route-unavailable is not in the saved # fallback [usage-exhausted]"},
		{name: "empty fallback advances on quota", lane: fxLaneWith(func(l *LanePolicy) { l.Fallback = FallbackPolicy{On: []Outcome{}} }),
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted), fxEvent(1, OutcomeComplete)),
			want:  "usage-exhausted is not in the saved # fallback []"},
		{name: "failed advances", lane: broad,
			state: fxState(ro, nil, fxEvent(0, OutcomeFailed), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: nothing may follow events[0], which failed"},
		{name: "event after complete", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeComplete), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: nothing may follow events[0], which is complete"},
		{name: "operation after a fallback outcome", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted), runChecks(0, OutcomeComplete)),
			want:  "state events[1]: a parentOperation may only follow needs-parent-operation"},
		{name: "writer advances past an unsafe verdict", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxInspected(InspectionUnsafe, "x")), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: events[0] was inspected unsafe"},
		{name: "started writer advances uninspected", lane: lane,
			state: fxState(iw, grokOnly, fxEvent(0, OutcomeUsageExhausted, fxStarted(true)), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: events[0] is an isolated-write attempt not proven unstarted"},

		// gaps
		{name: "gap over an attempt whose group is not exhausted", lane: lane,
			state: fxState(ro, grokOnly, fxEvent(0, OutcomeUsageExhausted), fxEvent(2, OutcomeComplete)),
			want:  "state events[1]: event history skips attempt 1 (cursor:composer-2@default), but its group cursor is not in exhaustedGroups"},
		{name: "gap over a blocked attempt", lane: blocked1,
			state: fxState(ro, []Provider{Grok, Cursor}, fxEvent(0, OutcomeUsageExhausted), fxEvent(2, OutcomeComplete)),
			want:  "state events[1]: event history skips attempt 1 (cursor:composer-2@default), which the saved policy does not authorize"},
		{name: "first event skips an unexhausted attempt", lane: lane,
			state: fxState(ro, nil, fxEvent(1, OutcomeComplete)),
			want:  "state events[0]: event history skips attempt 0 (grok:grok-4.7@xhigh), but its group grok is not in exhaustedGroups"},

		// permission-blocked steps
		{name: "permission continuation without # continuation", lane: lane,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[1]: continues attempt 0 after permission-blocked, but the saved policy has no # continuation for permission"},
		{name: "permission continuation under handoff-only continuation", lane: fxLaneWith(fxContinue(2, ContinueHandoff)),
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "no # continuation for permission"},
		{name: "permission-blocked followed by a later attempt", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(1, OutcomeComplete)),
			want:  "state events[1]: permission-blocked at events[0] may only be followed by the same attempt 0 under # continuation"},
		{name: "guard denial continued", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro, fxDenied(DeniedGuard)), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[1]: events[0] was blocked by guard, which cannot continue"},
		{name: "continuation past max", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxBlockedRun(2, ro), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(3, ro)))),
			want:  "state events[2]: execution 3 of attempt 0 exceeds the saved # continuation max of 2"},
		{name: "continuation from an unready recovery", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro, func(e *Event) { e.Recovery.SnapshotDigest = "abc" }), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[1]: the continuation prepared on events[0] is not ready: recovery.snapshotDigest must be 64 lowercase hex digits"},
		{name: "continuation with a different execution", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(7, ro)))),
			want:  `state events[1]: the continued execution must equal the prepared continuation events[0].recovery.nextExecution (id "exec-2")`},
		{name: "continuation without an execution", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), fxEvent(0, OutcomeComplete)),
			want:  "must equal the prepared continuation"},
		{name: "operation after permission-blocked", lane: both,
			state: fxState(ro, nil, fxBlockedRun(1, ro), runChecks(0, OutcomeComplete)),
			want:  "may only be followed by the same attempt 0 under # continuation"},

		// handoff steps
		{name: "handoff followed by an execution", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[1]: needs-parent-operation at events[0] must be followed by its parentOperation (run-checks task-7/cp-3)"},
		// Section 4: a parent operation the policy would not have asked for.
		{name: "started writer handoff answered uninspected", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(true), fxHandoff(OpRunChecks, "task-7", "cp-3", "")), runChecks(0, OutcomeComplete)),
			want:  ErrUnadvanceableHistory},
		{name: "writer handoff of unknown start answered with inspection none", lane: lane,
			state: fxState(iw, nil, fxEvent(0, OutcomeNeedsParentOp, fxInspected(InspectionNone, "pending"), fxHandoff(OpRunChecks, "task-7", "cp-3", "")), runChecks(0, OutcomeFailed)),
			want:  ErrUnadvanceableHistory},
		{name: "unsafe handoff answered", lane: lane,
			state: fxState(ro, nil, fxEvent(0, OutcomeNeedsParentOp, fxInspected(InspectionUnsafe, "x"), fxHandoff(OpRunChecks, "task-7", "cp-3", "")), runChecks(0, OutcomeComplete)),
			want:  ErrUnadvanceableHistory},
		{name: "handoff of another descriptor answered", lane: lane,
			state: fxState(ro, nil, fxHandoffRun(1, ro, func(e *Event) { e.Execution.Descriptor = fxCursor }), runChecks(0, OutcomeComplete)),
			want:  ErrUnadvanceableHistory},
		{name: "handoff answered by another operation kind", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), fxOp(0, OutcomeComplete, OpCommitCheckpoint, "task-7", "cp-3")),
			want:  "state events[1]: parentOperation commit-checkpoint task-7/cp-3 on attempt 0 is not the operation events[0] asked for (run-checks task-7/cp-3 on attempt 0)"},
		{name: "handoff answered for another task", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), fxOp(0, OutcomeComplete, OpRunChecks, "task-8", "cp-3")),
			want:  "is not the operation events[0] asked for"},
		{name: "handoff answered on another attempt", lane: both,
			state: fxState(ro, grokOnly, fxHandoffRun(1, ro), fxOp(1, OutcomeComplete, OpRunChecks, "task-7", "cp-3")),
			want:  "on attempt 1 is not the operation events[0] asked for"},
		{name: "malformed handoff answered", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro, fxHandoff(OpRunChecks, "", "cp-3", "")), fxOp(0, OutcomeComplete, OpRunChecks, "", "cp-3")),
			want:  "state events[1]: the handoff on events[0] is malformed"},

		// parent operation steps
		{name: "completed operation continued without # continuation", lane: lane,
			state: fxState(ro, nil, fxHandoffRun(1, ro), runChecks(0, OutcomeComplete), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[2]: continues attempt 0 after a handoff, but the saved policy has no # continuation for handoff"},
		{name: "completed operation followed by a later attempt", lane: both,
			state: fxState(ro, grokOnly, fxHandoffRun(1, ro), runChecks(0, OutcomeComplete), fxEvent(1, OutcomeComplete)),
			want:  "state events[2]: the completed parent operation at events[1] may only be followed by the continued execution of attempt 0"},
		{name: "completed operation followed by another operation", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), runChecks(0, OutcomeComplete), runChecks(0, OutcomeComplete)),
			want:  "may only be followed by the continued execution"},
		{name: "failed operation followed by anything", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), runChecks(0, OutcomeFailed), runChecks(0, OutcomeComplete)),
			want:  "state events[2]: nothing may follow events[1], a parent operation that failed"},
		{name: "handoff continuation with a different execution", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro), runChecks(0, OutcomeComplete), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(5, ro)))),
			want:  "state events[2]: the continued execution must equal the prepared continuation events[0].recovery.nextExecution"},
		{name: "handoff continuation without recovery", lane: both,
			state: fxState(ro, nil, fxHandoffRun(1, ro, func(e *Event) { e.Recovery = nil }), runChecks(0, OutcomeComplete), fxEvent(0, OutcomeComplete, fxExecOpt(fxExec(2, ro)))),
			want:  "state events[2]: the continuation prepared on events[0] is not ready: no recovery recorded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateHistory(tc.lane, tc.state)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.True(t, IsUsage(err), "want a *UsageError, got %T", err)
			require.Contains(t, err.Error(), tc.want)
			if tc.want == ErrUnadvanceableHistory {
				require.Equal(t, ErrUnadvanceableHistory, err.Error(), "the reference's exact message")
			}
		})
	}
}
