package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// eligibilityPoll is how often the gate looks for the fresh report it
// asked a provider's workers for.
const eligibilityPoll = 200 * time.Millisecond

// gated reports whether dec passes the eligibility gate before it is
// acted on: a launch of a provider route. A native attempt runs on the
// parent's own model, outside any provider account this deployment can
// measure. A continuation is not gated either: it resumes an attempt that
// was already authorized and started (its interrupted execution is the one
// the parent recovered), so excluding it now would strand that work rather
// than avoid a launch.
func gated(dec policy.Decision) bool {
	return dec.Kind == policy.DecideLaunch && dec.Attempt != nil && dec.AttemptIndex != nil &&
		dec.Attempt.Route != policy.RouteNative
}

// gate is the eligibility gate before lane i launches rec's attempt. It
// reads the provider's current capacity report (asking its workers for a
// fresh one and waiting up to Config.EligibilityWait when there is none or
// it is stale) and evaluates policy.EvaluateEligibility at the engine's
// clock. It returns the exclusion to record when the attempt may not
// launch, or nil; and, when the attempt launches only on the run's
// explicit unknown-quota override, the audit that records the override.
func (d *driver) gate(ctx context.Context, i int, rec events.Decided) (*events.Exclude, *events.Audit, error) {
	dec := rec.Decision
	ap := *dec.Attempt
	group := ap.ExhaustionGroup
	spec, err := providers.Lookup(ap.Attempt.Provider)
	if err != nil {
		return nil, nil, fmt.Errorf("lane %d: eligibility of attempt %d (%s): %w", i, *dec.AttemptIndex, ap.Descriptor, err)
	}
	src := spec.QuotaSource
	// A group the run found provider_unhealthy (a fold of its finishes,
	// so replay recomputes it) is excluded whatever its capacity says:
	// no report is read or waited for.
	unhealthy := slices.Contains(d.r.Unhealthy, group)
	// Containment is required before routing (issue 24): an attempt
	// whose mode lacks its verified class is excluded here, before any
	// capacity report is read, unless the run accepted it.
	cont := d.e.cfg.Containment(spec, d.r.Created.Access)
	allowOpen := slices.Contains(d.r.Created.Options.AllowUnverifiedContainment, ap.RunsOn())
	excludedByContainment := !unhealthy && !cont.Verified() && !allowOpen
	var report *policy.CapacityReport
	if !unhealthy && !excludedByContainment {
		if report, err = d.capacityReport(ctx, group, src); err != nil {
			return nil, nil, fmt.Errorf("lane %d: capacity report of %s: %w", i, group, err)
		}
	}
	// Wall clock only (Round(0) drops the monotonic reading), as replay
	// evaluates the recorded time.
	at := d.e.cfg.Now().Round(0)
	allow := slices.Contains(d.r.Created.Options.AllowUnknownQuota, group)
	v := policy.EvaluateEligibility(policy.EligibilityInput{
		Provider: group, Source: src, Report: report, Now: at, MaxAge: d.e.cfg.CapacityMaxAge, AllowUnknown: allow,
		Unhealthy: unhealthy, SignedOut: slices.Contains(d.r.SignedOut, group), Containment: &cont, AllowUnverifiedContainment: allowOpen,
	})
	if v.Eligible {
		if !v.Overridden {
			return nil, nil, nil
		}
		detail := fmt.Sprintf("attempt %d %s launched on the run's explicit unknown-quota override for %s (%s: %s)",
			*dec.AttemptIndex, ap.Descriptor, group, v.Code, v.Detail)
		d.log.Warn("eligibility overridden", "lane", i, "attempt", *dec.AttemptIndex, "descriptor", ap.Descriptor, "code", v.Code, "detail", v.Detail)
		return nil, &events.Audit{Reason: events.AuditUnknownQuotaOverride, Detail: detail}, nil
	}
	digest, err := CapacityReportDigest(report)
	if err != nil {
		return nil, nil, fmt.Errorf("lane %d: digest of the capacity report of %s: %w", i, group, err)
	}
	d.log.Info("excluded before launch", "lane", i, "attempt", *dec.AttemptIndex, "descriptor", ap.Descriptor, "code", v.Code, "detail", v.Detail)
	return &events.Exclude{
		AttemptIndex: *dec.AttemptIndex, Descriptor: ap.Descriptor, Provider: group, Source: src, Verdict: v,
		Report: report, ReportDigest: digest, EvaluatedAt: at, MaxAgeMs: d.e.cfg.CapacityMaxAge.Milliseconds(), InputDigest: rec.InputDigest, SheetDigest: rec.SheetDigest,
		Containment: &cont, Rule: policy.ExclusionRuleOf(d.r.Lanes[i].Policy.Fallback, v.Code),
	}, nil, nil
}

