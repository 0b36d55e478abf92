package policy

import "time"

// This file holds the contracts of "knowing before launch"
// (seeds/provider-contract.md "Quota honesty" and "Eligibility",
// seeds/execution-eligibility.md): a provider's capacity snapshot, its
// execution eligibility report, the report a deployment keeps per provider,
// and the one function that decides from them whether an attempt may be
// routed. Like the rest of policy it is pure: now is a parameter.

// QuotaSource says where trustworthy quota evidence for a provider comes
// from (provider-contract.md "Quota honesty").
type QuotaSource string

// Quota source classes.
const (
	QuotaLiveHTTP    QuotaSource = "LIVE_HTTP"   // an HTTP usage endpoint
	QuotaLiveRPC     QuotaSource = "LIVE_RPC"    // an RPC of the CLI's app server
	QuotaLiveCLI     QuotaSource = "LIVE_CLI"    // a CLI command
	QuotaUnsupported QuotaSource = "UNSUPPORTED" // no trustworthy metric; capacity is opaque
)

// QuotaSources lists every quota source class.
var QuotaSources = []QuotaSource{QuotaLiveHTTP, QuotaLiveRPC, QuotaLiveCLI, QuotaUnsupported}

// Valid reports whether s is one of QuotaSources.
func (s QuotaSource) Valid() bool { return inList(QuotaSources, s) }

// CapacitySchemaVersion is the schema_version of CapacitySnapshot and
// CapacityReport.
const CapacitySchemaVersion = 1

// CapacityState is what a snapshot knows.
type CapacityState string

// Capacity states. UNKNOWN and UNSUPPORTED are never conflated: unknown
// means a source exists but its evidence is missing, stale, disabled or
// unparseable; unsupported means the provider exposes no trustworthy metric.
const (
	CapacityMeasured    CapacityState = "measured"
	CapacityUnknown     CapacityState = "unknown"
	CapacityUnsupported CapacityState = "unsupported"
)

// CapacityStates lists every capacity state.
var CapacityStates = []CapacityState{CapacityMeasured, CapacityUnknown, CapacityUnsupported}

// Valid reports whether s is one of CapacityStates.
func (s CapacityState) Valid() bool { return inList(CapacityStates, s) }

// CapacityReason is a closed code saying why a snapshot is unknown or
// unsupported (see CapacityReasons).
type CapacityReason string

// Capacity reasons. The quota sources set them (providers/quota); every
// one but CapacityReasonNoSource goes with CapacityUnknown.
const (
	// CapacityReasonDisabled: the kill switch SWITCHYARD_<PROVIDER>_USAGE_API=0 is set.
	CapacityReasonDisabled CapacityReason = "disabled"
	// CapacityReasonNotSignedIn: the CLI has no signed-in account.
	CapacityReasonNotSignedIn CapacityReason = "not_signed_in"
	// CapacityReasonNoCredentials: no credentials the source can use were found.
	CapacityReasonNoCredentials CapacityReason = "no_credentials"
	// CapacityReasonTokenExpired: the credentials are expired and could not be refreshed.
	CapacityReasonTokenExpired CapacityReason = "token_expired"
	// CapacityReasonTokenLacksScope: the token is valid but may not read usage.
	CapacityReasonTokenLacksScope CapacityReason = "token_lacks_scope"
	// CapacityReasonThrottled: the source refused the read as too frequent.
	CapacityReasonThrottled CapacityReason = "throttled"
	// CapacityReasonBackendError: the source answered with an error.
	CapacityReasonBackendError CapacityReason = "backend_error"
	// CapacityReasonTimeout: the acquisition's deadline passed.
	CapacityReasonTimeout CapacityReason = "timeout"
	// CapacityReasonUnparseable: the source's answer has an unknown shape.
	CapacityReasonUnparseable CapacityReason = "unparseable"
	// CapacityReasonBinaryMissing: the provider CLI the source runs is not installed.
	CapacityReasonBinaryMissing CapacityReason = "binary_missing"
	// CapacityReasonNoPlanQuota: the account has no plan quota to read
	// (Codex signed in with an API key).
	CapacityReasonNoPlanQuota CapacityReason = "no_plan_quota"
	// CapacityReasonNoProject: no Cloud project to ask for quota (Gemini).
	CapacityReasonNoProject CapacityReason = "no_project"
	// CapacityReasonNoSource: the provider exposes no trustworthy quota
	// metric; the one reason of CapacityUnsupported.
	CapacityReasonNoSource CapacityReason = "no_source"
)

