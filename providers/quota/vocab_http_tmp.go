package quota

import "github.com/switchyard-dev/switchyard/policy"

// Temporary: the CapacityReason constants policy gains on another branch
// (policy.CapacityReasonDisabled, ...). The values are the closed
// vocabulary of the shared plan; at merge every use becomes the policy
// constant and this file goes.
const (
	httpReasonDisabled        policy.CapacityReason = "disabled"
	httpReasonNoCredentials   policy.CapacityReason = "no_credentials"
	httpReasonTokenExpired    policy.CapacityReason = "token_expired"
	httpReasonTokenLacksScope policy.CapacityReason = "token_lacks_scope"
	httpReasonThrottled       policy.CapacityReason = "throttled"
	httpReasonBackendError    policy.CapacityReason = "backend_error"
	httpReasonTimeout         policy.CapacityReason = "timeout"
	httpReasonUnparseable     policy.CapacityReason = "unparseable"
	httpReasonNoProject       policy.CapacityReason = "no_project"
	httpReasonNoSource        policy.CapacityReason = "no_source"
)
