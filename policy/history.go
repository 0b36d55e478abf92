package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ValidateHistory checks that st.Events is a history the saved lane policy
// allows; the CLI runs it after DecodeLaneState and before Next. Each
// failure is a *UsageError (exit 64) naming the event, checked event by
// event in order:
//
//   - attemptIndex is on the lane;
//   - the attempt is authorized ("does not authorize" otherwise);
//   - an explicit continuationOrdinal equals the execution's ordinal, which
//     counts executions of the same attempt from 0 (parentOperation events
//     are not executions and their ordinal, if any, is ignored);
//   - the first event is not a parentOperation;
//   - every event is a step the policy allows from the one before it:
//     after a fallback outcome listed in # fallback, a later attempt, once
//     the writer gate passed (no unsafe verdict; an isolated-write event not
//     proven unstarted carries a clear inspection); after permission-blocked
//     with deniedCause permission, the same attempt under a # continuation
//     allowing permission; after needs-parent-operation, exactly the parent
//     operation it asked for, once the handoff's execution matched the
//     attempt and the writer gate passed (else ErrUnadvanceableHistory);
//     after a completed parent operation, the
//     handoff's attempt under a # continuation allowing handoff. Nothing
//     follows complete, failed, an outcome outside # fallback, or a failed
//     parent operation;
//   - a continued execution stays within # continuation max, its recovery
//     passes the readiness gate (without live file facts) and its execution
//     equals the prepared recovery.nextExecution;
//   - attempts skipped before the first event or between a fallback and
//     the next attempt are authorized and their group is in exhaustedGroups
//     ("event history skips …").
func ValidateHistory(lane LanePolicy, st LaneState) error {
	ordinals := map[int]int{}
	for i, e := range st.Events {
		at := fmt.Sprintf("state events[%d]", i)
		if e.AttemptIndex < 0 || e.AttemptIndex >= len(lane.Attempts) {
			return Usagef("%s.attemptIndex %d is out of range: lane %q has %d attempts", at, e.AttemptIndex, lane.ID, len(lane.Attempts))
		}
		ap := lane.Attempts[e.AttemptIndex]
		if !ap.Authorization.Allowed() {
			return Usagef("%s: the saved policy does not authorize attempt %d (%s)%s", at, e.AttemptIndex, ap.Descriptor, because(ap.Authorization))
		}
		if !isOperation(e) {
			want := ordinals[e.AttemptIndex]
			if e.ContinuationOrdinal != nil && *e.ContinuationOrdinal != want {
				return Usagef("%s.continuationOrdinal is %d, but this is execution %d of attempt %d (ordinal %d)", at, *e.ContinuationOrdinal, want+1, e.AttemptIndex, want)
			}
			ordinals[e.AttemptIndex]++
		}
		var err error
		if i == 0 {
			err = firstStep(lane, st)
		} else {
			err = nextStep(lane, st, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// firstStep checks the opening event: an execution, reached from attempt 0
// only over exhausted authorized attempts.
func firstStep(lane LanePolicy, st LaneState) error {
	e := st.Events[0]
	if isOperation(e) {
		return Usagef("state events[0]: a parentOperation cannot open the history; it answers an earlier needs-parent-operation")
	}
	return checkSkips(lane, st, 0, 0, e.AttemptIndex)
}

// nextStep checks that st.Events[i] may follow st.Events[i-1].
func nextStep(lane LanePolicy, st LaneState, i int) error {
	prev, cur := st.Events[i-1], st.Events[i]
	at := fmt.Sprintf("state events[%d]", i)
	switch {
	case isOperation(prev):
		return afterOperation(lane, st, i)
	case prev.Status == OutcomeComplete:
		return Usagef("%s: nothing may follow events[%d], which is complete", at, i-1)
	case prev.Status == OutcomeNeedsParentOp:
		return afterHandoff(lane, st, i)
	case prev.Status == OutcomePermissionBlocked:
		return afterPermission(lane, st, i)
	case prev.Status == OutcomeFailed:
		return Usagef("%s: nothing may follow events[%d], which failed; failed never advances", at, i-1)
	case !lane.Fallback.Allows(prev.Status):
		return Usagef("%s: nothing may follow events[%d]: %s is not in the saved # fallback %s", at, i-1, prev.Status, fallbackList(lane.Fallback))
	}

	// A fallback outcome: the next event launches a later attempt.
	if isOperation(cur) {
		return Usagef("%s: a parentOperation may only follow needs-parent-operation, but events[%d] is %s", at, i-1, prev.Status)
	}
	if cur.AttemptIndex <= prev.AttemptIndex {
		return Usagef("%s: %s on attempt %d (events[%d]) may only be followed by a later attempt, got attempt %d", at, prev.Status, prev.AttemptIndex, i-1, cur.AttemptIndex)
	}
	if prev.Inspection != nil && prev.Inspection.State == InspectionUnsafe {
		return Usagef("%s: events[%d] was inspected unsafe, which stops the lane", at, i-1)
	}
	if st.Access == IsolatedWrite && !provenUnstarted(prev) && !clearlyInspected(prev) {
		return Usagef("%s: events[%d] is an isolated-write attempt not proven unstarted; it needs a clear inspection before the lane advances", at, i-1)
	}
	return checkSkips(lane, st, i, prev.AttemptIndex+1, cur.AttemptIndex)
}

// ErrUnadvanceableHistory is the reference helper's one message for a
// parent operation recorded where the saved policy would not have asked for
// it: after a handoff whose execution does not match the attempt, whose
// writer was inspected unsafe, or whose started isolated-write writer has no
// clear inspection.
const ErrUnadvanceableHistory = "events contain a continuation the saved policy could not advance, a parent operation that does not match its request, or a started writer without a clear inspection"

// afterHandoff checks that st.Events[i] is exactly the operation the
// handoff at st.Events[i-1] asked for, and that the policy would have asked
// for it: the handoff passed its identity check and the writer gate, as in
// Next's handoff decision.
func afterHandoff(lane LanePolicy, st LaneState, i int) error {
	prev, cur := st.Events[i-1], st.Events[i]
	at := fmt.Sprintf("state events[%d]", i)
	if _, held := writerGate(st, prev); held || !handoffIdentityMatches(lane.Attempts[prev.AttemptIndex], st, prev) {
		return Usagef("%s", ErrUnadvanceableHistory)
	}
	if !handoffWellFormed(prev.Handoff) {
		return Usagef("%s: the handoff on events[%d] is malformed (it needs an operation, taskId and checkpointId)", at, i-1)
	}
	h := prev.Handoff
	if !isOperation(cur) {
		return Usagef("%s: needs-parent-operation at events[%d] must be followed by its parentOperation (%s %s/%s), got an execution", at, i-1, h.Operation, h.TaskID, h.CheckpointID)
	}
	if !answers(cur, prev) {
		p := cur.ParentOperation
		return Usagef("%s: parentOperation %s %s/%s on attempt %d is not the operation events[%d] asked for (%s %s/%s on attempt %d)",
			at, p.Kind, p.TaskID, p.CheckpointID, cur.AttemptIndex, i-1, h.Operation, h.TaskID, h.CheckpointID, prev.AttemptIndex)
	}
	return nil
}

// afterOperation checks that st.Events[i] continues the handoff's attempt
// after the completed parent operation at st.Events[i-1]. Earlier steps
// guarantee st.Events[i-2] is the handoff that operation answered.
func afterOperation(lane LanePolicy, st LaneState, i int) error {
	op, cur := st.Events[i-1], st.Events[i]
	at := fmt.Sprintf("state events[%d]", i)
	if op.Status != OutcomeComplete {
		return Usagef("%s: nothing may follow events[%d], a parent operation that %s", at, i-1, op.Status)
	}
	if isOperation(cur) || cur.AttemptIndex != op.AttemptIndex {
		return Usagef("%s: the completed parent operation at events[%d] may only be followed by the continued execution of attempt %d", at, i-1, op.AttemptIndex)
	}
	if !lane.Continuation.Allows(ContinueHandoff) {
		return Usagef("%s: continues attempt %d after a handoff, but the saved policy has no # continuation for handoff", at, cur.AttemptIndex)
	}
	return checkContinued(lane, st, i, i-2)
}

// afterPermission checks that st.Events[i] continues the attempt blocked at
// st.Events[i-1].
func afterPermission(lane LanePolicy, st LaneState, i int) error {
	prev, cur := st.Events[i-1], st.Events[i]
	at := fmt.Sprintf("state events[%d]", i)
	if isOperation(cur) || cur.AttemptIndex != prev.AttemptIndex {
		return Usagef("%s: permission-blocked at events[%d] may only be followed by the same attempt %d under # continuation", at, i-1, prev.AttemptIndex)
	}
	if prev.DeniedCause != DeniedPermission {
		return Usagef("%s: events[%d] was blocked by %s, which cannot continue; only a permission cause can", at, i-1, prev.DeniedCause)
	}
	if !lane.Continuation.Allows(ContinuePermission) {
		return Usagef("%s: continues attempt %d after permission-blocked, but the saved policy has no # continuation for permission", at, cur.AttemptIndex)
	}
	return checkContinued(lane, st, i, i-1)
}

// checkContinued checks the continued execution st.Events[i] of the
// interrupted execution st.Events[anchor]: within the allowance, prepared by
// a ready recovery, and equal to the prepared identity.
func checkContinued(lane LanePolicy, st LaneState, i, anchor int) error {
	cur := st.Events[i]
	at := fmt.Sprintf("state events[%d]", i)
	k := executionsOf(st.Events[:i], cur.AttemptIndex) + 1
	if k > lane.Continuation.MaxExecutions {
		return Usagef("%s: execution %d of attempt %d exceeds the saved # continuation max of %d", at, k, cur.AttemptIndex, lane.Continuation.MaxExecutions)
	}
	prefix := LaneState{Events: st.Events[:i], ExhaustedGroups: st.ExhaustedGroups, Access: st.Access}
	if err := recoveryReady(lane, prefix, anchor, nil); err != nil {
		return Usagef("%s: the continuation prepared on events[%d] is not ready: %v", at, anchor, err)
	}
	prepared := st.Events[anchor].Recovery.NextExecution
	if cur.Execution == nil || *cur.Execution != *prepared {
		return Usagef("%s: the continued execution must equal the prepared continuation events[%d].recovery.nextExecution (id %q)", at, anchor, prepared.ID)
	}
	return nil
}

// checkSkips checks that the attempts in [from, to) that the history jumps
// over could have been skipped: authorized, with an exhausted group.
func checkSkips(lane LanePolicy, st LaneState, i, from, to int) error {
	for j := from; j < to; j++ {
		ap := lane.Attempts[j]
		if !ap.Authorization.Allowed() {
			return Usagef("state events[%d]: event history skips attempt %d (%s), which the saved policy does not authorize", i, j, ap.Descriptor)
		}
		if !slices.Contains(st.ExhaustedGroups, ap.ExhaustionGroup) {
			return Usagef("state events[%d]: event history skips attempt %d (%s), but its group %s is not in exhaustedGroups", i, j, ap.Descriptor, ap.ExhaustionGroup)
		}
	}
	return nil
}

// because renders a blocked authorization's reason for a message.
func because(a Authorization) string {
	if a.Reason == "" {
		return ""
	}
	return ": " + a.Reason
}

// fallbackList renders the saved fallback outcomes for a message.
func fallbackList(f FallbackPolicy) string {
	names := make([]string, len(f.On))
	for i, o := range f.On {
		names[i] = string(o)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
