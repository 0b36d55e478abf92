package policy

import (
	"fmt"
	"strings"
	"time"
)

// EvaluateEligibility is the one gate that decides, before a launch,
// whether an attempt of in.Provider may be routed. It is pure: in.Now is
// the clock. In order, the first rule that applies decides:
//
//  0. Unhealthy: provider_unhealthy (capacity unknown), whatever the
//     report says; AllowUnknown does not override it.
//     Containment (when given) not the class the mode needs and the run
//     did not accept it (AllowUnverifiedContainment):
//     containment_unverified; AllowUnknown does not override it.
//  1. Source UNSUPPORTED (provider-contract.md: eligible only when the
//     authentication, health, cooldown and rate-limit gates pass): health
//     is rule 0; SignedOut (this run's preflight proved the CLI signed
//     out) is not_signed_in; a learned exhaustion of a valid report of
//     this provider with Until after Now (the cooldown) is quota_exhausted
//     until then; anything else is eligible with opaque capacity (no
//     percentage, not a failure). No rate-limit signal exists for these
//     providers: their failures are never classified as rate limits.
//  2. Otherwise (a live source, or an unknown source class, which fails
//     closed) quota_unknown when the report is missing, invalid
//     (CapacityReport.Validate), of another provider or source class, or
//     older than MaxAge (or more than MaxAge in the future).
//  3. A learned exhaustion active at Now: quota_exhausted until its Until.
//  4. Snapshot signed_in=false or reason not_signed_in: not_signed_in.
//  5. Eligibility policy_blocked: execution_policy_blocked.
//  6. Eligibility allowance_unavailable: execution_allowance_unavailable,
//     Until the latest reset of the snapshot's exhausted windows when every
//     one of them has a known reset.
//  7. Eligibility unknown: execution_unverified.
//  8. Snapshot unknown: quota_unknown.
//  9. A window with used_percent >= 100 whose resets_at is absent or after
//     Now: quota_exhausted, Until as in 6. A window without used_percent
//     never exhausts; one whose reset has passed is not exhausted.
//  10. Eligible, capacity measured.
//
// in.AllowUnknown turns quota_unknown and execution_unverified, and only
// those, into eligible with Overridden set and Code kept.
func EvaluateEligibility(in EligibilityInput) EligibilityVerdict {
	v := evaluate(in)
	if !v.Eligible && in.AllowUnknown && (v.Code == ExcludeQuotaUnknown || v.Code == ExcludeUnverified) {
		v.Eligible = true
		v.Overridden = true
		v.Detail += "; allowed by the run's override for unknown evidence"
	}
	return v
}

