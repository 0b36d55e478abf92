package machines

import (
	"slices"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// applyLane folds a lane-level envelope. Every check runs before the lane
// record changes, so a refused envelope leaves the run as it was.
func (r *Run) applyLane(env events.Envelope) error {
	if env.Type.Scope() == events.ScopeRun {
		return inconsistent("%s is a run-level event; it cannot be on a lane", env.Type)
	}
	if r.Created == nil {
		return inconsistent("%s before run-created", env.Type)
	}
	if err := r.checkHead(env); err != nil {
		return err
	}
	if env.Lane < 0 || env.Lane >= len(r.Lanes) {
		return inconsistent("lane %d: the run has %d lanes", env.Lane, len(r.Lanes))
	}
	if r.Closed != nil && env.Type != events.TypeAudit {
		return inconsistent("the run is closed by run-final; only audit may follow")
	}
	if env.Payload == nil || env.Payload.EventType() != env.Type {
		return inconsistent("type %s carries a %T payload", env.Type, env.Payload)
	}
	cur := &r.Lanes[env.Lane]
	if err := checkSeq(cur.Seq, env.Seq); err != nil {
		return err
	}
	if env.Type == events.TypeAudit {
		cur.Seq = max(cur.Seq, env.Seq)
		return nil
	}
	if env.Type == events.TypeRecover {
		// Not a transition: the parent's answer is attached to the
		// interrupted outcome, and the lane stays terminal for the next
		// decision.
		if cur.State != StateTerminal {
			return inconsistent("recover while the lane is %s; only a terminal lane waits for it", cur.State)
		}
		next, err := laneEffect(*cur, env.Payload, r.Created)
		if err != nil {
			return err
		}
		next.Seq = max(cur.Seq, env.Seq)
		*cur = next
		return nil
	}
	if env.Type == events.TypeOperationStep {
		// Not a transition: the parent validated or began the operation
		// the lane awaits.
		if cur.State != StateAwaitingOperation {
			return inconsistent("operation-step while the lane is %s; only a lane awaiting an operation takes one", cur.State)
		}
		next, err := laneEffect(*cur, env.Payload, r.Created)
		if err != nil {
			return err
		}
		next.Seq = max(cur.Seq, env.Seq)
		*cur = next
		return nil
	}
	if env.Type == events.TypeExclude {
		// Not a transition: the gate kept an attempt from launching, and
		// the lane stays where the next decision is made.
		if err := excludeAllowed(cur.State); err != nil {
			return err
		}
		if r.Cancel != nil {
			return inconsistent("exclude after the run was cancelled")
		}
		next, err := laneEffect(*cur, env.Payload, r.Created)
		if err != nil {
			return err
		}
		next.Seq = max(cur.Seq, env.Seq)
		*cur = next
		return nil
	}
	ev, ok := EventOf(env.Type)
	if !ok {
		return inconsistent("%s is no lane event", env.Type)
	}
	if r.Cancel != nil && (ev == EventLaunch || ev == EventContinue) {
		return inconsistent("%s after the run was cancelled", ev)
	}
	to, err := Step(cur.State, ev)
	if err != nil {
		return err
	}
	next, err := laneEffect(*cur, env.Payload, r.Created)
	if err != nil {
		return err
	}
	next.State = to
	next.Seq = max(cur.Seq, env.Seq)
	if f, ok := env.Payload.(events.Finish); ok && f.Stall != nil && f.Stall.ProviderHealth == events.HealthProviderUnhealthy {
		// The attempt stalled and its health probe found the provider
		// unavailable: its group is ineligible for the rest of the run.
		if g := cur.Policy.Attempts[f.Event.AttemptIndex].ExhaustionGroup; !slices.Contains(r.Unhealthy, g) {
			r.Unhealthy = append(r.Unhealthy, g)
		}
	}
	if f, ok := env.Payload.(events.Finish); ok && f.Receipt != nil && f.Malformed == "" &&
		f.Receipt.Status == policy.StatusUnauthenticated && f.Event.ProcessStarted != nil && !*f.Event.ProcessStarted {
		// The preflight proved the provider's CLI signed out: the
		// gate's auth condition fails for its group for the rest of
		// the run.
		if g := cur.Policy.Attempts[f.Event.AttemptIndex].ExhaustionGroup; !slices.Contains(r.SignedOut, g) {
			r.SignedOut = append(r.SignedOut, g)
		}
	}
	*cur = next
	return nil
}

// laneEffect returns the lane record after p, without the machine state,
// or why p cannot apply. It works on a copy: History is cloned before an
// entry changes, so a refused payload leaves the lane untouched.
func laneEffect(l LaneRecord, p events.Payload, c *events.RunCreated) (LaneRecord, error) {
	switch p := p.(type) {
	case events.Launch:
		return dispatch(l, p, false)
	case events.Continue:
		return dispatch(l, events.Launch(p), true)
	case events.Claim:
		if err := sameExecution(l, "claim", p.ExecutionID); err != nil {
			return l, err
		}
		c := p
		l.Claim = &c
	case events.Finish:
		if err := sameExecution(l, "finish", p.ExecutionID); err != nil {
			return l, err
		}
		if p.Event.AttemptIndex != l.Dispatch.AttemptIndex {
			return l, inconsistent("finish of attempt %d for a dispatch of attempt %d", p.Event.AttemptIndex, l.Dispatch.AttemptIndex)
		}
		ev := p.Event
		switch {
		case l.Continued && l.Dispatch.Decision.PreparedExecution != nil:
			// The continued execution is the one its recovery prepared.
			x := *l.Dispatch.Decision.PreparedExecution
			ev.Execution = &x
		case ev.Status == policy.OutcomePermissionBlocked || ev.Status == policy.OutcomeNeedsParentOp:
			// An interrupted execution names itself, for the recovery
			// that may continue it.
			ev.Execution = executionIdentity(l, c)
		}
		l.History = append(cloneHistory(l.History), ev)
		l.Handoff = nil
		if p.Receipt != nil && p.Receipt.Handoff != nil {
			h := *p.Receipt.Handoff
			h.Files, h.Checks = slices.Clone(h.Files), slices.Clone(h.Checks)
			l.Handoff = &h
		}
	case events.OperationStep:
		return operationStep(l, p)
	case events.Recover:
		a := policy.Anchor(l.History)
		if a < 0 {
			return l, inconsistent("recover with no execution outcome to apply it to")
		}
		if st := l.History[a].Status; st != policy.OutcomePermissionBlocked && st != policy.OutcomeNeedsParentOp {
			return l, inconsistent("recover of a %s outcome; only a handoff or a permission blockage is recovered", st)
		}
		// A started writer's outcome carries the verdict the parent gave
		// before its operation (POLICY-CLI.md section 4: the writer gate
		// comes first); a clear one still waits for the recovery, which
		// replaces it with the parent's answer.
		if prior := l.History[a].Inspection; l.History[a].Recovery != nil || (prior != nil && prior.State != string(events.VerdictClear)) {
			return l, inconsistent("recover of an outcome that was already answered")
		}
		l.History = cloneHistory(l.History)
		l.History[a].Inspection = &policy.Inspection{State: string(p.State), EvidenceRef: p.EvidenceRef}
		if p.Recovery != nil {
			rec := *p.Recovery
			if rec.NextExecution != nil {
				x := *rec.NextExecution
				rec.NextExecution = &x
			}
			l.History[a].Recovery = &rec
		}
	case events.Verdict:
		n := len(l.History)
		if n == 0 || l.History[n-1].ParentOperation != nil {
			return l, inconsistent("verdict with no execution outcome to apply it to")
		}
		if prior := l.History[n-1].Inspection; prior != nil {
			return l, inconsistent("verdict %s on an outcome that already has verdict %s", p.State, prior.State)
		}
		l.History = cloneHistory(l.History)
		l.History[n-1].Inspection = &policy.Inspection{State: string(p.State), EvidenceRef: p.EvidenceRef}
	case events.RequestOperation:
		req := p
		l.Request = &req
	case events.OperationDone:
		attempt, err := requestedAttempt(l)
		if err != nil {
			return l, err
		}
		status := policy.OutcomeFailed
		if p.Result == events.OperationSucceeded {
			status = policy.OutcomeComplete
		}
		if l.Pending != nil && p.Digest != l.Pending.Digest {
			return l, inconsistent("operation-done settles digest %q; the pending operation was begun with %s", p.Digest, l.Pending.Digest)
		}
		if l.Pending == nil && p.Ledger != "" {
			return l, inconsistent("operation-done settles a %s ledger record, but no operation was begun", p.Ledger)
		}
		op := p.Operation
		l.History = append(cloneHistory(l.History), policy.Event{AttemptIndex: attempt, Status: status, ParentOperation: &op})
		l.Request, l.Validated, l.Pending = nil, nil, nil
	case events.Exclude:
		return exclude(l, p)
	case events.Inspect:
	case events.Complete:
		l.Reason = p.Decision.Reason
	case events.Stop:
		l.Reason = p.Decision.Reason
	case events.Cancel:
		l.Reason = p.Reason
		l.Request = nil
	}
	return l, nil
}

// dispatch records a launch or continue as the lane's current execution.
func dispatch(l LaneRecord, p events.Launch, continued bool) (LaneRecord, error) {
	if p.AttemptIndex < 0 || p.AttemptIndex >= len(l.Policy.Attempts) {
		return l, inconsistent("attempt %d: lane %q has %d attempts", p.AttemptIndex, l.Policy.ID, len(l.Policy.Attempts))
	}
	if l.Dispatch != nil && l.Dispatch.ExecutionID == p.ExecutionID {
		return l, inconsistent("execution %s is dispatched again; an execution runs at most once", p.ExecutionID)
	}
	d := p
	l.Dispatch, l.Continued, l.Claim = &d, continued, nil
	l.Handoff, l.Validated, l.Pending = nil, nil, nil
	return l, nil
}

// operationStep records a validated or begun step of the operation the
// lane awaits: it must answer the lane's current execution and request; a
// begun step needs the same scope validated before it and no pending
// operation; nothing is validated again once begun.
func operationStep(l LaneRecord, p events.OperationStep) (LaneRecord, error) {
	if err := sameExecution(l, "operation-step", p.ExecutionID); err != nil {
		return l, err
	}
	if l.Request == nil || l.Request.Decision.Operation == nil {
		return l, inconsistent("operation-step with no requested operation")
	}
	want := l.Request.Decision.Operation
	if p.Operation.Kind != want.Kind || p.Operation.TaskID != want.TaskID || p.Operation.CheckpointID != want.CheckpointID {
		return l, inconsistent("operation-step for %s %s/%s; the lane awaits %s %s/%s",
			p.Operation.Kind, p.Operation.TaskID, p.Operation.CheckpointID, want.Kind, want.TaskID, want.CheckpointID)
	}
	if l.Pending != nil {
		return l, inconsistent("operation-step %s after the operation was begun (pending %s)", p.Step, l.Pending.Digest)
	}
	step := p
	step.Files, step.Checks = slices.Clone(p.Files), slices.Clone(p.Checks)
	switch p.Step {
	case events.OperationValidated:
		l.Validated = &step
	case events.OperationBegun:
		if l.Validated == nil || l.Validated.Digest != p.Digest || l.Validated.Head != p.Head {
			return l, inconsistent("operation begun with digest %s at %s that was not the last validated", p.Digest, p.Head)
		}
		l.Pending = &step
	}
	return l, nil
}

// excludeAllowed says whether an exclude may arrive in state s: only
// where a launch decision is made, before the lane's first attempt or
// between attempts.
func excludeAllowed(s State) error {
	if s != StateCreated && s != StateTerminal {
		return inconsistent("exclude while the lane is %s; the gate runs only where a launch is decided (created, terminal)", s)
	}
	return nil
}

// exclude records an attempt the gate kept from launching, after checking
// it is one of the lane's attempts as the event names it.
func exclude(l LaneRecord, p events.Exclude) (LaneRecord, error) {
	if p.AttemptIndex < 0 || p.AttemptIndex >= len(l.Policy.Attempts) {
		return l, inconsistent("exclude of attempt %d: lane %q has %d attempts", p.AttemptIndex, l.Policy.ID, len(l.Policy.Attempts))
	}
	ap := l.Policy.Attempts[p.AttemptIndex]
	if p.Descriptor != ap.Descriptor || p.Provider != ap.ExhaustionGroup {
		return l, inconsistent("exclude of attempt %d as %s (group %s); the lane's attempt %d is %s (group %s)",
			p.AttemptIndex, p.Descriptor, p.Provider, p.AttemptIndex, ap.Descriptor, ap.ExhaustionGroup)
	}
	for _, x := range l.Excluded {
		if !x.Rule.MovesOn() {
			return l, inconsistent("exclude of attempt %d after the exclusion of attempt %d stopped the lane", p.AttemptIndex, x.AttemptIndex)
		}
		if x.Group == p.Provider {
			return l, inconsistent("exclude of group %s, already excluded from this lane", p.Provider)
		}
	}
	x := Exclusion{AttemptIndex: p.AttemptIndex, Group: p.Provider, Code: p.Verdict.Code, Detail: p.Verdict.Detail,
		ReportDigest: p.ReportDigest, EvaluatedAt: p.EvaluatedAt, Rule: p.Rule}
	if p.Verdict.Until != nil {
		u := *p.Verdict.Until
		x.Until = &u
	}
	l.Excluded = append(slices.Clone(l.Excluded), x)
	return l, nil
}

// sameExecution checks that a worker report names the current dispatch.
func sameExecution(l LaneRecord, what, id string) error {
	if l.Dispatch == nil {
		return inconsistent("%s of execution %s with no dispatch", what, id)
	}
	if id != l.Dispatch.ExecutionID {
		return inconsistent("%s of execution %s while %s is dispatched (a stale report is recorded as audit)", what, id, l.Dispatch.ExecutionID)
	}
	return nil
}

// requestedAttempt is the attempt an operation-done answers: the one the
// request-operation decision named, else the last execution's.
func requestedAttempt(l LaneRecord) (int, error) {
	if l.Request == nil {
		return 0, inconsistent("operation-done with no request-operation")
	}
	if i := l.Request.Decision.AttemptIndex; i != nil {
		return *i, nil
	}
	for j := len(l.History) - 1; j >= 0; j-- {
		if l.History[j].ParentOperation == nil {
			return l.History[j].AttemptIndex, nil
		}
	}
	return 0, inconsistent("operation-done with no execution before it")
}

// cloneHistory copies h so an edit never reaches a slice a caller holds.
func cloneHistory(h []policy.Event) []policy.Event {
	out := make([]policy.Event, len(h), len(h)+1)
	copy(out, h)
	return out
}

// executionIdentity is the identity of l's current dispatch, as the
// continuation gate compares it.
func executionIdentity(l LaneRecord, c *events.RunCreated) *policy.ExecutionIdentity {
	d := l.Dispatch
	x := &policy.ExecutionIdentity{ID: d.ExecutionID, OutputPath: d.Paths.Output, ReceiptPath: d.Paths.Receipt,
		WorkspacePath: d.Paths.Cwd, Descriptor: d.Descriptor, Access: c.Access, Contract: c.Options.Contract}
	if d.AttemptIndex >= 0 && d.AttemptIndex < len(l.Policy.Attempts) {
		x.APISpend = l.Policy.Attempts[d.AttemptIndex].APISpend
	}
	return x
}
