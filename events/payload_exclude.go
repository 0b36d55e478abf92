package events

import (
	"fmt"
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
//
// Validation: AttemptIndex >= 0; Descriptor non-blank; Provider a known
// provider; Source one of the four classes; Verdict not eligible (nor
// overridden) with a known Code and Capacity; Report and ReportDigest both
// present or both absent, the report valid, of Provider, and ReportDigest
// its digest ("sha256:<hex>" over its canonical JSON); EvaluatedAt set;
// InputDigest and SheetDigest digests. The run fold checks the rest against
// the lane: the attempt exists, has Descriptor, and its exhaustion group is
// Provider.
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
	// MaxAgeMs is the report age, in milliseconds, past which the gate
	// counted a report as stale (the engine's CapacityMaxAge), so replay
	// judges staleness as the engine did.
	MaxAgeMs    int64  `json:"maxAgeMs"`
	InputDigest string `json:"inputDigest"`
	SheetDigest string `json:"sheetDigest"`
	// Containment is the attempt's containment as the gate found it (the
	// host's sandbox self-test, else the provider's own sandbox), so replay
	// recomputes a containment_unverified exclusion; absent on exclusions
	// recorded before the gate checked containment.
	Containment *policy.ContainmentEvidence `json:"containment,omitempty"`
	// Rule is how the lane's fallback treats the exclusion
	// (policy.ExclusionRuleOf over the lane's fallback and Verdict.Code):
	// fallback-moves-on skips the attempt like an exhausted group,
	// fallback-stops stops the lane with reason excluded. Absent on
	// exclusions recorded before the rule existed, whose lanes moved on.
	Rule policy.ExclusionRule `json:"rule,omitempty"`
}

// EventType returns TypeExclude.
func (Exclude) EventType() Type { return TypeExclude }

func (p Exclude) validate() error {
	if p.AttemptIndex < 0 {
		return invalidf("attemptIndex %d must not be negative", p.AttemptIndex)
	}
	if err := requireText("descriptor", p.Descriptor); err != nil {
		return err
	}
	if !p.Provider.Valid() {
		return invalidf("provider %q is not a known provider", p.Provider)
	}
	if !p.Source.Valid() {
		return invalidf("source %q: want LIVE_HTTP, LIVE_RPC, LIVE_CLI or UNSUPPORTED", p.Source)
	}
	if err := validateExclusionVerdict(p.Verdict); err != nil {
		return err
	}
	if !p.Rule.Valid() {
		return invalidf("rule %q: want %v (or absent on a log recorded before it)", p.Rule, policy.ExclusionRules)
	}
	if err := p.validateReport(); err != nil {
		return err
	}
	if p.MaxAgeMs <= 0 {
		return invalidf("maxAgeMs %d: want the gate's positive maximum report age", p.MaxAgeMs)
	}
	if p.EvaluatedAt.IsZero() {
		return invalidf("evaluatedAt is required")
	}
	if err := requireDigest("inputDigest", p.InputDigest); err != nil {
		return err
	}
	return requireDigest("sheetDigest", p.SheetDigest)
}

// validateExclusionVerdict checks that v excludes: an eligible verdict,
// overridden ones included, is never recorded as an exclusion.
func validateExclusionVerdict(v policy.EligibilityVerdict) error {
	if v.Eligible || v.Overridden {
		return invalidf("verdict is eligible: an exclude records an ineligible verdict")
	}
	if !v.Code.Valid() {
		return invalidf("verdict.code %q: want one of %v", v.Code, policy.ExclusionCodes)
	}
	switch v.Capacity {
	case policy.EvidenceMeasured, policy.EvidenceOpaque, policy.EvidenceUnknown:
	default:
		return invalidf("verdict.capacity %q: want measured, opaque or unknown", v.Capacity)
	}
	if v.Until != nil && v.Until.IsZero() {
		return invalidf("verdict.until is present but zero")
	}
	return nil
}

// validateReport checks the report the verdict was computed from and its
// digest: both present or both absent, the report valid, of the excluded
// group, and the digest its own.
func (p Exclude) validateReport() error {
	if p.Report == nil {
		if p.ReportDigest != "" {
			return invalidf("reportDigest without a report")
		}
		return nil
	}
	if err := validateCapacityReport(*p.Report); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if p.Report.Provider != p.Provider {
		return invalidf("report of %s for an exclusion of group %s", p.Report.Provider, p.Provider)
	}
	if err := requireDigest("reportDigest", p.ReportDigest); err != nil {
		return err
	}
	d, err := capacityReportDigest(*p.Report)
	if err != nil {
		return invalidf("report: %v", err)
	}
	if d != p.ReportDigest {
		return invalidf("reportDigest %s is not the digest of the report (%s)", p.ReportDigest, d)
	}
	return nil
}