// CapacityReasons lists every capacity reason in vocabulary order.
var CapacityReasons = []CapacityReason{
	CapacityReasonDisabled, CapacityReasonNotSignedIn, CapacityReasonNoCredentials,
	CapacityReasonTokenExpired, CapacityReasonTokenLacksScope, CapacityReasonThrottled,
	CapacityReasonBackendError, CapacityReasonTimeout, CapacityReasonUnparseable,
	CapacityReasonBinaryMissing, CapacityReasonNoPlanQuota, CapacityReasonNoProject,
	CapacityReasonNoSource,
}

// Valid reports whether r is one of CapacityReasons.
func (r CapacityReason) Valid() bool { return inList(CapacityReasons, r) }

// CapacityWindow is one measured quota window. A field the source did not
// give is absent: a missing percentage never becomes 0% or 100%.
type CapacityWindow struct {
	// Name labels the window by its length ("5h", "7d") or the source's
	// bucket name (a model id for Gemini).
	Name          string     `json:"name"`
	UsedPercent   *float64   `json:"used_percent,omitempty"` // 0–100
	WindowMinutes *int       `json:"window_minutes,omitempty"`
	ResetsAt      *time.Time `json:"resets_at,omitempty"`
}

// CapacitySnapshot is one provider's quota state at one time.
type CapacitySnapshot struct {
	SchemaVersion int              `json:"schema_version"`
	Provider      Provider         `json:"provider"`
	Source        QuotaSource      `json:"source"`
	State         CapacityState    `json:"state"`
	Reason        CapacityReason   `json:"reason,omitempty"`    // set when State is unknown or unsupported
	SignedIn      *bool            `json:"signed_in,omitempty"` // absent when the source did not say
	Windows       []CapacityWindow `json:"windows,omitempty"`
	AcquiredAt    time.Time        `json:"acquired_at"`
}

// EligibilitySchemaVersion is the schema_version of ExecutionEligibility.
const EligibilitySchemaVersion = 1

// EligibilityState is the execution eligibility verdict of a provider's
// account (seeds/execution-eligibility.md).
type EligibilityState string

// Eligibility states. Unknown is unsafe.
const (
	EligibilityEligible             EligibilityState = "eligible"
	EligibilityAllowanceUnavailable EligibilityState = "allowance_unavailable"
	EligibilityPolicyBlocked        EligibilityState = "policy_blocked"
	EligibilityUnknown              EligibilityState = "unknown"
)

// EligibilityStates lists every eligibility state.
var EligibilityStates = []EligibilityState{EligibilityEligible, EligibilityAllowanceUnavailable, EligibilityPolicyBlocked, EligibilityUnknown}

// Valid reports whether s is one of EligibilityStates.
func (s EligibilityState) Valid() bool { return inList(EligibilityStates, s) }

// EligibilityReason is a closed reason code of an ExecutionEligibility
// (see EligibilityReasons). Each reason belongs to one state class (see
// EligibilityStateOf): credits_present makes a report policy_blocked; the
// blockers make it allowance_unavailable; the *_unknown reasons,
// collector_failed and not_signed_in make it unknown.
type EligibilityReason string

