package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// The capacity store's wire form and its checks. A report is validated
// before it is stored and again when it is read: a value that fails is an
// error naming the provider key, never a guess.
//
// TODO(merge #11): switch encodeCapacityReport, decodeCapacityReport and
// capacityReportDigest to policy.MarshalCapacityReport,
// policy.DecodeCapacityReport and policy.CapacityReportDigest, and drop the
// local vocabularies below, once the policy side of issue #11 lands. Until
// then this file holds the minimal strict checks the store needs.

// capacityReasons is the closed CapacityReason vocabulary (ELIG.md).
// Switch to policy's constants at merge.
var capacityReasons = []policy.CapacityReason{
	"disabled", "not_signed_in", "no_credentials", "token_expired", "token_lacks_scope", "throttled",
	"backend_error", "timeout", "unparseable", "binary_missing", "no_plan_quota", "no_project", "no_source",
}

// eligibilityReasons is the closed EligibilityReason vocabulary (ELIG.md).
// Switch to policy's constants at merge.
var eligibilityReasons = []policy.EligibilityReason{
	"credits_present", "credits_unknown", "ordinary_usage_not_allowed", "ordinary_usage_unknown",
	"spend_control_reached", "spend_control_unknown", "rate_limit_reached", "individual_limit_exhausted",
	"upsell_present", "window_exhausted", "collector_failed", "not_signed_in",
}

// exclusionCodes is every policy.ExclusionCode.
var exclusionCodes = []policy.ExclusionCode{
	policy.ExcludeAllowanceUnavailable, policy.ExcludePolicyBlocked, policy.ExcludeUnverified,
	policy.ExcludeNotSignedIn, policy.ExcludeQuotaExhausted, policy.ExcludeQuotaUnknown,
}

// CapacityProviders lists, in order, the providers the capacity store
// keeps reports for: every policy.Providers entry, then policy.Gemini,
// which has a quota source though no sheet names it. List returns reports
// in this order.
var CapacityProviders = append(slices.Clone(policy.Providers), policy.Gemini)

// capacityProvider reports whether p is one of CapacityProviders.
func capacityProvider(p policy.Provider) bool { return slices.Contains(CapacityProviders, p) }

// validQuotaSource reports whether s is one of the four source classes.
func validQuotaSource(s policy.QuotaSource) bool {
	switch s {
	case policy.QuotaLiveHTTP, policy.QuotaLiveRPC, policy.QuotaLiveCLI, policy.QuotaUnsupported:
		return true
	}
	return false
}

// validateCapacityReport checks a report: versions, provider, the closed
// vocabularies, and the rules that keep UNKNOWN and UNSUPPORTED apart.
// Switch to policy.DecodeCapacityReport's checks at merge.
func validateCapacityReport(r policy.CapacityReport) error {
	if r.SchemaVersion != policy.CapacitySchemaVersion {
		return capacitySchemaErr("schema_version", r.SchemaVersion, policy.CapacitySchemaVersion)
	}
	if !capacityProvider(r.Provider) {
		return invalidf("provider %q: want one of %v", r.Provider, CapacityProviders)
	}
	s := r.Snapshot
	if s.SchemaVersion != policy.CapacitySchemaVersion {
		return capacitySchemaErr("snapshot.schema_version", s.SchemaVersion, policy.CapacitySchemaVersion)
	}
	if s.Provider != r.Provider {
		return invalidf("snapshot.provider %q: the report is %s's", s.Provider, r.Provider)
	}
	if !validQuotaSource(s.Source) {
		return invalidf("snapshot.source %q: want LIVE_HTTP, LIVE_RPC, LIVE_CLI or UNSUPPORTED", s.Source)
	}
	switch s.State {
	case policy.CapacityMeasured:
		if s.Reason != "" {
			return invalidf("snapshot.reason %q on a measured snapshot: a reason says why a snapshot is unknown or unsupported", s.Reason)
		}
	case policy.CapacityUnknown, policy.CapacityUnsupported:
		if !slices.Contains(capacityReasons, s.Reason) {
			return invalidf("snapshot.reason %q of a %s snapshot: want one of %v", s.Reason, s.State, capacityReasons)
		}
	default:
		return invalidf("snapshot.state %q: want measured, unknown or unsupported", s.State)
	}
	if (s.Source == policy.QuotaUnsupported) != (s.State == policy.CapacityUnsupported) {
		return invalidf("snapshot of source %s in state %s: UNSUPPORTED is the state of exactly the sources that have no metric", s.Source, s.State)
	}
	for i, w := range s.Windows {
		if w.Name == "" {
			return invalidf("snapshot.windows[%d].name is required", i)
		}
		if p := w.UsedPercent; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 100) {
			return invalidf("snapshot.windows[%d].used_percent %v: want 0 to 100", i, *p)
		}
		if m := w.WindowMinutes; m != nil && *m <= 0 {
			return invalidf("snapshot.windows[%d].window_minutes %d: want a positive length", i, *m)
		}
	}
	if s.AcquiredAt.IsZero() {
		return invalidf("snapshot.acquired_at is required")
	}
	if e := r.Eligibility; e != nil {
		if e.SchemaVersion != policy.EligibilitySchemaVersion {
			return capacitySchemaErr("eligibility.schema_version", e.SchemaVersion, policy.EligibilitySchemaVersion)
		}
		if e.Provider != r.Provider {
			return invalidf("eligibility.provider %q: the report is %s's", e.Provider, r.Provider)
		}
		switch e.State {
		case policy.EligibilityEligible, policy.EligibilityAllowanceUnavailable, policy.EligibilityPolicyBlocked, policy.EligibilityUnknown:
		default:
			return invalidf("eligibility.state %q: want eligible, allowance_unavailable, policy_blocked or unknown", e.State)
		}
		for i, reason := range e.Reasons {
			if !slices.Contains(eligibilityReasons, reason) {
				return invalidf("eligibility.reasons[%d] %q: want one of %v", i, reason, eligibilityReasons)
			}
			if slices.Contains(e.Reasons[:i], reason) {
				return invalidf("eligibility.reasons[%d] %q is repeated", i, reason)
			}
		}
		if e.ObservedAt.IsZero() {
			return invalidf("eligibility.observed_at is required")
		}
	}
	if x := r.LearnedExhaustion; x != nil {
		if x.At.IsZero() || x.Until.IsZero() || x.Until.Before(x.At) {
			return invalidf("learned_exhaustion: want at and until, until not before at")
		}
	}
	return nil
}

