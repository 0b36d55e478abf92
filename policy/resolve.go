package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Resolve turns one role of a frozen sheet into lane policies for a parent.
// A role absent from a legacy sheet returns ErrUnconfigured; absent from a
// policy-enabled sheet, it is a *PolicyError, so defaults cannot bypass
// saved permissions. Versioned Claude pins are normalized to their family
// alias (the seed's read-time rule); the sheet itself is not rewritten.
func Resolve(s *Sheet, role string, parent Parent, opt Options) (*RolePolicy, error) {
	row, err := s.findRole(role, opt)
	if err != nil {
		return nil, err
	}
	if row == nil {
		if s.PolicyEnabled() {
			return nil, Policyf("policy-enabled sheet has no role %q; repair it through setup before dispatch", role)
		}
		return nil, ErrUnconfigured
	}
	rp := &RolePolicy{Role: role, Header: row.Header, Lanes: make([]LanePolicy, 0, len(row.Seats))}
	var issues []string
	for si, seat := range row.Seats {
		lane, errs := s.resolveSeat(row, si, seat, parent, opt)
		issues = append(issues, errs...)
		rp.Lanes = append(rp.Lanes, lane)
	}
	if len(issues) > 0 {
		return nil, &PolicyError{Issues: issues}
	}
	return rp, nil
}

func (s *Sheet) resolveSeat(row *Row, si int, seat Seat, parent Parent, opt Options) (LanePolicy, []string) {
	lane := LanePolicy{
		ID:       row.Header + "#" + strconv.Itoa(si+1),
		Attempts: make([]AttemptPolicy, 0, len(seat.Attempts)),
		Fallback: DefaultFallback(),
	}
	if s.Continuation != nil {
		c := *s.Continuation
		lane.Continuation = &c
	}
	if s.Fallback != nil {
		lane.Fallback = *s.Fallback
	}
	var issues []string
	for ai, raw := range seat.Attempts {
		a := NormalizeAttempt(raw)
		ap := AttemptPolicy{Descriptor: a.String(), Attempt: a, Route: RouteExternal}
		if a.Kind == KindAlias {
			ap.ExhaustionGroup, ap.Route = Provider(parent), RouteNative
		} else {
			ap.ExhaustionGroup = a.Provider
			if string(a.Provider) == string(parent) &&
				(parent == ParentCodex || opt.nativeCovers(a.Model, a.Effort)) {
				ap.Route = RouteNative
			}
		}
		// The latest earlier attempt of the same account, found among the
		// few already resolved rather than kept in a map for each seat.
		for j := ai - 1; j >= 0; j-- {
			if lane.Attempts[j].ExhaustionGroup == ap.ExhaustionGroup {
				issues = append(issues, fmt.Sprintf("line %d: %s seat %d: %s and %s: two attempts resolve to the %s account", row.Line, row.Header, si+1, seat.Attempts[j], raw, ap.ExhaustionGroup))
				break
			}
		}
		if fact, ok := s.AccessFor(ap.ExhaustionGroup); ok {
			ap.Funding, ap.APISpend = fact.Funding, fact.APISpend
			ap.Authorization = authorize(fact)
		} else if s.PolicyEnabled() {
			issues = append(issues, fmt.Sprintf("line %d: %s seat %d: no access fact for provider %s; %s needs confirmed funding (add a # access: line through setup)", row.Line, row.Header, si+1, ap.ExhaustionGroup, raw))
		} else {
			ap.Funding, ap.APISpend = FundingUnset, APISpendUnset
			ap.Authorization = Authorization{State: "allowed"}
		}
		lane.Attempts = append(lane.Attempts, ap)
	}
	return lane, issues
}

// findRole finds the sheet row for a --role value: the row with that
// header, else the one row present in the sheet that lists it as a leaf
// role. A leaf shared by two present rows (synthesizer) is ambiguous.
func (s *Sheet) findRole(role string, opt Options) (*Row, error) {
	var hits []*Row
	for i := range s.Rows {
		row := &s.Rows[i]
		if row.Header == role {
			return row, nil
		}
		if inList(opt.Catalog[row.Catalog].Leaves, role) {
			hits = append(hits, row)
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
		return hits[0], nil
	}
	headers := make([]string, len(hits))
	for i, h := range hits {
		headers[i] = h.Header
	}
	return nil, Policyf("role %q is ambiguous; name its row header: %s", role, strings.Join(headers, " | "))
}

// authorize applies the access-fact authorization rules. A blocked reason
// is the reference helper's fixed sentence for its cause.
func authorize(f AccessFact) Authorization {
	switch {
	case f.Funding == FundingUnknown:
		return Authorization{State: "blocked", Reason: fmt.Sprintf("provider %s funding is unknown; unknown funding is not autoauthorized", f.Provider)}
	case f.Provenance != "user":
		return Authorization{State: "blocked", Reason: fmt.Sprintf("provider %s access is provider-observed; funding and API spending require operator confirmation", f.Provider)}
	case f.Funding == FundingMetered && f.APISpend != APISpendApproved:
		return Authorization{State: "blocked", Reason: fmt.Sprintf(`provider %s funding is metered; metered routes require apiSpend "approved"`, f.Provider)}
	}
	return Authorization{State: "allowed"}
}

// ValidateSheet checks a complete candidate sheet for setup: at least one
// access fact, every catalog row present with its minimum seats, and every
// attempt resolved and authorized for the parent. It returns the number of
// rows, or a *PolicyError listing every issue.
func ValidateSheet(s *Sheet, parent Parent, opt Options) (int, error) {
	var issues []string
	if len(s.Access) == 0 {
		issues = append(issues, "setup requires access facts for every configured provider")
	}
	for ci, cat := range opt.Catalog {
		var row *Row
		for i := range s.Rows {
			if s.Rows[i].Catalog == ci {
				row = &s.Rows[i]
			}
		}
		if row == nil {
			issues = append(issues, fmt.Sprintf("missing role row %q", cat.Header))
			continue
		}
		if len(row.Seats) < cat.MinSeats {
			issues = append(issues, fmt.Sprintf("line %d: %s needs at least %d seats, got %d", row.Line, cat.Header, cat.MinSeats, len(row.Seats)))
		}
		if !cat.Panel && len(row.Seats) != 1 {
			issues = append(issues, fmt.Sprintf("line %d: %s is not a panel row; it takes exactly one seat, got %d", row.Line, cat.Header, len(row.Seats)))
		}
		rp, err := Resolve(s, cat.Header, parent, opt)
		var pe *PolicyError
		switch {
		case errors.As(err, &pe):
			issues = append(issues, pe.Issues...)
			continue
		case err != nil:
			issues = append(issues, fmt.Sprintf("line %d: %s: %v", row.Line, cat.Header, err))
			continue
		}
		for _, lane := range rp.Lanes {
			for _, ap := range lane.Attempts {
				if !ap.Authorization.Allowed() {
					issues = append(issues, fmt.Sprintf("%s: %s is not authorized: %s", lane.ID, ap.Descriptor, ap.Authorization.Reason))
				}
			}
		}
	}
	if len(issues) > 0 {
		return 0, &PolicyError{Issues: issues}
	}
	return len(s.Rows), nil
}
