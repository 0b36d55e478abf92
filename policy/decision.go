package policy

// DecisionKind is what Next tells the parent to do.
type DecisionKind string

// The six decision kinds.
const (
	DecideLaunch          DecisionKind = "launch"           // start attempt AttemptIndex, execution 1.
	DecideContinue        DecisionKind = "continue"         // re-run the same attempt with PreparedExecution.
	DecideParentOperation DecisionKind = "parent-operation" // the parent performs Operation first.
	DecideStop            DecisionKind = "stop"             // the lane ends; Reason says why.
	DecidePolicyDenied    DecisionKind = "policy-denied"    // the saved policy refuses; Reason says why.
	DecideInspect         DecisionKind = "inspect"          // a started writer awaits the parent's verdict.
)

// StopReason explains a stop decision.
type StopReason string

// Stop reasons.
const (
	StopComplete       StopReason = "complete"
	StopChainExhausted StopReason = "chain-exhausted"
	StopNotEligible    StopReason = "not-eligible"
	StopUnauthorized   StopReason = "unauthorized"
	StopUnsafeWriter   StopReason = "unsafe-writer"
)

// DenyReason explains a policy-denied decision. The last four are declared
// by the contract but never emitted.
type DenyReason string

// Policy-denied reasons.
const (
	DenyUnsupportedTool      DenyReason = "unsupported-tool"
	DenyNoContinuation       DenyReason = "no-continuation"
	DenyChangedFiles         DenyReason = "changed-files"
	DenyExhaustedAllowance   DenyReason = "exhausted-allowance"
	DenyMissingReadiness     DenyReason = "missing-readiness"
	DenyHandoffMalformed     DenyReason = "handoff-malformed"
	DenyConflictingOperation DenyReason = "conflicting-operation"
	DenyAmbiguousState       DenyReason = "ambiguous-state"
	DenyRepeatDenial         DenyReason = "repeat-denial"
	DenyLiveWriter           DenyReason = "live-writer"
	DenyMissingCorrection    DenyReason = "missing-correction"
	DenyMissingOperation     DenyReason = "missing-operation"
)

// InspectReasonStartedWriter is the only inspect reason.
const InspectReasonStartedWriter = "started-writer"

// Operation is the parent operation a parent-operation decision asks for.
type Operation struct {
	Kind         OperationKind `json:"kind"`
	TaskID       string        `json:"taskId"`
	CheckpointID string        `json:"checkpointId"`
	Ref          string        `json:"ref,omitempty"`
}

// Decision is the result of Next. Which fields are set depends on Kind:
// launch sets AttemptIndex, Attempt and Execution (1); continue adds
// PreparedExecution; parent-operation sets AttemptIndex and Operation; stop
// and policy-denied set Reason; inspect sets Reason "started-writer".
type Decision struct {
	Kind              DecisionKind       `json:"kind"`
	Reason            string             `json:"reason,omitempty"`
	AttemptIndex      *int               `json:"attemptIndex,omitempty"`
	Attempt           *AttemptPolicy     `json:"attempt,omitempty"`
	Execution         int                `json:"execution,omitempty"`
	PreparedExecution *ExecutionIdentity `json:"preparedExecution,omitempty"`
	Operation         *Operation         `json:"operation,omitempty"`
}

// Stop builds a stop decision.
func Stop(r StopReason) Decision { return Decision{Kind: DecideStop, Reason: string(r)} }

// Deny builds a policy-denied decision.
func Deny(r DenyReason) Decision { return Decision{Kind: DecidePolicyDenied, Reason: string(r)} }