// Eligibility reasons (seeds/execution-eligibility.md, the Codex account/rateLimits/read fields).
const (
	// EligibilityReasonCreditsPresent: credits.hasCredits is true (policy_blocked).
	EligibilityReasonCreditsPresent EligibilityReason = "credits_present"
	// EligibilityReasonCreditsUnknown: credits.hasCredits is missing or unreadable (unknown).
	EligibilityReasonCreditsUnknown EligibilityReason = "credits_unknown"
	// EligibilityReasonOrdinaryUsageNotAllowed: ordinaryUsageAllowed is false (allowance_unavailable).
	EligibilityReasonOrdinaryUsageNotAllowed EligibilityReason = "ordinary_usage_not_allowed"
	// EligibilityReasonOrdinaryUsageUnknown: ordinaryUsageAllowed is missing or null (unknown).
	EligibilityReasonOrdinaryUsageUnknown EligibilityReason = "ordinary_usage_unknown"
	// EligibilityReasonOrdinaryUsageUnsupported: the answering app-server
	// generation predates ordinaryUsageAllowed, so it cannot say (unknown;
	// a newer Codex CLI can).
	EligibilityReasonOrdinaryUsageUnsupported EligibilityReason = "ordinary_usage_unsupported"
	// EligibilityReasonSpendControlReached: spendControlReached is true (allowance_unavailable).
	EligibilityReasonSpendControlReached EligibilityReason = "spend_control_reached"
	// EligibilityReasonSpendControlUnknown: spendControlReached is missing or null (unknown).
	EligibilityReasonSpendControlUnknown EligibilityReason = "spend_control_unknown"
	// EligibilityReasonRateLimitReached: rateLimitReachedType is set (allowance_unavailable).
	EligibilityReasonRateLimitReached EligibilityReason = "rate_limit_reached"
	// EligibilityReasonIndividualLimitExhausted: the individual limit has no
	// remaining percent (allowance_unavailable).
	EligibilityReasonIndividualLimitExhausted EligibilityReason = "individual_limit_exhausted"
	// EligibilityReasonUpsellPresent: rateLimitUpsell is set (allowance_unavailable).
	EligibilityReasonUpsellPresent EligibilityReason = "upsell_present"
	// EligibilityReasonWindowExhausted: a main window is at 100% (allowance_unavailable).
	EligibilityReasonWindowExhausted EligibilityReason = "window_exhausted"
	// EligibilityReasonCollectorFailed: the evidence could not be collected (unknown).
	EligibilityReasonCollectorFailed EligibilityReason = "collector_failed"
	// EligibilityReasonNotSignedIn: the CLI has no signed-in account (unknown).
	EligibilityReasonNotSignedIn EligibilityReason = "not_signed_in"
)

// EligibilityReasons lists every eligibility reason in vocabulary order,
// the order a report's Reasons keep.
var EligibilityReasons = []EligibilityReason{
	EligibilityReasonCreditsPresent, EligibilityReasonCreditsUnknown,
	EligibilityReasonOrdinaryUsageNotAllowed, EligibilityReasonOrdinaryUsageUnknown,
	EligibilityReasonOrdinaryUsageUnsupported,
	EligibilityReasonSpendControlReached, EligibilityReasonSpendControlUnknown,
	EligibilityReasonRateLimitReached, EligibilityReasonIndividualLimitExhausted,
	EligibilityReasonUpsellPresent, EligibilityReasonWindowExhausted,
	EligibilityReasonCollectorFailed, EligibilityReasonNotSignedIn,
}

// Valid reports whether r is one of EligibilityReasons.
func (r EligibilityReason) Valid() bool { return inList(EligibilityReasons, r) }

// ExecutionEligibility is the versioned eligibility report of one provider,
// kept separate from its capacity snapshot.
type ExecutionEligibility struct {
	SchemaVersion int                 `json:"schema_version"`
	Provider      Provider            `json:"provider"`
	State         EligibilityState    `json:"state"`
	Reasons       []EligibilityReason `json:"reasons,omitempty"`
	ObservedAt    time.Time           `json:"observed_at"`
}

