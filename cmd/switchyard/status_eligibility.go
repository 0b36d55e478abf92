package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// statusEligibility is one provider's eligibility in status --run --json:
// the verdict the engine's gate would give a launch of that provider for
// this run now (its current capacity report, the run's own
// --allow-unknown-quota), the same verdict object usage --json prints and
// an exclude event records.
type statusEligibility struct {
	Provider   policy.Provider           `json:"provider"`
	Source     policy.QuotaSource        `json:"source"`
	Verdict    policy.EligibilityVerdict `json:"verdict"`
	AgeSeconds *int64                    `json:"ageSeconds,omitempty"`
}

// runStatusJSON is status --run --json: the run's status with every key it
// always had, the eligibility of the providers its lanes may launch, and
// the providers' caps.
type runStatusJSON struct {
	engine.RunStatus
	Eligibility []statusEligibility `json:"eligibility"`
	// Caps is every provider's deployment-wide concurrency cap and the
	// sessions running now (see withCaps).
	Caps []events.CapInfo `json:"caps"`
}

// runEligibility is the eligibility of every provider run's lanes may
// launch (their attempts' exhaustion groups, as the gate keys them), in
// canonical provider order.
func runEligibility(ctx context.Context, conn *engineConn, run string) ([]statusEligibility, error) {
	envs, err := conn.store().Load(ctx, run, events.RunLane)
	if err != nil {
		return nil, failf("load run %s from %s: %v", run, conn.describe(), err)
	}
	var created *events.RunCreated
	for _, env := range envs {
		if c, ok := env.Payload.(events.RunCreated); ok {
			created = &c
			break
		}
	}
	if created == nil {
		return nil, failf("run %s in %s has no run-created event; `switchyard history --run %s` shows what it has", run, conn.describe(), run)
	}
	var groups []policy.Provider
	for _, l := range created.Lanes {
		for _, a := range l.Attempts {
			if a.Route == policy.RouteNative || a.ExhaustionGroup == "" {
				continue
			}
			if !slices.Contains(groups, a.ExhaustionGroup) {
				groups = append(groups, a.ExhaustionGroup)
			}
		}
	}
	order := providers.Names()
	slices.SortFunc(groups, func(a, b policy.Provider) int {
		return slices.Index(order, a) - slices.Index(order, b)
	})
	out := []statusEligibility{}
	now := time.Now()
	for _, p := range groups {
		rep, err := currentCapacity(ctx, conn, p)
		if err != nil {
			return nil, err
		}
		u := providerUsageOf(p, rep, now)
		if slices.Contains(created.Options.AllowUnknownQuota, p) {
			u.Verdict = policy.EvaluateEligibility(policy.EligibilityInput{
				Provider: p, Source: u.Source, Report: rep, Now: now, MaxAge: capacityMaxAge, AllowUnknown: true,
			})
		}
		out = append(out, statusEligibility{Provider: p, Source: u.Source, Verdict: u.Verdict, AgeSeconds: u.AgeSeconds})
	}
	return out, nil
}

// currentCapacity is p's current capacity report, nil when there is none.
func currentCapacity(ctx context.Context, conn *engineConn, p policy.Provider) (*policy.CapacityReport, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := conn.capacity().Get(rctx, p)
	switch {
	case errors.Is(err, events.ErrNoCapacityReport):
		return nil, nil
	case err != nil:
		return nil, failf("read the capacity report of %s from %s: %v", p, conn.describe(), err)
	}
	return &r, nil
}

// eligibilityLine renders a run's eligibility for the text status:
// "eligibility now: codex excluded (execution_policy_blocked), grok eligible".
func eligibilityLine(el []statusEligibility) string {
	if len(el) == 0 {
		return ""
	}
	parts := make([]string, len(el))
	for i, e := range el {
		switch v := e.Verdict; {
		case v.Eligible && v.Overridden:
			parts[i] = fmt.Sprintf("%s eligible by --allow-unknown-quota (%s)", e.Provider, v.Code)
		case v.Eligible:
			parts[i] = fmt.Sprintf("%s eligible", e.Provider)
		default:
			parts[i] = fmt.Sprintf("%s excluded (%s)", e.Provider, v.Code)
		}
	}
	return "eligibility now: " + strings.Join(parts, ", ") + " (switchyard usage shows why)"
}
