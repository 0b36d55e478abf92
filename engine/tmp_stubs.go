package engine

// TEMPORARY — removed at merge. policy.EvaluateEligibility and
// policy.CapacityReportDigest are being written on another branch (pol);
// until they land the gate and replay call these stand-ins, which follow
// the gate order of ELIG.md so the engine tests exercise real codes. At
// merge delete this file and declare instead (e.g. in eligibility.go):
//
//	var (
//		evaluateEligibility  = policy.EvaluateEligibility
//		capacityReportDigest = policy.CapacityReportDigest
//	)

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchyard-dev/switchyard/events"

	"github.com/switchyard-dev/switchyard/policy"
)

var evaluateEligibility = stubEvaluateEligibility

func capacityReportDigest(r policy.CapacityReport) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return events.Digest(b), nil
}

func stubEvaluateEligibility(in policy.EligibilityInput) policy.EligibilityVerdict {
	maxAge := in.MaxAge
	if maxAge == 0 {
		maxAge = policy.DefaultCapacityMaxAge
	}
	not := func(code policy.ExclusionCode, ev policy.CapacityEvidence, until *time.Time, detail string) policy.EligibilityVerdict {
		v := policy.EligibilityVerdict{Code: code, Capacity: ev, Until: until, Detail: detail}
		if in.AllowUnknown && (code == policy.ExcludeQuotaUnknown || code == policy.ExcludeUnverified) {
			v.Eligible, v.Overridden = true, true
		}
		return v
	}
	learned := func(r *policy.CapacityReport) *time.Time {
		if r != nil && r.LearnedExhaustion != nil && r.LearnedExhaustion.Until.After(in.Now) {
			u := r.LearnedExhaustion.Until
			return &u
		}
		return nil
	}
	r := in.Report
	if in.Source == policy.QuotaUnsupported {
		if u := learned(r); u != nil {
			return not(policy.ExcludeQuotaExhausted, policy.EvidenceOpaque, u, fmt.Sprintf("%s usage exhaustion learned until %s", in.Provider, u.Format(time.RFC3339)))
		}
		return policy.EligibilityVerdict{Eligible: true, Capacity: policy.EvidenceOpaque}
	}
	switch {
	case r == nil:
		return not(policy.ExcludeQuotaUnknown, policy.EvidenceUnknown, nil, "no capacity report")
	case r.Provider != in.Provider || r.Snapshot.Source != in.Source:
		return not(policy.ExcludeQuotaUnknown, policy.EvidenceUnknown, nil, "report of another provider or source")
	case in.Now.Sub(r.Snapshot.AcquiredAt) > maxAge:
		return not(policy.ExcludeQuotaUnknown, policy.EvidenceUnknown, nil, "stale capacity report")
	}
	if u := learned(r); u != nil {
		return not(policy.ExcludeQuotaExhausted, policy.EvidenceMeasured, u, "learned exhaustion")
	}
	if (r.Snapshot.SignedIn != nil && !*r.Snapshot.SignedIn) || r.Snapshot.Reason == "not_signed_in" {
		return not(policy.ExcludeNotSignedIn, policy.EvidenceUnknown, nil, "not signed in")
	}
	if e := r.Eligibility; e != nil {
		switch e.State {
		case policy.EligibilityPolicyBlocked:
			return not(policy.ExcludePolicyBlocked, policy.EvidenceMeasured, nil, fmt.Sprintf("eligibility policy_blocked %v", e.Reasons))
		case policy.EligibilityAllowanceUnavailable:
			return not(policy.ExcludeAllowanceUnavailable, policy.EvidenceMeasured, nil, fmt.Sprintf("eligibility allowance_unavailable %v", e.Reasons))
		case policy.EligibilityUnknown:
			return not(policy.ExcludeUnverified, policy.EvidenceUnknown, nil, fmt.Sprintf("eligibility unknown %v", e.Reasons))
		}
	}
	if r.Snapshot.State != policy.CapacityMeasured {
		return not(policy.ExcludeQuotaUnknown, policy.EvidenceUnknown, nil, "capacity "+string(r.Snapshot.State)+" "+string(r.Snapshot.Reason))
	}
	for _, w := range r.Snapshot.Windows {
		if w.UsedPercent != nil && *w.UsedPercent >= 100 && (w.ResetsAt == nil || w.ResetsAt.After(in.Now)) {
			return not(policy.ExcludeQuotaExhausted, policy.EvidenceMeasured, w.ResetsAt, "window "+w.Name+" at 100%")
		}
	}
	return policy.EligibilityVerdict{Eligible: true, Capacity: policy.EvidenceMeasured}
}
