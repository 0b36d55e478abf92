package policy

// Gemini is a receipt-only provider: Switchyard's runner can launch it
// (RUNNER.md, provider-contract.md), but a model sheet cannot name it, so it
// is not in Providers and a Gemini receipt never matches a sheet attempt.
const Gemini Provider = "gemini"

// validReceiptProvider reports whether p may appear in a receipt.
func validReceiptProvider(p Provider) bool { return p.Valid() || p == Gemini }

// ReceiptStatus is the runner's terminal classification of one execution.
// Exactly one function (Normalize) maps it to a policy Outcome.
type ReceiptStatus string

// The twelve receipt statuses the runner writes. Each names who sets it and
// the process exit code (see ExitCodeForStatus).
const (
	// StatusComplete: the child settled with a clean exit and a verified
	// final response. Exit 0.
	StatusComplete ReceiptStatus = "complete"
	// StatusNeedsParentOperation: schema 2 only; the final response ended
	// with one valid pstack-handoff block. Exit 0.
	StatusNeedsParentOperation ReceiptStatus = "needs-parent-operation"
	// StatusCancelled: the runner received SIGINT or SIGTERM. Exit 130.
	StatusCancelled ReceiptStatus = "cancelled"
	// StatusUnavailableCLI: the provider CLI is missing or too old. Exit 69.
	StatusUnavailableCLI ReceiptStatus = "unavailable-cli"
	// StatusUnauthenticated: the authentication preflight failed, or (in
	// the invocation) the CLI stopped at its own sign-in check before any
	// model request, proved by its exit status and exact text (Gemini's
	// exit 41). Exit 77.
	StatusUnauthenticated ReceiptStatus = "unauthenticated"
	// StatusUnavailableModel: the requested model is not offered. Exit 69.
	StatusUnavailableModel ReceiptStatus = "unavailable-model"
	// StatusUsageExhausted: a provider quota adapter proved exhaustion.
	// Exit 75.
	StatusUsageExhausted ReceiptStatus = "usage-exhausted"
	// StatusBillingPolicyBlocked: --api-spend deny found an API-billed
	// route before launch. Exit 78.
	StatusBillingPolicyBlocked ReceiptStatus = "billing-policy-blocked"
	// StatusTimedOut: the explicit --timeout deadline expired. Exit 124.
	StatusTimedOut ReceiptStatus = "timed-out"
	// StatusChildFailed: the child exited non-zero or was killed. Exit 70.
	StatusChildFailed ReceiptStatus = "child-failed"
	// StatusMalformedOutput: the child's output failed protocol or model
	// validation (postprocess). Exit 65.
	StatusMalformedOutput ReceiptStatus = "malformed-output"
	// StatusUnsupportedCapability: the route cannot prove the requested
	// contract: --contract strict or unverified writer containment, written
	// in preflight; or, after the workload started, the CLI said it replaced
	// the requested access mode (Gemini's approval-mode override). Exit 79.
	StatusUnsupportedCapability ReceiptStatus = "unsupported-capability"
)

// ReceiptStatuses lists every receipt status in the runner's order.
var ReceiptStatuses = []ReceiptStatus{StatusComplete, StatusNeedsParentOperation,
	StatusCancelled, StatusUnavailableCLI, StatusUnauthenticated, StatusUnavailableModel,
	StatusUsageExhausted, StatusBillingPolicyBlocked, StatusTimedOut, StatusChildFailed,
	StatusMalformedOutput, StatusUnsupportedCapability}

// Valid reports whether s is one of ReceiptStatuses.
func (s ReceiptStatus) Valid() bool { return inList(ReceiptStatuses, s) }

// ExitCodeForStatus returns the runner's process exit code for a receipt
// status (RUNNER.md statusExitCode). A status outside ReceiptStatuses
// returns 70 (EX_SOFTWARE): it can only come from a programming error.
func ExitCodeForStatus(s ReceiptStatus) int {
	switch s {
	case StatusComplete, StatusNeedsParentOperation:
		return 0
	case StatusCancelled:
		return 130
	case StatusMalformedOutput:
		return 65
	case StatusUnavailableCLI, StatusUnavailableModel:
		return 69
	case StatusChildFailed:
		return 70
	case StatusUsageExhausted:
		return 75
	case StatusUnauthenticated:
		return 77
	case StatusBillingPolicyBlocked:
		return 78
	case StatusUnsupportedCapability:
		return 79
	case StatusTimedOut:
		return 124
	}
	return 70
}

// FailurePhase is where a failed execution stopped.
type FailurePhase string