// capacitySchemaErr is a schema_version this build does not read; it
// matches ErrSchemaVersion and ErrInvalid.
func capacitySchemaErr(field string, got, want int) error {
	return fmt.Errorf("%w (%w): %s %d (this build reads %d)", ErrSchemaVersion, ErrInvalid, field, got, want)
}

// encodeCapacityReport validates r and returns its stored JSON (times in
// UTC), at most MaxMessageBytes. Every refusal matches ErrInvalid.
func encodeCapacityReport(r policy.CapacityReport) ([]byte, error) {
	if err := validateCapacityReport(r); err != nil {
		if !errors.Is(err, ErrInvalid) {
			err = fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return nil, fmt.Errorf("capacity report of %s: %w", r.Provider, err)
	}
	return encodeMessage("capacity report of "+string(r.Provider), canonicalCapacityReport(r))
}

// canonicalCapacityReport is a deep copy of r with every time in UTC, the
// form that is stored and digested, so the same instant written from any
// zone reads back and hashes the same.
func canonicalCapacityReport(r policy.CapacityReport) policy.CapacityReport {
	c := r
	c.Snapshot.AcquiredAt = r.Snapshot.AcquiredAt.UTC()
	if r.Snapshot.SignedIn != nil {
		v := *r.Snapshot.SignedIn
		c.Snapshot.SignedIn = &v
	}
	c.Snapshot.Windows = nil
	for _, w := range r.Snapshot.Windows {
		cw := policy.CapacityWindow{Name: w.Name}
		if w.UsedPercent != nil {
			v := *w.UsedPercent
			cw.UsedPercent = &v
		}
		if w.WindowMinutes != nil {
			v := *w.WindowMinutes
			cw.WindowMinutes = &v
		}
		if w.ResetsAt != nil {
			v := w.ResetsAt.UTC()
			cw.ResetsAt = &v
		}
		c.Snapshot.Windows = append(c.Snapshot.Windows, cw)
	}
	if e := r.Eligibility; e != nil {
		ce := *e
		ce.ObservedAt = e.ObservedAt.UTC()
		ce.Reasons = slices.Clone(e.Reasons)
		c.Eligibility = &ce
	}
	if x := r.LearnedExhaustion; x != nil {
		c.LearnedExhaustion = &policy.LearnedExhaustion{At: x.At.UTC(), Until: x.Until.UTC()}
	}
	return c
}

// decodeCapacityReport strictly decodes the value stored under key (a
// provider name): the size limit, exactly the report's keys, no null, no
// trailing data, every rule of validateCapacityReport, and a provider equal
// to the key. Errors are *DecodeError naming the key.
func decodeCapacityReport(key string, b []byte) (policy.CapacityReport, error) {
	what := "capacity report " + key
	if len(b) > MaxMessageBytes {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: &LimitError{What: what, Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}}
	}
	if err := noNull(b); err != nil {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: err}
	}
	var r policy.CapacityReport
	if err := strictUnmarshal(b, &r); err != nil {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: err}
	}
	if err := validateCapacityReport(r); err != nil {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: err}
	}
	if string(r.Provider) != key {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: invalidf("the report under key %s is %s's", key, r.Provider)}
	}
	return r, nil
}

// noNull refuses a JSON null anywhere: the capacity contracts omit an
// absent field, never write null.
func noNull(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not JSON: %v", err)
		}
		if tok == nil {
			return invalidf("null is not allowed (an absent field is omitted)")
		}
	}
}

// capacityReportDigest is Digest over the report's canonical JSON
// (encoding/json's output for policy.CapacityReport, times in UTC), the
// form policy.MarshalCapacityReport writes. Switch to
// policy.CapacityReportDigest at merge.
func capacityReportDigest(r policy.CapacityReport) (string, error) {
	b, err := json.Marshal(canonicalCapacityReport(r))
	if err != nil {
		return "", err
	}
	return Digest(b), nil
}

// newerReport reports whether r replaces old: only a strictly later
// acquisition does, so a slow worker never rolls the state back.
func newerReport(r, old policy.CapacityReport) bool {
	return r.Snapshot.AcquiredAt.After(old.Snapshot.AcquiredAt)
}

func isNoReport(err error) bool { return errors.Is(err, ErrNoCapacityReport) }
