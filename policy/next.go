package policy

import "slices"

// Next decides a lane's next step from its saved policy and history (the
// reference helper's nextAttempt). It is pure and deterministic: the same
// lane, state and file facts always give the same decision. fs supplies the
// live facts of the continuation readiness gate; nil skips them.
//
// Next assumes nothing about st: the CLI runs DecodeLaneState and
// ValidateHistory first, but a history those reject still gets a decision
// here (ambiguous-state or conflicting-operation where no step fits), never
// a panic. The algorithm:
//
//  1. Any execution event (not a parentOperation) that is complete: stop
//     complete.
//  2. The anchor is the last execution event; a history of parent
//     operations only is policy-denied ambiguous-state, as is an anchor whose
//     attemptIndex is not on the lane.
//  3. By the anchor's status: failed stops not-eligible; needs-parent-operation
//     goes to the handoff decision; parent operations after any other anchor
//     are policy-denied conflicting-operation; permission-blocked passes the
//     writer gate (step 4) and then goes to the denial decision; an outcome
//     outside lane.Fallback stops not-eligible.
//  4. The writer gate: an unsafe inspection stops unsafe-writer in any access
//     mode; an isolated-write anchor not proven unstarted
//     (processStarted != false) needs a clear inspection with a non-blank
//     evidenceRef, else inspect. The handoff decision applies the same gate
//     after its identity check.
//  5. Scan the attempts after the anchor (from 0 for an empty history): a
//     blocked attempt stops unauthorized, even if its group is exhausted; an
//     attempt whose exhaustion group is in st.ExhaustedGroups is skipped; the
//     first other attempt is launched. Running off the end stops
//     chain-exhausted.
func Next(lane LanePolicy, st LaneState, fs FileFacts) Decision {
	for _, e := range st.Events {
		if !isOperation(e) && e.Status == OutcomeComplete {
			return Stop(StopComplete)
		}
	}
	if len(st.Events) == 0 {
		return scanAttempts(lane, st, 0)
	}
	a := Anchor(st.Events)
	if a < 0 {
		return Deny(DenyAmbiguousState)
	}
	last := st.Events[a]
	if last.AttemptIndex < 0 || last.AttemptIndex >= len(lane.Attempts) {
		return Deny(DenyAmbiguousState)
	}
	switch {
	case last.Status == OutcomeFailed:
		return Stop(StopNotEligible)
	case last.Status == OutcomeNeedsParentOp:
		return handoffDecision(lane, st, a, fs)
	case a != len(st.Events)-1:
		return Deny(DenyConflictingOperation)
	case last.Status == OutcomePermissionBlocked:
		if d, held := writerGate(st, last); held {
			return d
		}
		return deniedDecision(lane, st, a, fs)
	case !lane.Fallback.Allows(last.Status):
		return Stop(StopNotEligible)
	}
	if d, held := writerGate(st, last); held {
		return d
	}
	return scanAttempts(lane, st, last.AttemptIndex+1)
}

// writerGate holds a lane at its anchor e when the writer cannot be trusted
// yet: an unsafe verdict stops unsafe-writer in any access mode, and an
// isolated-write execution not proven unstarted needs a clear inspection
// with a non-blank evidenceRef, else inspect. held is false when the lane
// may go on to the anchor's own rules.
func writerGate(st LaneState, e Event) (d Decision, held bool) {
	if e.Inspection != nil && e.Inspection.State == InspectionUnsafe {
		return Stop(StopUnsafeWriter), true
	}
	if st.Access == IsolatedWrite && !provenUnstarted(e) && !clearlyInspected(e) {
		return Decision{Kind: DecideInspect, Reason: InspectReasonStartedWriter}, true
	}
	return Decision{}, false
}

// handoffIdentityMatches reports whether the execution identity recorded
// with a handoff event e (if any) is a run of the lane's attempt as frozen:
// same descriptor, the saved apiSpend (a legacy sheet's unset accepts a
// legacy run), the lane's access mode, and, when the parent already
// prepared the continuation, the same contract as that prepared execution.
// An event without a recorded execution has nothing to contradict.
func handoffIdentityMatches(attempt AttemptPolicy, st LaneState, e Event) bool {
	x := e.Execution
	if x == nil {
		return true
	}
	if x.Descriptor != attempt.Descriptor || !spendMatches(attempt.APISpend, x.APISpend) || x.Access != st.Access {
		return false
	}
	if e.Recovery != nil && e.Recovery.NextExecution != nil && e.Recovery.NextExecution.Contract != x.Contract {
		return false
	}
	return true
}

