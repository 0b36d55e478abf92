package events

import (
	"github.com/switchyard-dev/switchyard/policy"
)

// VerdictState is the parent's inspection verdict on a started writer.
type VerdictState string

// Verdict states.
const (
	VerdictClear  VerdictState = "clear"  // the writer's partial work is safe; the lane may go on.
	VerdictUnsafe VerdictState = "unsafe" // it is not; the lane stops.
)

// Verdict records the parent's inspection verdict (lane-level):
// inspecting → terminal.
type Verdict struct {
	State VerdictState `json:"state"`
	// EvidenceRef points at the parent's inspection record.
	EvidenceRef string `json:"evidenceRef"`
	// By names who gave the verdict, when known.
	By string `json:"by,omitempty"`
}

// EventType returns TypeVerdict.
func (Verdict) EventType() Type { return TypeVerdict }

func (p Verdict) validate() error {
	if p.State != VerdictClear && p.State != VerdictUnsafe {
		return invalidf("state %q: want clear or unsafe", p.State)
	}
	return requireText("evidenceRef", p.EvidenceRef)
}

// OperationResult is how a parent operation ended.
type OperationResult string

// Operation results.
const (
	OperationSucceeded OperationResult = "succeeded"
	OperationFailed    OperationResult = "failed"
)

// OperationDone records the result of the parent operation a
// request-operation asked for (lane-level): awaiting-operation → terminal.
type OperationDone struct {
	// Operation identifies the performed operation; it matches the request.
	Operation policy.ParentOperation `json:"operation"`
	Result    OperationResult        `json:"result"`
	// Ref points at the operation's product (a commit, a check log).
	Ref string `json:"ref,omitempty"`
	// Detail is a human explanation, for failures.
	Detail string `json:"detail,omitempty"`
	// Digest, Head and Ledger settle the operation's pending record (an
	// operation-step begun): its checkpoint digest, the HEAD it was begun
	// at, and complete or rejected. Empty in logs from before the ledger.
	Digest string `json:"digest,omitempty"`
	Head   string `json:"head,omitempty"`
	Ledger string `json:"ledger,omitempty"`
}

// EventType returns TypeOperationDone.
func (OperationDone) EventType() Type { return TypeOperationDone }

func (p OperationDone) validate() error {
	if err := validOperationKind(p.Operation.Kind); err != nil {
		return err
	}
	if p.Result != OperationSucceeded && p.Result != OperationFailed {
		return invalidf("result %q: want succeeded or failed", p.Result)
	}
	return p.validateSettlement()
}

// Cancel records a cancellation (lane-level: any non-final state →
// cancelled; run-level: the parent cancelled the whole run).
type Cancel struct {
	Reason string `json:"reason"`
	// By names who cancelled (a user, the parent harness).
	By string `json:"by"`
}

// EventType returns TypeCancel.
func (Cancel) EventType() Type { return TypeCancel }

func (p Cancel) validate() error {
	if err := requireText("reason", p.Reason); err != nil {
		return err
	}
	return requireText("by", p.By)
}

// Recover records the parent's answer to an interrupted execution that a
// same-route continuation could resume (lane-level): terminal → terminal.
// State clear with Recovery lets policy.Next decide the continuation;
// State unsafe (no Recovery) declines it, and the lane stops. The engine
// prepares Recovery.NextExecution (a fresh execution id, output, receipt
// and workspace), so the parent never names paths.
type Recover struct {
	State VerdictState `json:"state"`
	// EvidenceRef points at the parent's inspection of partial work and
	// side effects.
	EvidenceRef string `json:"evidenceRef"`
	// Recovery is the continuation the parent prepared; clear only.
	Recovery *policy.Recovery `json:"recovery,omitempty"`
	// By names who answered, when known.
	By string `json:"by,omitempty"`
}

// EventType returns TypeRecover.
func (Recover) EventType() Type { return TypeRecover }

func (p Recover) validate() error {
	if err := p.validateInput(); err != nil {
		return err
	}
	if p.Recovery != nil && p.Recovery.NextExecution == nil {
		return invalidf("recovery.nextExecution is required in a recorded recover")
	}
	return nil
}

// validateInput checks what the parent supplies (a control carries no
// nextExecution: the engine prepares it).
func (p Recover) validateInput() error {
	switch p.State {
	case VerdictClear:
		if p.Recovery == nil {
			return invalidf("a clear recover needs the recovery")
		}
	case VerdictUnsafe:
		if p.Recovery != nil {
			return invalidf("an unsafe recover declines the continuation and carries no recovery")
		}
	default:
		return invalidf("state %q: want clear or unsafe", p.State)
	}
	return requireText("evidenceRef", p.EvidenceRef)
}