// Failure phases.
const (
	PhasePreflight   FailurePhase = "preflight"   // before the workload started (CLI, login, model, billing checks).
	PhaseInvocation  FailurePhase = "invocation"  // while the workload child ran.
	PhasePostprocess FailurePhase = "postprocess" // after a clean exit, validating the output.
)

// FailurePhases lists every failure phase.
var FailurePhases = []FailurePhase{PhasePreflight, PhaseInvocation, PhasePostprocess}

// Valid reports whether p is one of FailurePhases.
func (p FailurePhase) Valid() bool { return inList(FailurePhases, p) }

// PreflightStatus is the result of the runner's preflight probe.
type PreflightStatus string

// Preflight statuses.
const (
	PreflightPassed    PreflightStatus = "passed"
	PreflightFailed    PreflightStatus = "failed"
	PreflightTimedOut  PreflightStatus = "timed-out"
	PreflightCancelled PreflightStatus = "cancelled"
	PreflightNotRun    PreflightStatus = "not-run" // no probe (read-only Claude, billing blocks).
)

// PreflightStatuses lists every preflight status.
var PreflightStatuses = []PreflightStatus{PreflightPassed, PreflightFailed,
	PreflightTimedOut, PreflightCancelled, PreflightNotRun}

// Valid reports whether s is one of PreflightStatuses.
func (s PreflightStatus) Valid() bool { return inList(PreflightStatuses, s) }

// ModelEvidence says how a receipt proves the model that ran.
type ModelEvidence string

// Model evidence kinds.
const (
	EvidenceProviderReport ModelEvidence = "provider-report" // the provider reported a matching model; verified.
	EvidencePinnedArgv     ModelEvidence = "pinned-argv"     // the argv pinned the model; unverified.
)

// Valid reports whether e is a known model evidence kind.
func (e ModelEvidence) Valid() bool { return e == EvidenceProviderReport || e == EvidencePinnedArgv }

// DenialCause is the cause a provider recorded for a refused tool call.
type DenialCause string

// Denial causes. Only a verified permission denial can become
// permission-blocked.
const (
	DenialPermission DenialCause = "permission"
	DenialUnknown    DenialCause = "unknown"
)

// Preflight is the runner's pre-launch probe (login, version or model
// listing).
type Preflight struct {
	Argv     []string        `json:"argv"` // empty, never nil, when no probe ran.
	Status   PreflightStatus `json:"status"`
	Evidence string          `json:"evidence"`
}

// CanonicalPaths are the realpaths of a schema 2 execution's workspace,
// output and receipt.
type CanonicalPaths struct {
	Cwd     string `json:"cwd"`
	Output  string `json:"output"`
	Receipt string `json:"receipt"`
}

// Usage is the token accounting a provider reported; a nil count was not
// reported.
type Usage struct {
	InputTokens              *int64 `json:"inputTokens,omitempty"`
	CachedInputTokens        *int64 `json:"cachedInputTokens,omitempty"`
	CacheCreationInputTokens *int64 `json:"cacheCreationInputTokens,omitempty"`
	OutputTokens             *int64 `json:"outputTokens,omitempty"`
	ReasoningTokens          *int64 `json:"reasoningTokens,omitempty"`
	TotalTokens              *int64 `json:"totalTokens,omitempty"`
}

// ReceiptError is a failed receipt's launcher-authored diagnosis. Evidence
// is the capped failure diagnostic (at most 4000 characters); a
// usage-exhausted receipt must carry non-blank evidence.
type ReceiptError struct {
	Message  string `json:"message"`
	Evidence string `json:"evidence"`
}

// ToolDenial is provider-owned evidence of a refused tool call. Verified is
// true only when the provider's own protocol recorded the refusal; fields
// the protocol did not report stay nil and are never filled from worker
// text.
type ToolDenial struct {
	Verified        bool        `json:"verified"`
	Cause           DenialCause `json:"cause,omitempty"` // "" when the provider gave no cause.
	Tool            *string     `json:"tool"`
	RequestedAction *string     `json:"requestedAction"`
	Evidence        string      `json:"evidence"`
}

// ReceiptHandoff is the validated pstack-handoff block a
// needs-parent-operation execution delivered. It names a request, never an
// authorization.
type ReceiptHandoff struct {
	Task       string        `json:"task"`
	Checkpoint string        `json:"checkpoint"`
	Operation  OperationKind `json:"operation"`
	Files      []string      `json:"files"`
	Checks     []string      `json:"checks"`
	Summary    string        `json:"summary"`
}

