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
	// FromRef is the reviewed state a clear verdict names (a commit or
	// snapshot ref, as the parent gave it); FromCommit is the commit it
	// resolved to in the run's repository when the verdict was given. The
	// lane's next writer starts its fresh worktree there instead of at the
	// checkout's HEAD. Both or neither; clear only.
	FromRef    string `json:"fromRef,omitempty"`
	FromCommit string `json:"fromCommit,omitempty"`
}

// EventType returns TypeVerdict.
func (Verdict) EventType() Type { return TypeVerdict }

func (p Verdict) validate() error {
	if p.State != VerdictClear && p.State != VerdictUnsafe {
		return invalidf("state %q: want clear or unsafe", p.State)
	}
	if err := requireText("evidenceRef", p.EvidenceRef); err != nil {
		return err
	}
	if p.FromRef == "" && p.FromCommit == "" {
		return nil
	}
	if p.State != VerdictClear {
		return invalidf("fromRef on an unsafe verdict: only a clear verdict names the state the next writer starts from")
	}
	if err := requireText("fromRef", p.FromRef); err != nil {
		return err
	}
	return ValidateCommit("fromCommit", p.FromCommit)
}

// ValidateCommit reports whether v is a full git object name: 40 (SHA-1)
// or 64 (SHA-256) lowercase hex digits.
func ValidateCommit(field, v string) error {
	if len(v) != 40 && len(v) != 64 {
		return invalidf("%s %q: want a full commit id (40 or 64 lowercase hex digits)", field, v)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return invalidf("%s %q: want a full commit id (40 or 64 lowercase hex digits)", field, v)
		}
	}
	return nil
}

// WorktreeBase is the commit a writer's fresh worktree started from, and
// why: Source BaseReviewed (the reviewed state a clear verdict named, Ref
// as the parent gave it) or BaseCheckoutHead (the checkout's HEAD when
// the attempt launched).
type WorktreeBase struct {
	Source BaseSource `json:"source"`
	Ref    string     `json:"ref"`
	Commit string     `json:"commit"`
}

// BaseSource says where a writer's worktree base came from.
type BaseSource string

// Worktree base sources.
const (
	BaseCheckoutHead BaseSource = "checkout-head"
	BaseReviewed     BaseSource = "reviewed"
)

func (b WorktreeBase) validate() error {
	if b.Source != BaseCheckoutHead && b.Source != BaseReviewed {
		return invalidf("worktreeBase.source %q: want checkout-head or reviewed", b.Source)
	}
	if err := requireText("worktreeBase.ref", b.Ref); err != nil {
		return err
	}
	return ValidateCommit("worktreeBase.commit", b.Commit)
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