// handoffDecision handles a needs-parent-operation anchor at st.Events[a]:
// ask for the operation, or after it continue the same attempt when the
// operation completed and # continuation allows handoff. Before any
// operation rule, the execution recorded with the handoff must be the
// frozen attempt's (else missing-readiness, even over an unsafe verdict),
// and then the writer gate applies.
func handoffDecision(lane LanePolicy, st LaneState, a int, fs FileFacts) Decision {
	last := st.Events[a]
	if !handoffIdentityMatches(lane.Attempts[last.AttemptIndex], st, last) {
		return Deny(DenyMissingReadiness)
	}
	if d, held := writerGate(st, last); held {
		return d
	}
	if !handoffWellFormed(last.Handoff) {
		return Deny(DenyHandoffMalformed)
	}
	ops := st.Events[a+1:]
	if len(ops) == 0 {
		h := last.Handoff
		return Decision{
			Kind:         DecideParentOperation,
			AttemptIndex: intPtr(last.AttemptIndex),
			Operation:    &Operation{Kind: h.Operation, TaskID: h.TaskID, CheckpointID: h.CheckpointID, Ref: h.Ref},
		}
	}
	// One handoff is answered by exactly one operation: a second record
	// (even a retry of a failed one) needs a newly reviewed checkpoint.
	if len(ops) > 1 || !answers(ops[0], last) {
		return Deny(DenyConflictingOperation)
	}
	if ops[0].Status != OutcomeComplete {
		return Stop(StopNotEligible)
	}
	if !lane.Continuation.Allows(ContinueHandoff) {
		return Deny(DenyNoContinuation)
	}
	return continueDecision(lane, st, a, fs)
}

// deniedDecision handles a permission-blocked anchor at st.Events[a]. The
// cause is judged before the saved policy: only a verified permission
// interruption can ever continue, so other causes are denied for what they
// are whether or not the sheet declares # continuation.
func deniedDecision(lane LanePolicy, st LaneState, a int, fs FileFacts) Decision {
	switch st.Events[a].DeniedCause {
	case DeniedPermission:
	case DeniedChangedFiles:
		return Deny(DenyChangedFiles)
	default: // unsupported-tool, guard, other (and none, which decoding rejects)
		return Deny(DenyUnsupportedTool)
	}
	if !lane.Continuation.Allows(ContinuePermission) {
		return Deny(DenyNoContinuation)
	}
	return continueDecision(lane, st, a, fs)
}

// continueDecision applies the continuation allowance and the readiness
// gate to the interrupted execution st.Events[a], whose cause the saved
// policy already allows.
func continueDecision(lane LanePolicy, st LaneState, a int, fs FileFacts) Decision {
	i := st.Events[a].AttemptIndex
	k := executionsOf(st.Events, i) + 1
	if k > lane.Continuation.MaxExecutions {
		return Deny(DenyExhaustedAllowance)
	}
	if recoveryReady(lane, st, a, fs) != nil {
		return Deny(DenyMissingReadiness)
	}
	prepared := *st.Events[a].Recovery.NextExecution
	attempt := lane.Attempts[i]
	return Decision{
		Kind:              DecideContinue,
		AttemptIndex:      intPtr(i),
		Attempt:           &attempt,
		Execution:         k,
		PreparedExecution: &prepared,
	}
}

// scanAttempts launches the first attempt from index from on that is not
// skipped for an exhausted group. Authorization is enforced before skipping:
// a blocked route stops the lane and is never skipped to reach a later one.
func scanAttempts(lane LanePolicy, st LaneState, from int) Decision {
	for i := max(from, 0); i < len(lane.Attempts); i++ {
		ap := lane.Attempts[i]
		if !ap.Authorization.Allowed() {
			return Stop(StopUnauthorized)
		}
		if slices.Contains(st.ExhaustedGroups, ap.ExhaustionGroup) {
			continue
		}
		return Decision{Kind: DecideLaunch, AttemptIndex: intPtr(i), Attempt: &ap, Execution: 1}
	}
	return Stop(StopChainExhausted)
}

// isOperation reports whether e records a parent operation rather than an
// execution of an attempt.
func isOperation(e Event) bool { return e.ParentOperation != nil }

// Anchor returns the index of the last execution event of a lane's
// history (not a parent operation), the one Next decides from, or -1.
func Anchor(events []Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if !isOperation(events[i]) {
			return i
		}
	}
	return -1
}

// executionsOf counts the executions of attempt i in the history.
func executionsOf(events []Event, i int) int {
	n := 0
	for _, e := range events {
		if !isOperation(e) && e.AttemptIndex == i {
			n++
		}
	}
	return n
}

// handoffWellFormed reports whether h names an operation, a task and a
// checkpoint; an empty ref means none.
func handoffWellFormed(h *Handoff) bool {
	return h != nil && slices.Contains(stateOperations, h.Operation) &&
		!blank(h.TaskID) && !blank(h.CheckpointID) && (h.Ref == "" || !blank(h.Ref))
}

// answers reports whether the parentOperation event op is the operation the
// handoff event asked for.
func answers(op, handoff Event) bool {
	p, h := op.ParentOperation, handoff.Handoff
	return p != nil && h != nil && op.AttemptIndex == handoff.AttemptIndex &&
		p.Kind == h.Operation && p.TaskID == h.TaskID && p.CheckpointID == h.CheckpointID
}

// provenUnstarted reports whether the event proves no workload started.
func provenUnstarted(e Event) bool { return e.ProcessStarted != nil && !*e.ProcessStarted }

// clearlyInspected reports whether the parent recorded a clear verdict with
// evidence.
func clearlyInspected(e Event) bool {
	return e.Inspection != nil && e.Inspection.State == InspectionClear && !blank(e.Inspection.EvidenceRef)
}

func intPtr(i int) *int { return &i }
