package events

import (
	"github.com/switchyard-dev/switchyard/policy"
)

// Decided is the record shared by the decision events that carry no job:
// the decision, the digest of the policy input it was computed from
// (InputDigest) and the run's sheet digest. Replay recomputes Decision from
// the recorded inputs and compares.
type Decided struct {
	Decision    policy.Decision `json:"decision"`
	InputDigest string          `json:"inputDigest"`
	SheetDigest string          `json:"sheetDigest"`
}

// Inspect records an inspect decision (lane-level): terminal → inspecting.
// The lane waits for a verdict event.
type Inspect Decided

// EventType returns TypeInspect.
func (Inspect) EventType() Type { return TypeInspect }

func (p Inspect) validate() error {
	return validateDecision(p.Decision, p.InputDigest, p.SheetDigest, policy.DecideInspect)
}

// Complete records a stop decision with reason complete (lane-level):
// terminal or created → complete.
type Complete Decided

// EventType returns TypeComplete.
func (Complete) EventType() Type { return TypeComplete }

func (p Complete) validate() error {
	if err := validateDecision(p.Decision, p.InputDigest, p.SheetDigest, policy.DecideStop); err != nil {
		return err
	}
	if p.Decision.Reason != string(policy.StopComplete) {
		return invalidf("complete needs a stop decision with reason complete, got %q", p.Decision.Reason)
	}
	return nil
}

// Stop records a stop decision with any reason but complete, or a
// policy-denied decision (lane-level): terminal or created → stopped.
type Stop Decided

// EventType returns TypeStop.
func (Stop) EventType() Type { return TypeStop }

func (p Stop) validate() error {
	if err := validateDecision(p.Decision, p.InputDigest, p.SheetDigest, policy.DecideStop, policy.DecidePolicyDenied); err != nil {
		return err
	}
	if p.Decision.Kind == policy.DecideStop && p.Decision.Reason == string(policy.StopComplete) {
		return invalidf("a stop decision with reason complete is recorded as complete, not stop")
	}
	return requireText("decision.reason", p.Decision.Reason)
}

// RequestOperation records a parent-operation decision (lane-level):
// terminal → awaiting-operation. The operation is Decision.Operation.
type RequestOperation Decided

// EventType returns TypeRequestOperation.
func (RequestOperation) EventType() Type { return TypeRequestOperation }

func (p RequestOperation) validate() error {
	if err := validateDecision(p.Decision, p.InputDigest, p.SheetDigest, policy.DecideParentOperation); err != nil {
		return err
	}
	if p.Decision.Operation == nil {
		return invalidf("decision.operation is required")
	}
	return validOperationKind(p.Decision.Operation.Kind)
}

func validOperationKind(k policy.OperationKind) error {
	if k != policy.OpCommitCheckpoint && k != policy.OpRunChecks {
		return invalidf("operation kind %q: want commit-checkpoint or run-checks", k)
	}
	return nil
}
