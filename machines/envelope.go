package machines

import "github.com/switchyard-dev/switchyard/events"

// EventOf maps a persisted event type to the lane event it records. Lane
// event types carry the machine's own names (launch, claim, …, cancel);
// run-level types (run-created, group-exhausted, run-final), audit, which
// changes nothing, and recover and exclude, which change the lane's record
// but not its state, map to none.
func EventOf(t events.Type) (Event, bool) {
	switch t {
	case events.TypeLaunch:
		return EventLaunch, true
	case events.TypeContinue:
		return EventContinue, true
	case events.TypeClaim:
		return EventClaim, true
	case events.TypeFinish:
		return EventFinish, true
	case events.TypeInspect:
		return EventInspect, true
	case events.TypeVerdict:
		return EventVerdict, true
	case events.TypeRequestOperation:
		return EventRequestOperation, true
	case events.TypeOperationDone:
		return EventOperationDone, true
	case events.TypeComplete:
		return EventComplete, true
	case events.TypeStop:
		return EventStop, true
	case events.TypeCancel:
		return EventCancel, true

	case events.TypeRunCreated, events.TypeGroupExhausted, events.TypeRunFinal, events.TypeAudit, events.TypeRecover, events.TypeExclude,
		events.TypeOperationStep:
		return "", false
	}
	return "", false
}

// RebuildLane folds one lane's envelopes (the sy.ev.<run>.L<lane> subject,
// in order) from StateCreated, skipping audit. It reads only types, never
// payloads. Every envelope must share the first one's run and lane, or the
// fold stops with a *FoldError wrapping ErrInconsistent; recover is skipped,
// and exclude too where it may arrive (created, terminal; elsewhere it is
// ErrInconsistent); a type that is not a lane event (run-created, …) or a
// transition the table refuses stops it with a *FoldError wrapping a
// *TransitionError. Index and Seq name the envelope.
func RebuildLane(envs []events.Envelope) (State, error) {
	s := StateCreated
	for i, env := range envs {
		if env.Run != envs[0].Run || env.Lane != envs[0].Lane || env.Lane == events.RunLane {
			return s, &FoldError{Index: i, Seq: env.Seq, Err: inconsistent(
				"%s of run %q lane %d in the log of run %q lane %d", env.Type, env.Run, env.Lane, envs[0].Run, envs[0].Lane)}
		}
		if env.Type == events.TypeAudit || env.Type == events.TypeRecover {
			continue
		}
		if env.Type == events.TypeOperationStep {
			if s != StateAwaitingOperation {
				return s, &FoldError{Index: i, Seq: env.Seq, Err: inconsistent("operation-step while the lane is %s; only a lane awaiting an operation takes one", s)}
			}
			continue
		}
		if env.Type == events.TypeExclude {
			if err := excludeAllowed(s); err != nil {
				return s, &FoldError{Index: i, Seq: env.Seq, Err: err}
			}
			continue
		}
		ev, ok := EventOf(env.Type)
		if !ok {
			ev = Event(env.Type) // refused below as an unknown lane event
		}
		to, err := Step(s, ev)
		if err != nil {
			return s, &FoldError{Index: i, Seq: env.Seq, Err: err}
		}
		s = to
	}
	return s, nil
}
