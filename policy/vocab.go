package policy

// Provider names one provider CLI route. The policy layer knows the seven
// providers of the reference helper; each is also an exhaustion group.
type Provider string

// The providers a sheet may name, in the reference helper's order.
const (
	Claude      Provider = "claude"      // Claude Code; also a parent harness.
	Codex       Provider = "codex"       // Codex CLI; also a parent harness.
	Grok        Provider = "grok"        // Grok Build CLI; external only.
	Devin       Provider = "devin"       // Devin CLI; external only.
	Cursor      Provider = "cursor"      // cursor-agent; external only.
	Antigravity Provider = "antigravity" // agy; external only, explicit apiSpend.
	OpenCode    Provider = "opencode"    // OpenCode; external only, approved apiSpend.
)

// Providers lists every provider in canonical order.
var Providers = []Provider{Claude, Codex, Grok, Devin, Cursor, Antigravity, OpenCode}

// Valid reports whether p is one of Providers.
func (p Provider) Valid() bool {
	for _, q := range Providers {
		if p == q {
			return true
		}
	}
	return false
}

// Parent is the top-level harness that owns a run: claude or codex.
type Parent string

// The two parent harnesses.
const (
	ParentClaude Parent = "claude"
	ParentCodex  Parent = "codex"
)

// ParseParent accepts exactly "claude" or "codex".
func ParseParent(s string) (Parent, error) {
	switch Parent(s) {
	case ParentClaude, ParentCodex:
		return Parent(s), nil
	}
	return "", Usagef("--parent must be claude or codex, got %q", s)
}

// Effort is a reasoning-effort level in a descriptor.
type Effort string

// Efforts. Default means "no selectable effort" (Cursor, Antigravity,
// OpenCode, Devin UIDs).
const (
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
	EffortXHigh   Effort = "xhigh"
	EffortMax     Effort = "max"
	EffortDefault Effort = "default"
)

// Efforts lists every effort a descriptor may carry.
var Efforts = []Effort{EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax, EffortDefault}

// Valid reports whether e is one of Efforts.
func (e Effort) Valid() bool {
	for _, f := range Efforts {
		if e == f {
			return true
		}
	}
	return false
}

// Access is a lane's access mode.
type Access string

// Access modes.
const (
	ReadOnly      Access = "read-only"      // may read the checkout, write only its output.
	IsolatedWrite Access = "isolated-write" // edits a dedicated worktree; started attempts need inspection.
)

// ParseAccess accepts exactly read-only or isolated-write.
func ParseAccess(s string) (Access, error) {
	switch Access(s) {
	case ReadOnly, IsolatedWrite:
		return Access(s), nil
	}
	return "", Usagef("access mode must be read-only or isolated-write, got %q", s)
}

// Outcome is a policy outcome of one attempt, the status of a lane-state
// event.
type Outcome string

// Outcomes. Only the four fallback outcomes may appear in "# fallback".
const (
	OutcomeComplete          Outcome = "complete"               // delivered; the lane stops complete.
	OutcomeUsageExhausted    Outcome = "usage-exhausted"        // proven provider quota exhaustion.
	OutcomeRouteUnavailable  Outcome = "route-unavailable"      // CLI, login or model missing before start.
	OutcomeTerminalFailure   Outcome = "terminal-failure"       // settled child failed with assessed non-success.
	OutcomeDeadlineExceeded  Outcome = "deadline-exceeded"      // explicit --timeout expired.
	OutcomeFailed            Outcome = "failed"                 // anything the saved policy cannot advance.
	OutcomePermissionBlocked Outcome = "permission-blocked"     // verified provider-owned denial.
	OutcomeNeedsParentOp     Outcome = "needs-parent-operation" // delivered handoff.
)

// Outcomes lists every lane-state status.
var Outcomes = []Outcome{OutcomeComplete, OutcomeUsageExhausted, OutcomeRouteUnavailable,
	OutcomeTerminalFailure, OutcomeDeadlineExceeded, OutcomeFailed, OutcomePermissionBlocked,
	OutcomeNeedsParentOp}

// FallbackOutcomes are the outcomes a "# fallback" line may list.
var FallbackOutcomes = []Outcome{OutcomeUsageExhausted, OutcomeRouteUnavailable,
	OutcomeTerminalFailure, OutcomeDeadlineExceeded}

// Valid reports whether o is one of Outcomes.
func (o Outcome) Valid() bool {
	for _, q := range Outcomes {
		if o == q {
			return true
		}
	}
	return false
}

// DeniedCause classifies a permission-blocked event.
type DeniedCause string

// Denied causes. Only permission may continue (under # continuation).
const (
	DeniedNone            DeniedCause = "none"
	DeniedPermission      DeniedCause = "permission"
	DeniedUnsupportedTool DeniedCause = "unsupported-tool"
	DeniedChangedFiles    DeniedCause = "changed-files"
	DeniedGuard           DeniedCause = "guard"
	DeniedOther           DeniedCause = "other"
)

// DeniedCauses lists every denied cause.
var DeniedCauses = []DeniedCause{DeniedNone, DeniedPermission, DeniedUnsupportedTool,
	DeniedChangedFiles, DeniedGuard, DeniedOther}

// Route says how an attempt is launched.
type Route string

// Routes.
const (
	RouteNative   Route = "native"   // the parent's own subagent primitive.
	RouteExternal Route = "external" // switchyard runner.
)

// Funding is an access fact's funding class; Unset marks a legacy sheet
// without a fact for the provider.
type Funding string

// Funding values.
const (
	FundingIncluded Funding = "included"
	FundingMetered  Funding = "metered"
	FundingUnknown  Funding = "unknown"
	FundingUnset    Funding = "unset"
)

// APISpend is the binding spending authorization for an attempt.
type APISpend string

// APISpend values. Unset appears on policies resolved from legacy sheets;
// Legacy appears on receipts whose runner was called without --api-spend.
const (
	APISpendDeny     APISpend = "deny"
	APISpendApproved APISpend = "approved"
	APISpendUnset    APISpend = "unset"
	APISpendLegacy   APISpend = "legacy"
)

// Contract is the worker ownership contract of an execution.
type Contract string

// Contracts.
const (
	ContractLegacy Contract = "legacy"
	ContractStrict Contract = "strict"
)

// ContinuationCause is a reason a same-route continuation may run.
type ContinuationCause string

// Continuation causes.
const (
	ContinuePermission ContinuationCause = "permission"
	ContinueHandoff    ContinuationCause = "handoff"
)

// OperationKind is a parent-only operation a worker may hand off.
type OperationKind string

// Operation kinds.
const (
	OpCommitCheckpoint OperationKind = "commit-checkpoint"
	OpRunChecks        OperationKind = "run-checks"
)

// Chain and continuation limits of the contract.
const (
	MaxAttemptsPerSeat         = 3
	ContinuationMaxExecutions  = 4
	DefaultContinuationMaxExec = 2
)