// LearnedExhaustion is a usage exhaustion an attempt proved, carried to
// later runs until Until (the provider's known reset, or the deployment's
// default cooldown when the provider gives none).
type LearnedExhaustion struct {
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

// CapacityReport is what a deployment keeps per provider: at most one
// current report each, acquired by a worker where the CLI and its login
// live.
type CapacityReport struct {
	SchemaVersion     int                   `json:"schema_version"`
	Provider          Provider              `json:"provider"`
	Snapshot          CapacitySnapshot      `json:"snapshot"`
	Eligibility       *ExecutionEligibility `json:"eligibility,omitempty"` // only providers that have one (codex)
	LearnedExhaustion *LearnedExhaustion    `json:"learned_exhaustion,omitempty"`
}

// ExclusionCode is why an attempt was excluded before launch.
type ExclusionCode string

// Exclusion codes. The first three are the execution-eligibility seed's.
const (
	ExcludeAllowanceUnavailable ExclusionCode = "execution_allowance_unavailable"
	ExcludePolicyBlocked        ExclusionCode = "execution_policy_blocked"
	ExcludeUnverified           ExclusionCode = "execution_unverified"
	ExcludeNotSignedIn          ExclusionCode = "not_signed_in"
	ExcludeQuotaExhausted       ExclusionCode = "quota_exhausted" // a window at 100% or a learned exhaustion, until its reset
	ExcludeQuotaUnknown         ExclusionCode = "quota_unknown"   // a source exists but no trustworthy current evidence
	// ExcludeProviderUnhealthy: an attempt of this provider group earlier
	// in the run stalled (response_stalled) and its bounded health probe
	// found the provider unavailable; the group is ineligible for the rest
	// of the run.
	ExcludeProviderUnhealthy ExclusionCode = "provider_unhealthy"
	// ExcludeContainmentUnverified: the attempt's access mode needs a
	// verified containment class (READ_ONLY_NO_NETWORK for read-only,
	// WORKSPACE_WRITE_NO_NETWORK for isolated-write) that neither the
	// host's sandbox self-test nor the provider's own sandbox proves, and
	// the run did not accept an unrestricted attempt
	// (--allow-unverified-containment P).
	ExcludeContainmentUnverified ExclusionCode = "containment_unverified"
)

// ExclusionCodes lists every exclusion code.
var ExclusionCodes = []ExclusionCode{ExcludeAllowanceUnavailable, ExcludePolicyBlocked, ExcludeUnverified,
	ExcludeNotSignedIn, ExcludeQuotaExhausted, ExcludeQuotaUnknown, ExcludeProviderUnhealthy, ExcludeContainmentUnverified}

// Valid reports whether c is one of ExclusionCodes.
func (c ExclusionCode) Valid() bool { return inList(ExclusionCodes, c) }

// CapacityEvidence is how a verdict knew the provider's capacity.
type CapacityEvidence string

// Capacity evidence kinds.
const (
	EvidenceMeasured CapacityEvidence = "measured"
	EvidenceOpaque   CapacityEvidence = "opaque" // UNSUPPORTED: no percentage, not a failure
	EvidenceUnknown  CapacityEvidence = "unknown"
)

// CapacityEvidences lists every capacity evidence kind.
var CapacityEvidences = []CapacityEvidence{EvidenceMeasured, EvidenceOpaque, EvidenceUnknown}

// Valid reports whether e is one of CapacityEvidences.
func (e CapacityEvidence) Valid() bool { return inList(CapacityEvidences, e) }

// DefaultCapacityMaxAge is how old a report may be before it counts as
// stale (unknown).
const DefaultCapacityMaxAge = 15 * time.Minute

// EligibilityInput is everything EvaluateEligibility decides from.
type EligibilityInput struct {
	Provider Provider
	Source   QuotaSource     // the provider spec's quota source class
	Report   *CapacityReport // nil when none could be had
	Now      time.Time
	MaxAge   time.Duration // 0 means DefaultCapacityMaxAge
	// AllowUnknown is the run's explicit override for UNKNOWN evidence
	// (run --allow-unknown-quota P): the attempt proceeds, Overridden set.
	AllowUnknown bool
	// Unhealthy: an earlier attempt of Provider in this run stalled and
	// was found provider_unhealthy (the run's log says so). It decides
	// before everything else and nothing overrides it.
	Unhealthy bool
	// SignedOut: an earlier attempt of Provider in this run ended
	// unauthenticated before it started (its preflight proved no login;
	// the run's log says so). For an UNSUPPORTED provider, whose capacity
	// report carries no sign-in evidence, it is the auth gate.
	SignedOut bool
	// Containment is the attempt's containment as the gate found it; nil
	// skips the containment rule (exclusions recorded before it existed).
	Containment *ContainmentEvidence
	// AllowUnverifiedContainment is the run's explicit opt-in to run this
	// provider unrestricted (run --allow-unverified-containment P).
	AllowUnverifiedContainment bool
}

// ContainmentEvidence is an attempt's containment for its access mode:
// the class, what verified it, or why not and the fix.
type ContainmentEvidence struct {
	Mode  Access `json:"mode"`
	Class string `json:"class"`
	By    string `json:"by,omitempty"`
	Why   string `json:"why,omitempty"`
	Fix   string `json:"fix,omitempty"`
}

// Required is the class Mode needs.
func (c ContainmentEvidence) Required() string {
	if c.Mode == IsolatedWrite {
		return ContainmentWorkspaceWrite
	}
	return ContainmentReadOnly
}

// Verified reports whether Class is the class Mode needs.
func (c ContainmentEvidence) Verified() bool { return c.Class == c.Required() }

// EligibilityVerdict is EvaluateEligibility's answer.
type EligibilityVerdict struct {
	Eligible   bool             `json:"eligible"`
	Code       ExclusionCode    `json:"code,omitempty"`   // set when not eligible, or when Overridden
	Detail     string           `json:"detail,omitempty"` // a human sentence, no account data
	Capacity   CapacityEvidence `json:"capacity"`
	Until      *time.Time       `json:"until,omitempty"`      // the known reset of an exhaustion
	Overridden bool             `json:"overridden,omitempty"` // eligible only through AllowUnknown
}
