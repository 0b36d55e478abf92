package events

import (
	jsonv2 "github.com/go-json-experiment/json"
)

// Type names an event. The vocabulary is closed: Decode refuses any other
// value. Names shared with the lane machine (DESIGN.md, "The lane machine")
// are identical to its event names.
type Type string

// Run-level events live on sy.ev.<run>.run; lane-level events on
// sy.ev.<run>.L<lane>. Each line says who records the event and what it
// carries; every event is recorded by the engine, the only writer.
const (
	// TypeRunCreated is a run's first event: the frozen sheet, the resolved
	// lanes and the run's inputs (RunCreated). Run-level.
	TypeRunCreated Type = "run-created"
	// TypeGroupExhausted adds a provider to the run's exhausted groups after
	// a usage-exhausted outcome in one lane (GroupExhausted). Run-level.
	TypeGroupExhausted Type = "group-exhausted"
	// TypeRunFinal closes a run once every lane is final (RunFinal).
	// Run-level.
	TypeRunFinal Type = "run-final"

	// TypeLaunch records a launch decision and the job it publishes
	// (Launch): created, terminal, inspecting, awaiting-operation → launching.
	TypeLaunch Type = "launch"
	// TypeContinue records a same-route continuation decision and its job
	// (Continue): same transitions as launch.
	TypeContinue Type = "continue"
	// TypeClaim records a worker's claim report (Claim): launching → running.
	TypeClaim Type = "claim"
	// TypeFinish records a normalized receipt, native host metadata or an
	// abandoned attempt (Finish): launching, running → terminal.
	TypeFinish Type = "finish"
	// TypeInspect records an inspect decision for a started writer
	// (Inspect): terminal → inspecting.
	TypeInspect Type = "inspect"
	// TypeVerdict records the parent's inspection verdict (Verdict):
	// inspecting → terminal.
	TypeVerdict Type = "verdict"
	// TypeRequestOperation records a parent-operation decision
	// (RequestOperation): terminal → awaiting-operation.
	TypeRequestOperation Type = "request-operation"
	// TypeOperationDone records the parent operation's result
	// (OperationDone): awaiting-operation → terminal.
	TypeOperationDone Type = "operation-done"
	// TypeOperationStep records a step of the parent's operation before it
	// ends: validated (the handoff's scope and digest) or begun (pending)
	// (OperationStep): awaiting-operation, no transition.
	TypeOperationStep Type = "operation-step"
	// TypeComplete records a stop decision whose reason is complete
	// (Complete): terminal or created → complete (final).
	TypeComplete Type = "complete"
	// TypeStop records any other stop or a policy-denied decision (Stop):
	// terminal or created → stopped (final).
	TypeStop Type = "stop"
	// TypeCancel records a cancellation by the parent (Cancel): any non-final
	// state → cancelled (final). Lane-level, or run-level to record a
	// run-wide cancel before the engine cancels each lane.
	TypeCancel Type = "cancel"
	// TypeRecover records the parent's inspection of an interrupted
	// execution (a handoff whose operation succeeded, or a permission
	// blockage) and, when clear, the recovery it prepared for a same-route
	// continuation (Recover): terminal → terminal.
	TypeRecover Type = "recover"
	// TypeAudit records a duplicate, late or stale report, a redelivered job
	// or a malformed report, without changing state (Audit). Lane-level, or
	// run-level when the report names no usable lane.
	TypeAudit Type = "audit"
	// TypeExclude records that the eligibility gate kept an attempt from
	// launching (Exclude): created or terminal, no transition.
	TypeExclude Type = "exclude"
)

// Types lists every event type in the order above.
var Types = []Type{
	TypeRunCreated, TypeGroupExhausted, TypeRunFinal,
	TypeLaunch, TypeContinue, TypeClaim, TypeFinish, TypeInspect, TypeVerdict,
	TypeRequestOperation, TypeOperationDone, TypeComplete, TypeStop, TypeCancel, TypeAudit, TypeRecover, TypeExclude,
	TypeOperationStep,
}

// Scope says on which subjects an event type may appear.
type Scope int

// Scopes.
const (
	ScopeRun  Scope = iota + 1 // only sy.ev.<run>.run (lane RunLane).
	ScopeLane                  // only sy.ev.<run>.L<lane>.
	ScopeAny                   // either.
)

// Scope returns where t may appear, or 0 for an unknown type.
func (t Type) Scope() Scope {
	switch t {
	case TypeRunCreated, TypeGroupExhausted, TypeRunFinal:
		return ScopeRun
	case TypeLaunch, TypeContinue, TypeClaim, TypeFinish, TypeInspect, TypeVerdict,
		TypeRequestOperation, TypeOperationDone, TypeComplete, TypeStop, TypeRecover, TypeExclude, TypeOperationStep:
		return ScopeLane
	case TypeCancel, TypeAudit:
		return ScopeAny
	}
	return 0
}

// Valid reports whether t is one of Types.
func (t Type) Valid() bool { return t.Scope() != 0 }

// Payload is the typed body of one event. The set is closed: exactly the
// payload types of this package implement it, one per Type. Payloads are
// values (RunCreated, not *RunCreated); Decode returns values.
type Payload interface {
	// EventType is the Type this payload is recorded under.
	EventType() Type
	validate() error
}

// decodePayload is the one decode switch: unknown types are an error.
// With strict false it decodes with encoding/json alone, for the canonical
// fast path of Decode, which proves strictness by re-encoding instead.
func decodePayload(t Type, raw []byte, strict bool) (Payload, error) {
	switch t {
	case TypeRunCreated:
		return decodeAs[RunCreated](raw, strict)
	case TypeGroupExhausted:
		return decodeAs[GroupExhausted](raw, strict)
	case TypeRunFinal:
		return decodeAs[RunFinal](raw, strict)
	case TypeLaunch:
		return decodeAs[Launch](raw, strict)
	case TypeContinue:
		return decodeAs[Continue](raw, strict)
	case TypeClaim:
		return decodeAs[Claim](raw, strict)
	case TypeFinish:
		return decodeAs[Finish](raw, strict)
	case TypeInspect:
		return decodeAs[Inspect](raw, strict)
	case TypeVerdict:
		return decodeAs[Verdict](raw, strict)
	case TypeRequestOperation:
		return decodeAs[RequestOperation](raw, strict)
	case TypeOperationDone:
		return decodeAs[OperationDone](raw, strict)
	case TypeComplete:
		return decodeAs[Complete](raw, strict)
	case TypeStop:
		return decodeAs[Stop](raw, strict)
	case TypeCancel:
		return decodeAs[Cancel](raw, strict)
	case TypeAudit:
		return decodeAs[Audit](raw, strict)
	case TypeRecover:
		return decodeAs[Recover](raw, strict)
	case TypeExclude:
		return decodeAs[Exclude](raw, strict)
	case TypeOperationStep:
		return decodeAs[OperationStep](raw, strict)
	}
	return nil, invalidf("unknown event type %q", t)
}

// decodeAs decodes a payload. The canonical path (strict false) only
// proposes a value: decodeCanonical keeps it only when Encode writes the
// same bytes back, and anything else takes the strict path. It uses
// go-json-experiment's decoder, about twice as fast as encoding/json's
// here (docs/PERFORMANCE.md); FuzzCanonicalIsStrict holds that it accepts
// nothing the strict path refuses and decodes to the strict path's value.
func decodeAs[T Payload](raw []byte, strict bool) (Payload, error) {
	var v T
	var err error
	if strict {
		err = strictUnmarshal(raw, &v)
	} else {
		err = jsonv2.Unmarshal(raw, &v)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}
