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

// CapacityReason is a closed code saying why a snapshot is unknown or
// unsupported (see CapacityReasons).
type CapacityReason string

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

// EligibilityReason is a closed reason code of an ExecutionEligibility
// (see EligibilityReasons).
type EligibilityReason string

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
)

// CapacityEvidence is how a verdict knew the provider's capacity.
type CapacityEvidence string

// Capacity evidence kinds.
const (
	EvidenceMeasured CapacityEvidence = "measured"
	EvidenceOpaque   CapacityEvidence = "opaque" // UNSUPPORTED: no percentage, not a failure
	EvidenceUnknown  CapacityEvidence = "unknown"
)

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
}

// EligibilityVerdict is EvaluateEligibility's answer.
type EligibilityVerdict struct {
	Eligible   bool             `json:"eligible"`
	Code       ExclusionCode    `json:"code,omitempty"`   // set when not eligible, or when Overridden
	Detail     string           `json:"detail,omitempty"` // a human sentence, no account data
	Capacity   CapacityEvidence `json:"capacity"`
	Until      *time.Time       `json:"until,omitempty"`      // the known reset of an exhaustion
	Overridden bool             `json:"overridden,omitempty"` // eligible only through AllowUnknown
}
