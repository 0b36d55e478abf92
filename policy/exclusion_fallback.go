package policy

// The sheet's "# fallback" decides how a lane moves past an attempt the
// eligibility gate excluded before launch (docs/decisions.md, "Exclusions
// and the sheet's fallback"): each exclusion code corresponds to one
// fallback outcome class, and the lane moves on only when the lane's
// fallback lists that class. Otherwise the lane stops with the exclusion
// as its reason (StopExcluded).

// StopExcluded is the stop reason of a lane whose attempt the eligibility
// gate excluded when the lane's fallback does not move on from the
// exclusion's outcome class. The policy CLI never emits it: only the
// engine's gate excludes.
const StopExcluded StopReason = "excluded"

// OutcomeClass is the fallback outcome class an exclusion corresponds to:
// usage-exhausted for proven exhaustion (a window at 100% or a learned
// exhaustion, an included allowance exhausted or unavailable), and
// route-unavailable for every other code, which like a failed preflight
// finds the route unusable before anything starts (not signed in, no
// trustworthy quota evidence, eligibility policy-blocked or unverified, an
// unhealthy provider, unverified containment). An unknown code has no
// class: "" is in no fallback, so it never moves a lane on.
func (c ExclusionCode) OutcomeClass() Outcome {
	switch c {
	case ExcludeQuotaExhausted, ExcludeAllowanceUnavailable:
		return OutcomeUsageExhausted
	case ExcludeQuotaUnknown, ExcludeNotSignedIn, ExcludePolicyBlocked, ExcludeUnverified,
		ExcludeProviderUnhealthy, ExcludeContainmentUnverified:
		return OutcomeRouteUnavailable
	}
	return ""
}

// ExclusionRule says which rule moved a lane past an excluded attempt.
type ExclusionRule string

// Exclusion rules. An exclude event recorded before the rule existed
// carries none (""), and its lane moved on: ExclusionRuleLegacy.
const (
	// ExclusionMovesOn: the lane's fallback lists the exclusion's outcome
	// class; the attempt is skipped like an exhausted group and the lane
	// goes to its next attempt.
	ExclusionMovesOn ExclusionRule = "fallback-moves-on"
	// ExclusionStops: the lane's fallback does not list the exclusion's
	// outcome class; the lane stops with reason StopExcluded.
	ExclusionStops ExclusionRule = "fallback-stops"
	// ExclusionRuleLegacy is the rule of an exclusion recorded before the
	// sheet's fallback applied to exclusions: it moved the lane on.
	ExclusionRuleLegacy ExclusionRule = ""
)

// ExclusionRules lists the rules a new exclusion records.
var ExclusionRules = []ExclusionRule{ExclusionMovesOn, ExclusionStops}

// Valid reports whether r is one of ExclusionRules or the legacy rule.
func (r ExclusionRule) Valid() bool { return r == ExclusionRuleLegacy || inList(ExclusionRules, r) }

// MovesOn reports whether a lane moves past an exclusion under r.
func (r ExclusionRule) MovesOn() bool { return r != ExclusionStops }

// ExclusionRuleOf is the rule a lane with fallback f applies to an
// exclusion with code c.
func ExclusionRuleOf(f FallbackPolicy, c ExclusionCode) ExclusionRule {
	if o := c.OutcomeClass(); o != "" && f.Allows(o) {
		return ExclusionMovesOn
	}
	return ExclusionStops
}
