package quota

import "github.com/switchyard-dev/switchyard/policy"

// Temporary copies of the closed vocabularies the Codex source needs
// (ELIG.md "Closed vocabularies"). policy/capacity.go defines the real
// constants (CapacityReasonNotSignedIn, EligibilityReasonCreditsPresent,
// ...) on another branch; at merge each name here is replaced by its
// policy constant and this file is deleted. The values are exactly the
// policy values.
const (
	reasonNotSignedIn   policy.CapacityReason = "not_signed_in"
	reasonBackendError  policy.CapacityReason = "backend_error"
	reasonTimeout       policy.CapacityReason = "timeout"
	reasonUnparseable   policy.CapacityReason = "unparseable"
	reasonBinaryMissing policy.CapacityReason = "binary_missing"
	reasonNoPlanQuota   policy.CapacityReason = "no_plan_quota"
)

const (
	eligCreditsPresent           policy.EligibilityReason = "credits_present"
	eligCreditsUnknown           policy.EligibilityReason = "credits_unknown"
	eligOrdinaryUsageNotAllowed  policy.EligibilityReason = "ordinary_usage_not_allowed"
	eligOrdinaryUsageUnknown     policy.EligibilityReason = "ordinary_usage_unknown"
	eligSpendControlReached      policy.EligibilityReason = "spend_control_reached"
	eligSpendControlUnknown      policy.EligibilityReason = "spend_control_unknown"
	eligRateLimitReached         policy.EligibilityReason = "rate_limit_reached"
	eligIndividualLimitExhausted policy.EligibilityReason = "individual_limit_exhausted"
	eligUpsellPresent            policy.EligibilityReason = "upsell_present"
	eligWindowExhausted          policy.EligibilityReason = "window_exhausted"
	eligCollectorFailed          policy.EligibilityReason = "collector_failed"
	eligNotSignedIn              policy.EligibilityReason = "not_signed_in"
)

// eligibilityOrder is the vocabulary order reasons are sorted in (policy
// has it as its EligibilityReasons list).
var eligibilityOrder = []policy.EligibilityReason{
	eligCreditsPresent, eligCreditsUnknown,
	eligOrdinaryUsageNotAllowed, eligOrdinaryUsageUnknown,
	eligSpendControlReached, eligSpendControlUnknown,
	eligRateLimitReached, eligIndividualLimitExhausted, eligUpsellPresent,
	eligWindowExhausted, eligCollectorFailed, eligNotSignedIn,
}