// capacityReport returns provider's current capacity report, or nil when
// none could be had. For a provider with a live source whose report is
// missing or stale, it asks the provider's workers for a fresh one and
// polls until one acquired since (and fresh) arrives or
// Config.EligibilityWait passes; then it returns the latest it has, which
// EvaluateEligibility judges (no answer is UNKNOWN, never "go ahead"). A
// provider that just went unanswered in this session is not waited for
// again within EligibilityWait (the other lanes of a panel). An
// UNSUPPORTED provider has nothing to acquire: its report, when one
// exists, only carries a learned exhaustion.
//
// A fresh report read earlier in the same settle pass is used again while
// it is still fresh: the lanes one pass launches are decided at the same
// moment, so they are gated on the same read (each exclusion records the
// report it was evaluated on, which is what replay checks). A missing or
// stale report is never reused: it is read again, and waited for.
func (d *driver) capacityReport(ctx context.Context, provider policy.Provider, src policy.QuotaSource) (*policy.CapacityReport, error) {
	if r := d.passReports[provider]; d.fresh(r) {
		return r, nil
	}
	cur, err := d.currentReport(ctx, provider)
	if err == nil && d.fresh(cur) {
		if d.passReports == nil {
			d.passReports = map[policy.Provider]*policy.CapacityReport{}
		}
		d.passReports[provider] = cur
	}
	if err != nil || src == policy.QuotaUnsupported || d.fresh(cur) {
		return cur, err
	}
	if at, ok := d.unanswered[provider]; ok && d.e.cfg.Now().Sub(at) < d.e.cfg.EligibilityWait {
		// This session just waited for the same provider in vain (another
		// lane of a panel): a second wait would only delay the run.
		return cur, nil
	}
	if err := d.e.cfg.Capacity.RequestRefresh(ctx, provider); err != nil {
		// Nobody could be asked; a periodic acquisition may still land
		// within the wait, so look for it all the same.
		d.log.Warn("capacity refresh request failed", "provider", provider, "err", err)
	}
	d.log.Info("waiting for a capacity report", "provider", provider, "wait", d.e.cfg.EligibilityWait)
	deadline := time.NewTimer(d.e.cfg.EligibilityWait)
	defer deadline.Stop()
	tick := time.NewTicker(min(eligibilityPoll, d.e.cfg.EligibilityWait))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			d.log.Warn("no fresh capacity report within the wait", "provider", provider, "wait", d.e.cfg.EligibilityWait)
			if d.unanswered == nil {
				d.unanswered = map[policy.Provider]time.Time{}
			}
			d.unanswered[provider] = d.e.cfg.Now()
			return cur, nil
		case <-tick.C:
		}
		r, err := d.currentReport(ctx, provider)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		newer := cur == nil || r.Snapshot.AcquiredAt.After(cur.Snapshot.AcquiredAt)
		if newer {
			cur = r
			if d.fresh(r) {
				return r, nil
			}
		}
	}
}

// currentReport is Capacity.Get, with no report as nil.
func (d *driver) currentReport(ctx context.Context, provider policy.Provider) (*policy.CapacityReport, error) {
	r, err := d.e.cfg.Capacity.Get(ctx, provider)
	if errors.Is(err, events.ErrNoCapacityReport) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// fresh reports whether r exists and is no older than CapacityMaxAge by the
// engine's clock.
func (d *driver) fresh(r *policy.CapacityReport) bool {
	return r != nil && d.e.cfg.Now().Sub(r.Snapshot.AcquiredAt) <= d.e.cfg.CapacityMaxAge
}

// CapacityReportDigest is the digest an exclusion records of the capacity
// report its verdict was computed from (policy.CapacityReportDigest: over
// the report's canonical JSON); "" for no report. Replay recomputes it
// from the recorded report.
func CapacityReportDigest(r *policy.CapacityReport) (string, error) {
	if r == nil {
		return "", nil
	}
	return policy.CapacityReportDigest(*r)
}

// exclusionText says in one line why an attempt was excluded: its
// descriptor, then exclusionWhy.
func exclusionText(p events.Exclude) string {
	return p.Descriptor + " " + exclusionWhy(p)
}

// exclusionWhy is an exclusion's code, the verdict's detail and the known
// end of an exhaustion.
func exclusionWhy(p events.Exclude) string {
	s := string(p.Verdict.Code)
	// policy's detail may end by naming the code again; say it once.
	if d := strings.TrimSuffix(p.Verdict.Detail, " ("+string(p.Verdict.Code)+")"); d != "" {
		s += ": " + d
	}
	if p.Verdict.Until != nil {
		s += " (until " + p.Verdict.Until.UTC().Format(time.RFC3339) + ")"
	}
	return s
}

// exclusionRuleText says which rule an exclusion applied: whether the
// lane's fallback moves on from the exclusion's outcome class.
func exclusionRuleText(p events.Exclude, f policy.FallbackPolicy) string {
	class := p.Verdict.Code.OutcomeClass()
	switch p.Rule {
	case policy.ExclusionMovesOn:
		return fmt.Sprintf("%s counts as %s, which the lane's fallback %s moves on from", p.Verdict.Code, class, fallbackText(f))
	case policy.ExclusionStops:
		return fmt.Sprintf("%s counts as %s, which the lane's fallback %s does not move on from: the lane stops", p.Verdict.Code, class, fallbackText(f))
	}
	return "recorded before the sheet's fallback applied to exclusions: the lane moved on"
}

// fallbackText is a fallback policy as the sheet writes it.
func fallbackText(f policy.FallbackPolicy) string {
	on := make([]string, len(f.On))
	for k, o := range f.On {
		on[k] = `"` + string(o) + `"`
	}
	return `{"on":[` + strings.Join(on, ",") + `]}`
}

// HostContainment is Config.Containment's default: the containment an
// attempt of spec in mode gets on this host (runner.ContainmentOf over the
// process's sandbox self-test).
func HostContainment(spec *providers.Spec, mode policy.Access) policy.ContainmentEvidence {
	class, by, why, fix := runner.ContainmentOf(sandbox.Verify(""), spec, mode)
	return policy.ContainmentEvidence{Mode: mode, Class: string(class), By: by, Why: why, Fix: fix}
}
