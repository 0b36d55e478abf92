package events

import (
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// OperationStepKind is one step of the parent's path through a lane's
// operation ledger before the operation ends (operation-done).
type OperationStepKind string

// Operation steps.
const (
	// OperationValidated: the parent validated the handoff against the
	// lane's worktree (switchyard operation validate) and got its digest.
	OperationValidated OperationStepKind = "validated"
	// OperationBegun: the parent reserved the operation (switchyard
	// operation begin): it is pending until operation-done. A pending
	// operation after a crash stays pending until the parent reconciles it.
	OperationBegun OperationStepKind = "begun"
)

// Ledger states an operation-done settles a pending operation in.
const (
	LedgerComplete = "complete" // the operation was performed (it succeeded or failed).
	LedgerRejected = "rejected" // the parent decided not to perform it.
)

// Bounds of an operation step's scope.
const (
	maxStepFiles  = 200
	maxStepChecks = 50
	maxStepItem   = 200
)

// OperationStep records a step of the parent's operation for a lane
// awaiting one (lane-level, no transition): the validated scope (worktree,
// HEAD, files, checks) and its checkpoint digest. A begun step is the
// ledger's pending record; operation-done settles it.
type OperationStep struct {
	// ExecutionID is the execution whose handoff the operation answers.
	ExecutionID string            `json:"executionId"`
	Step        OperationStepKind `json:"step"`
	// Nonce identifies the parent invocation that sent the step, so of two
	// parents racing to begin exactly one finds its own pending record.
	Nonce string `json:"nonce"`
	// Operation is the requested operation the step is for.
	Operation policy.ParentOperation `json:"operation"`
	// Repo is the canonical worktree validated; Head its HEAD then.
	Repo string `json:"repo"`
	Head string `json:"head"`
	// Digest is the SHA-256 checkpoint digest (docs/CONTRACT.md).
	Digest string `json:"digest"`
	// Files and Checks are the handoff's validated scope, sorted.
	Files  []string `json:"files"`
	Checks []string `json:"checks"`
	// By names who sent it (a user, the parent harness).
	By string `json:"by,omitempty"`
}

// EventType returns TypeOperationStep.
func (OperationStep) EventType() Type { return TypeOperationStep }

func (p OperationStep) validate() error {
	if err := ValidateExecutionID(p.ExecutionID); err != nil {
		return err
	}
	if p.Step != OperationValidated && p.Step != OperationBegun {
		return invalidf("operation step %q: want validated or begun", p.Step)
	}
	if err := ValidateExecutionID(p.Nonce); err != nil {
		return invalidf("operation step nonce: %v", err)
	}
	if err := validOperationKind(p.Operation.Kind); err != nil {
		return err
	}
	if strings.TrimSpace(p.Operation.TaskID) == "" || strings.TrimSpace(p.Operation.CheckpointID) == "" {
		return invalidf("operation step needs the task and checkpoint ids")
	}
	if p.Repo == "" || !filepath.IsAbs(p.Repo) || filepath.Clean(p.Repo) != p.Repo {
		return invalidf("operation step repo %q: want a clean absolute path", p.Repo)
	}
	if !lowerHex(p.Head, 40) && !lowerHex(p.Head, 64) {
		return invalidf("operation step head %q: want a full commit id", p.Head)
	}
	if !lowerHex(p.Digest, 64) {
		return invalidf("operation step digest %q: want 64 lowercase hex digits", p.Digest)
	}
	if p.Files == nil || p.Checks == nil {
		return invalidf("operation step needs files and checks (empty lists allowed)")
	}
	if len(p.Files) > maxStepFiles || len(p.Checks) > maxStepChecks {
		return invalidf("operation step names more than %d files or %d checks", maxStepFiles, maxStepChecks)
	}
	for _, list := range [][]string{p.Files, p.Checks} {
		for i, s := range list {
			if strings.TrimSpace(s) == "" || len(s) > maxStepItem || strings.ContainsAny(s, "\x00\r\n") {
				return invalidf("operation step file or check %q is blank, multi-line or too long", s)
			}
			if i > 0 && list[i-1] >= s {
				return invalidf("operation step files and checks must be sorted and distinct")
			}
		}
	}
	return nil
}

// validateSettlement checks operation-done's optional ledger fields: a
// settlement of a begun operation names its digest and the ledger state.
func (p OperationDone) validateSettlement() error {
	if p.Ledger == "" && p.Digest == "" && p.Head == "" {
		return nil // an operation-done recorded before the ledger existed.
	}
	switch p.Ledger {
	case LedgerComplete:
	case LedgerRejected:
		if p.Result != OperationFailed {
			return invalidf("a rejected operation has result failed, not %s", p.Result)
		}
	default:
		return invalidf("operation-done ledger %q: want complete or rejected", p.Ledger)
	}
	if !lowerHex(p.Digest, 64) {
		return invalidf("operation-done digest %q: want 64 lowercase hex digits", p.Digest)
	}
	if !lowerHex(p.Head, 40) && !lowerHex(p.Head, 64) {
		return invalidf("operation-done head %q: want a full commit id", p.Head)
	}
	return nil
}

func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
