package events

import (
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// Exclude records that the eligibility gate kept an attempt from launching
// (lane-level, no transition; created or terminal). Its provider's group
// joins the lane's excluded groups, which the lane's LaneState carries with
// the run's exhausted groups, so policy.Next skips the attempt the way it
// skips an exhausted group. Replay recomputes Verdict with
// policy.EvaluateEligibility from Report, EvaluatedAt and the run's
// overrides, and checks ReportDigest.
type Exclude struct {
	AttemptIndex int                       `json:"attemptIndex"`
	Descriptor   string                    `json:"descriptor"`
	Provider     policy.Provider           `json:"provider"` // the attempt's exhaustion group
	Source       policy.QuotaSource        `json:"source"`
	Verdict      policy.EligibilityVerdict `json:"verdict"`
	// Report is the capacity report the verdict was computed from; absent
	// when none could be had (a fresh deployment whose workers did not
	// answer in time).
	Report       *policy.CapacityReport `json:"report,omitempty"`
	ReportDigest string                 `json:"reportDigest,omitempty"`
	EvaluatedAt  time.Time              `json:"evaluatedAt"`
	InputDigest  string                 `json:"inputDigest"`
	SheetDigest  string                 `json:"sheetDigest"`
}

// EventType returns TypeExclude.
func (Exclude) EventType() Type { return TypeExclude }

func (p Exclude) validate() error {
	return invalidf("exclude: validation not implemented yet")
}
