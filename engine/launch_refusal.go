package engine

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// LaunchRefusal is the first attempt of lanes the runner would refuse at
// launch without a receipt, as a policy error (the CLI's exit 65) naming
// the lane row, the descriptor and the fix; nil when every external
// attempt can launch. The rules are the runner's own (checkDescriptor):
// the provider's model rule (Spec.CLIModel: Devin swe-2 only at medium,
// high, max or default, effort only on Devin's legacy families, Cursor,
// Antigravity and OpenCode only at @default, no versioned Claude pin), and
// an explicit saved apiSpend for every Antigravity attempt. Submit and
// `switchyard run` check it before a run is recorded, so such an attempt
// is refused up front instead of abandoned at launch. Native attempts run
// on the parent and are not the runner's.
func LaunchRefusal(lanes []policy.LanePolicy) error {
	for _, l := range lanes {
		for k, ap := range l.Attempts {
			if ap.Route == policy.RouteNative || ap.Attempt.Provider == "" {
				continue
			}
			where := fmt.Sprintf("lane %s attempt %d %s", l.ID, k, ap.Descriptor)
			spec, err := providers.Lookup(ap.Attempt.Provider)
			if err != nil {
				return policy.Policyf("%s: %v", where, err)
			}
			if spec.CLIModel == nil {
				return policy.Policyf("%s: provider %s has no model rule; the runner refuses it", where, ap.Attempt.Provider)
			}
			if _, err := spec.CLIModel(ap.Attempt.Model, ap.Attempt.Effort); err != nil {
				return policy.Policyf("%s: the runner would refuse it at launch: %v; fix the row in the sheet (`switchyard models` lists what each CLI accepts)", where, err)
			}
			if ap.Attempt.Provider == policy.Antigravity && ap.APISpend != policy.APISpendDeny && ap.APISpend != policy.APISpendApproved {
				return policy.Policyf("%s: the runner would refuse it at launch: every Antigravity attempt needs a saved apiSpend; add an access line for antigravity with \"apiSpend\":\"deny\" or \"approved\" to the sheet", where)
			}
		}
	}
	return nil
}