func evaluate(in EligibilityInput) EligibilityVerdict {
	p, now, r := in.Provider, in.Now, in.Report
	if in.Unhealthy {
		return exclude(p, ExcludeProviderUnhealthy, EvidenceUnknown, nil,
			"an earlier attempt in this run stalled and the health probe found the provider unavailable; it is ineligible for the rest of the run")
	}
	if c := in.Containment; c != nil && !c.Verified() && !in.AllowUnverifiedContainment {
		return exclude(p, ExcludeContainmentUnverified, EvidenceUnknown, nil,
			"%s containment is %s, not the required %s: %s; fix: %s, or pass --allow-unverified-containment %s to run it unrestricted (recorded in the run)",
			c.Mode, c.Class, c.Required(), c.Why, c.Fix, p)
	}
	maxAge := in.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultCapacityMaxAge
	}
	usable := r != nil && r.Validate() == nil && r.Provider == p

	if in.Source == QuotaUnsupported {
		if in.SignedOut {
			return exclude(p, ExcludeNotSignedIn, EvidenceOpaque, nil,
				"an earlier attempt in this run found the CLI signed out before it started (its preflight); the provider is ineligible for the rest of the run")
		}
		if usable {
			if l := r.LearnedExhaustion; l != nil && l.Until.After(now) {
				return learned(p, l, EvidenceOpaque)
			}
		}
		return EligibilityVerdict{Eligible: true, Capacity: EvidenceOpaque,
			Detail: fmt.Sprintf("%s: capacity is opaque (quota source %s)", p, QuotaUnsupported)}
	}

	unknown := func(format string, args ...any) EligibilityVerdict {
		return exclude(p, ExcludeQuotaUnknown, EvidenceUnknown, nil, format, args...)
	}
	switch {
	case !in.Source.Valid():
		return unknown("the provider's quota source class is not known")
	case r == nil:
		return unknown("no capacity report")
	case r.Validate() != nil:
		return unknown("the capacity report is invalid")
	case r.Provider != p:
		return unknown("the capacity report is for %s", r.Provider)
	case r.Snapshot.Source != in.Source:
		return unknown("the capacity report's source %s is not the provider's %s", r.Snapshot.Source, in.Source)
	}
	s := r.Snapshot
	switch age := now.Sub(s.AcquiredAt); {
	case age > maxAge:
		return unknown("the capacity report is %s old, over the %s limit", age.Round(time.Second), maxAge)
	case -age > maxAge: // a clock far off; a report from the future would never age
		return unknown("the capacity report is dated %s in the future, over the %s limit", (-age).Round(time.Second), maxAge)
	}
	evidence := EvidenceMeasured
	if s.State != CapacityMeasured {
		evidence = EvidenceUnknown
	}
	if l := r.LearnedExhaustion; l != nil && l.Until.After(now) {
		return learned(p, l, evidence)
	}
	if (s.SignedIn != nil && !*s.SignedIn) || s.Reason == CapacityReasonNotSignedIn {
		return exclude(p, ExcludeNotSignedIn, evidence, nil, "not signed in")
	}
	exhausted, until := exhaustedWindows(s, now)
	if e := r.Eligibility; e != nil {
		switch e.State {
		case EligibilityPolicyBlocked:
			return exclude(p, ExcludePolicyBlocked, evidence, nil, "purchased credits are present")
		case EligibilityAllowanceUnavailable:
			return exclude(p, ExcludeAllowanceUnavailable, evidence, until,
				"the included allowance is unavailable: %s", reasonList(e.Reasons))
		case EligibilityUnknown:
			return exclude(p, ExcludeUnverified, evidence, nil,
				"execution eligibility is unverified: %s", reasonList(e.Reasons))
		}
	}
	if s.State != CapacityMeasured {
		return unknown("capacity is unknown: %s", s.Reason)
	}
	if len(exhausted) > 0 {
		reset := "with no known reset"
		if until != nil {
			reset = "until " + until.UTC().Format(time.RFC3339)
		}
		return exclude(p, ExcludeQuotaExhausted, evidence, until,
			"quota window %s at 100%% %s", strings.Join(exhausted, ", "), reset)
	}
	return EligibilityVerdict{Eligible: true, Capacity: EvidenceMeasured,
		Detail: fmt.Sprintf("%s: capacity is measured", p)}
}

// exhaustedWindows names the windows at 100% whose reset has not passed,
// and the latest of their resets when every one of them has one.
func exhaustedWindows(s CapacitySnapshot, now time.Time) ([]string, *time.Time) {
	var names []string
	var until *time.Time
	known := true
	for _, w := range s.Windows {
		if w.UsedPercent == nil || *w.UsedPercent < 100 {
			continue
		}
		if w.ResetsAt != nil && !w.ResetsAt.After(now) {
			continue
		}
		names = append(names, w.Name)
		if w.ResetsAt == nil {
			known = false
		} else if until == nil || w.ResetsAt.After(*until) {
			t := w.ResetsAt.UTC()
			until = &t
		}
	}
	if !known {
		until = nil
	}
	return names, until
}

func learned(p Provider, l *LearnedExhaustion, evidence CapacityEvidence) EligibilityVerdict {
	until := l.Until.UTC()
	return exclude(p, ExcludeQuotaExhausted, evidence, &until,
		"usage exhaustion learned at %s, until %s", l.At.UTC().Format(time.RFC3339), until.Format(time.RFC3339))
}

func exclude(p Provider, code ExclusionCode, evidence CapacityEvidence, until *time.Time, format string, args ...any) EligibilityVerdict {
	return EligibilityVerdict{Code: code, Capacity: evidence, Until: until,
		Detail: fmt.Sprintf("%s: %s", p, fmt.Sprintf(format, args...))}
}

func reasonList(rs []EligibilityReason) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return strings.Join(out, ", ")
}

// String is "<code>: <detail>" for logs; an eligible verdict's code reads
// "eligible".
func (v EligibilityVerdict) String() string {
	code := string(v.Code)
	if code == "" {
		code = "eligible"
	}
	return code + ": " + v.Detail
}