// Receipt is the runner's record of one execution, schema 1 or 2, in the
// field order the runner writes. Nullable fields are pointers (nil is
// written as null); optional fields are omitted when unset.
//
// Schema 2 adds ReceiptPath, ExecutionID and CanonicalPaths and the
// needs-parent-operation status. Schema 1 receipts from older runners may
// lack ProcessStarted, APISpend, Contract and TimeoutMs; DecodeReceipt
// requires them on schema 2.
type Receipt struct {
	SchemaVersion int           `json:"schemaVersion"` // 1 or 2.
	Status        ReceiptStatus `json:"status"`
	Parent        Parent        `json:"parent"`
	Provider      Provider      `json:"provider"` // Providers or Gemini.
	Model         string        `json:"model"`    // as requested.
	Effort        Effort        `json:"effort"`
	Mode          Access        `json:"mode"`
	Cwd           string        `json:"cwd"`
	PromptPath    string        `json:"promptPath"`
	OutputPath    string        `json:"outputPath"`
	// ReceiptPath is the absolute receipt path; schema 2 only.
	ReceiptPath string `json:"receiptPath,omitempty"`
	// ExecutionID is the --execution-id value, defaulting to ReceiptPath;
	// schema 2 only.
	ExecutionID string `json:"executionId,omitempty"`
	// CanonicalPaths holds the realpaths; schema 2 only.
	CanonicalPaths *CanonicalPaths `json:"canonicalPaths,omitempty"`

	StartedAt   string    `json:"startedAt"`   // ISO 8601.
	CompletedAt string    `json:"completedAt"` // ISO 8601.
	ElapsedMs   int64     `json:"elapsedMs"`
	Executable  *string   `json:"executable"` // nil when the CLI was not found.
	Preflight   Preflight `json:"preflight"`
	Argv        []string  `json:"argv"` // empty, never nil, when nothing ran.
	ExitCode    *int      `json:"exitCode"`
	// Signal is set only when the runner itself signalled a still-active
	// direct child.
	Signal *string `json:"signal"`

	ReportedModel *string        `json:"reportedModel"`
	ModelVerified bool           `json:"modelVerified"`
	ModelEvidence *ModelEvidence `json:"modelEvidence"`
	SessionID     *string        `json:"sessionId"`
	Usage         *Usage         `json:"usage"`
	CostUSD       *float64       `json:"costUsd"`

	Error        *ReceiptError `json:"error"`
	FailurePhase *FailurePhase `json:"failurePhase"`
	// ProcessStarted is false only when the workload provably never started;
	// nil (schema 1 only) means unknown.
	ProcessStarted *bool `json:"processStarted,omitempty"`
	// APISpend is deny, approved or legacy (no --api-spend); "" (schema 1
	// only) reads as legacy.
	APISpend APISpend `json:"apiSpend,omitempty"`
	// Contract is legacy or strict; "" (schema 1 only) reads as legacy.
	Contract Contract `json:"contract,omitempty"`
	// TimeoutMs is the explicit --timeout deadline, nil when none was given.
	// A receipt may carry a fractional value (any positive number is
	// valid); it is held rounded up to the next whole millisecond.
	TimeoutMs *int64 `json:"timeoutMs"`
	// ToolDenial is set when the run ended on a refused tool call.
	ToolDenial *ToolDenial `json:"toolDenial,omitempty"`
	// Handoff is set on needs-parent-operation receipts.
	Handoff *ReceiptHandoff `json:"handoff,omitempty"`
	// HandoffMalformed marks a malformed-output receipt whose handoff block
	// was present but invalid.
	HandoffMalformed bool `json:"handoffMalformed,omitempty"`
	// TerminalSuccess is the runner's verdict on whether a provider-protocol
	// final success was observed alongside a failure; nil when not assessed.
	// true vetoes replaying the attempt as a failure.
	TerminalSuccess *bool `json:"terminalSuccess,omitempty"`
	// Containment is how the attempt was contained (issue 24); nil on
	// receipts from runners that did not record it.
	Containment *ReceiptContainment `json:"containment,omitempty"`
}

// Containment classes a receipt may name (providers.ContainmentClass).
const (
	ContainmentReadOnly       = "READ_ONLY_NO_NETWORK"
	ContainmentWorkspaceWrite = "WORKSPACE_WRITE_NO_NETWORK"
	ContainmentUnverified     = "UNVERIFIED"
)

// ReceiptContainment is the attempt's containment class, what verified it
// ("the kernel (Landlock ABI 7)", "" when UNVERIFIED), whether it ran
// unrestricted by the run's --allow-unverified-containment, and what the
// sandbox refused during the attempt (the egress proxy's denials, and the
// kernel's when a spec can tell).
type ReceiptContainment struct {
	Class        string   `json:"class"`
	By           string   `json:"by"`
	Unrestricted bool     `json:"unrestricted,omitempty"`
	Denied       []string `json:"denied,omitempty"`
}
