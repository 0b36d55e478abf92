package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// withCapacity uses c as the deployment's capacity store instead of the
// seeded one.
func withCapacity(c events.Capacity) option {
	return func(h *harness, cfg *engine.Config) { h.capacity, cfg.Capacity = c, c }
}

// put stores r as its provider's current report.
func (h *harness) put(r policy.CapacityReport) {
	h.t.Helper()
	require.NoError(h.t, h.capacity.Put(context.Background(), r))
}

// submitAllowing submits role on sheet with the run's unknown-quota
// overrides.
func (h *harness) submitAllowing(sheetBytes []byte, role string, allow ...policy.Provider) string {
	h.t.Helper()
	id, err := h.eng.Submit(context.Background(), engine.RunRequest{
		Sheet: sheetBytes, Role: role, Parent: policy.ParentClaude, Mode: policy.ReadOnly,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: h.repo, Timeout: time.Minute,
		AllowUnknownQuota: allow,
	})
	require.NoError(h.t, err)
	return id
}

// codexEligibility is a fresh measured codex report whose eligibility is
// state with reasons.
func codexEligibility(state policy.EligibilityState, reasons ...policy.EligibilityReason) policy.CapacityReport {
	r := eligibleReport(policy.Codex, time.Now())
	r.Eligibility.State, r.Eligibility.Reasons = state, reasons
	return r
}

// unknownReport is a fresh report of p whose source answered nothing
// usable (reason).
func unknownReport(p policy.Provider, reason policy.CapacityReason) policy.CapacityReport {
	r := eligibleReport(p, time.Now())
	r.Snapshot.State, r.Snapshot.Reason, r.Snapshot.Windows, r.Eligibility = policy.CapacityUnknown, reason, nil, nil
	return r
}

// grokExhausted is grok's report (UNSUPPORTED: no metric) carrying a usage
// exhaustion learned at at and lasting until until.
func grokExhausted(at, until time.Time) policy.CapacityReport {
	return policy.CapacityReport{
		SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Grok,
		Snapshot: policy.CapacitySnapshot{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Grok,
			Source: policy.QuotaUnsupported, State: policy.CapacityUnsupported, Reason: "no_source", AcquiredAt: time.Now()},
		LearnedExhaustion: &policy.LearnedExhaustion{At: at, Until: until},
	}
}

// grokAccess authorizes grok for the test sheets.
const grokAccess = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`

// excludes returns run's exclude events.
func excludes(envs []events.Envelope) []events.Exclude {
	var out []events.Exclude
	for _, e := range ofType(envs, events.TypeExclude) {
		out = append(out, e.Payload.(events.Exclude))
	}
	return out
}

// finishWith runs job with scenario and reports its claim and end.
func (h *harness) finishWith(job events.Job, scenario string) {
	h.t.Helper()
	h.execute(job, scenario)
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportFinished)
}

// TestEligibilityPolicyBlockedCodexIsExcluded: codex's account has
// purchased credits present (eligibility policy_blocked), so the gate
// excludes the lane's codex attempt with execution_policy_blocked before
// launch, the lane's next attempt launches, codex never gets a job, and
// the exclusion records the report it was computed from (with its
// digest), which replay recomputes.
func TestEligibilityPolicyBlockedCodexIsExcluded(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{memory, jetstream} {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			policyBlockedCodexIsExcluded(t, b)
		})
	}
}

func policyBlockedCodexIsExcluded(t *testing.T, b backend) {
	h := newHarness(t, b)
	blocked := codexEligibility(policy.EligibilityPolicyBlocked, "credits_present")
	h.put(blocked)
	h.run()
	run := h.submit(sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	cursor := h.nextJob(events.JobSubject("cursor"))
	require.Equal(t, 1, cursor.AttemptIndex)
	h.finishWith(cursor, "success")
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("codex"))

	ex := excludes(envs)
	require.Len(t, ex, 1, "one exclusion:\n%s", dump(envs))
	x := ex[0]
	require.Equal(t, 0, x.AttemptIndex)
	require.Equal(t, "codex:gpt-5.6-sol@high", x.Descriptor)
	require.Equal(t, policy.Codex, x.Provider)
	require.Equal(t, policy.QuotaLiveRPC, x.Source)
	require.False(t, x.Verdict.Eligible)
	require.Equal(t, policy.ExcludePolicyBlocked, x.Verdict.Code)
	require.NotNil(t, x.Report)
	require.Equal(t, jsonOf(t, blocked), jsonOf(t, *x.Report), "the exclusion records the report it was computed from")
	digest, err := engine.CapacityReportDigest(&blocked)
	require.NoError(t, err)
	require.Equal(t, digest, x.ReportDigest)
	// The exclusion comes before the launch it diverted, on the lane.
	lane := types(onLane(envs, 0))
	require.Equal(t, []events.Type{events.TypeExclude, events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeComplete}, lane)

	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	l := rep.Lanes[0]
	require.Equal(t, machines.StateComplete, l.State)
	require.Equal(t, "cursor:composer-2.5@default", l.Success)
	require.Len(t, l.Attempts, 2)
	require.True(t, l.Attempts[0].Excluded)
	require.True(t, l.Attempts[0].Skipped)
	require.Equal(t, string(policy.ExcludePolicyBlocked), l.Attempts[0].Code)
	require.True(t, strings.HasPrefix(l.Attempts[0].Cause, "excluded before launch: execution_policy_blocked"), l.Attempts[0].Cause)
	require.Contains(t, rep.Text(), "    - codex:gpt-5.6-sol@high: excluded before launch: execution_policy_blocked")
	require.Equal(t, []policy.Provider{policy.Cursor}, rep.Diversity.Attempted, "codex never ran")
	require.Contains(t, rep.Text(), "execution_policy_blocked")
	var notice string
	_, err = h.eng.Wait(context.Background(), run, func(ch engine.LaneChange) {
		if ch.Event == events.TypeLaunch {
			notice = ch.Notice
		}
	})
	require.NoError(t, err)
	require.Contains(t, notice, "excluded before launch: codex:gpt-5.6-sol@high execution_policy_blocked")
	require.True(t, strings.HasSuffix(notice, "launches cursor:composer-2.5@default"), notice)

	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Len(t, st.Lanes[0].Exclusions, 1)
	require.Equal(t, policy.ExcludePolicyBlocked, st.Lanes[0].Exclusions[0].Code)
	require.Equal(t, digest, st.Lanes[0].Exclusions[0].ReportDigest)

	res := h.verifyReplay(run)
	require.Equal(t, 1, res.Exclusions)
}

// TestEligibilityNoAnswerIsQuotaUnknown: with no codex report at all, the
// gate asks codex's workers for one and waits EligibilityWait; nobody
// answers, so codex is excluded with quota_unknown (never "go ahead") and
// the lane's next attempt launches.
func TestEligibilityNoAnswerIsQuotaUnknown(t *testing.T) {
	t.Parallel()
	c := events.NewMemoryCapacity()
	var mu sync.Mutex
	var asked []policy.Provider
	stop, err := c.SubscribeRefresh(context.Background(), []policy.Provider{policy.Codex, policy.Claude}, func(p policy.Provider) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, p)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	const wait = 400 * time.Millisecond
	h := newHarness(t, memory, withCapacity(c), withEligibilityWait(wait))
	h.run()
	start := time.Now()
	run := h.submit(sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	cursor := h.nextJob(events.JobSubject("cursor"))
	require.GreaterOrEqual(t, time.Since(start), wait, "the gate waited for an answer before excluding")
	h.finishWith(cursor, "success")
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("codex"))

	mu.Lock()
	require.Contains(t, asked, policy.Codex, "the gate asked codex's workers for a report")
	mu.Unlock()
	ex := excludes(envs)
	require.Len(t, ex, 1)
	require.Equal(t, policy.ExcludeQuotaUnknown, ex[0].Verdict.Code)
	require.Nil(t, ex[0].Report, "no report could be had")
	require.Empty(t, ex[0].ReportDigest)
	h.verifyReplay(run)
}

// TestEligibilityRefreshAnsweredWithinWait: a worker answers the gate's
// refresh request with an eligible report inside the wait, so codex
// launches with no exclusion.
func TestEligibilityRefreshAnsweredWithinWait(t *testing.T) {
	t.Parallel()
	c := events.NewMemoryCapacity()
	stop, err := c.SubscribeRefresh(context.Background(), []policy.Provider{policy.Codex}, func(p policy.Provider) {
		_ = c.Put(context.Background(), eligibleReport(p, time.Now()))
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	h := newHarness(t, memory, withCapacity(c), withEligibilityWait(waitTimeout))
	h.run()
	run, job := h.submitOneLane()
	require.Equal(t, 0, job.AttemptIndex)
	h.finishWith(job, "success")
	_, envs := h.waitFinal(run)
	require.Empty(t, excludes(envs))
	h.verifyReplay(run)
}

// TestEligibilityAllowUnknownQuotaProceeds: the run explicitly accepts
// codex's UNKNOWN quota, so codex launches despite having no report; the
// override is logged, recorded on the lane before the launch, and the run
// report says the attempt ran on it.
func TestEligibilityAllowUnknownQuotaProceeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory, withCapacity(events.NewMemoryCapacity()), withEligibilityWait(200*time.Millisecond))
	h.run()
	run := h.submitAllowing(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.Codex)
	job := h.nextJob(events.JobSubject("codex"))
	require.Equal(t, 0, job.AttemptIndex)
	h.finishWith(job, "success")
	r, envs := h.waitFinal(run)
	require.Equal(t, []policy.Provider{policy.Codex}, r.Created.Options.AllowUnknownQuota)
	require.Empty(t, excludes(envs))
	lane := onLane(envs, 0)
	require.Equal(t, events.TypeAudit, lane[0].Type)
	a := lane[0].Payload.(events.Audit)
	require.Equal(t, events.AuditUnknownQuotaOverride, a.Reason)
	require.Contains(t, a.Detail, "quota_unknown")
	require.Equal(t, events.TypeLaunch, lane[1].Type)

	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, "codex:gpt-5.6-sol@high", rep.Lanes[0].Success)
	require.Contains(t, rep.Lanes[0].Attempts[0].Override, "unknown-quota override")
	require.Contains(t, rep.Text(), "WARNING: ran on an explicit unknown-quota override")
	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Empty(t, st.Audits, "an override is no delivery")
	h.verifyReplay(run)

	_, err = h.eng.Submit(context.Background(), engine.RunRequest{Sheet: sheet("", "bug-fix: codex:gpt-5.6-sol@high"), Role: "bug-fix",
		Parent: policy.ParentClaude, Prompt: []byte("x\n"), Cwd: h.repo, AllowUnknownQuota: []policy.Provider{"codx"}})
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, "codx")
}

// TestEligibilityLearnedExhaustionOfUnsupportedProvider: grok exposes no
// quota metric (UNSUPPORTED), yet an exhaustion a worker learned in an
// earlier run excludes it until the learned reset; once that has passed,
// grok launches again.
func TestEligibilityLearnedExhaustionOfUnsupportedProvider(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	now := time.Now()
	until := now.Add(time.Hour).Truncate(time.Second)
	h.put(grokExhausted(now.Add(-time.Minute), until))
	h.run()
	s := sheet(grokAccess, "bug-fix: grok:grok-4.7@xhigh -> cursor:composer-2.5@default")
	run := h.submit(s, "bug-fix", policy.ReadOnly)
	cursor := h.nextJob(events.JobSubject("cursor"))
	h.finishWith(cursor, "success")
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("grok"))
	ex := excludes(envs)
	require.Len(t, ex, 1)
	require.Equal(t, policy.ExcludeQuotaExhausted, ex[0].Verdict.Code)
	require.Equal(t, policy.QuotaUnsupported, ex[0].Source)
	require.NotNil(t, ex[0].Verdict.Until)
	require.True(t, until.Equal(*ex[0].Verdict.Until), "excluded until the learned reset")
	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, string(policy.ExcludeQuotaExhausted), rep.Lanes[0].Attempts[0].Code)
	require.NotNil(t, rep.Lanes[0].Attempts[0].Until)
	h.verifyReplay(run)

	// The reset has passed: a later run launches grok.
	h.put(grokExhausted(now.Add(-2*time.Hour), time.Now().Add(-time.Second)))
	run2 := h.submit(s, "bug-fix", policy.ReadOnly)
	grok := h.nextJob(events.JobSubject("grok"))
	require.Equal(t, run2, grok.Run)
	require.Equal(t, 0, grok.AttemptIndex)
}

// TestEligibilityEveryAttemptExcludedStopsNamingEach: codex is policy
// blocked (which the run's unknown-quota override for codex does not
// override) and claude's quota is unknown, so the lane stops
// chain-exhausted without launching anything, and its reason in the
// report, status, live changes and history names each exclusion.
func TestEligibilityEveryAttemptExcludedStopsNamingEach(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.put(codexEligibility(policy.EligibilityPolicyBlocked, "credits_present"))
	h.put(unknownReport(policy.Claude, "backend_error"))
	h.run()
	run := h.submitAllowing(sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> claude:sonnet@low"), "bug-fix", policy.Codex)
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("codex"))
	h.noJob(run, events.JobSubject("claude"))
	ex := excludes(envs)
	require.Len(t, ex, 2)
	require.Equal(t, policy.ExcludePolicyBlocked, ex[0].Verdict.Code)
	require.Equal(t, policy.ExcludeQuotaUnknown, ex[1].Verdict.Code)

	named := func(t *testing.T, reason string) {
		t.Helper()
		require.True(t, strings.HasPrefix(reason, string(policy.StopChainExhausted)), reason)
		require.Contains(t, reason, "codex:gpt-5.6-sol@high execution_policy_blocked")
		require.Contains(t, reason, "claude:sonnet@low quota_unknown")
	}
	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
	named(t, rep.Lanes[0].Reason)
	require.Len(t, rep.Lanes[0].Attempts, 2)
	for _, a := range rep.Lanes[0].Attempts {
		require.True(t, a.Excluded, "%+v", a)
		require.NotEmpty(t, a.Code)
	}
	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	named(t, st.Lanes[0].Reason)
	require.Len(t, st.Lanes[0].Exclusions, 2)
	var final engine.LaneChange
	_, err = h.eng.Wait(context.Background(), run, func(ch engine.LaneChange) {
		if ch.To.Final() {
			final = ch
		}
	})
	require.NoError(t, err)
	named(t, final.Reason)
	notes := engine.HistoryNotes(envs)
	stop := ofType(envs, events.TypeStop)
	require.Len(t, stop, 1)
	named(t, strings.TrimPrefix(notes[stop[0].Seq], "lane stopped: stop "))
	require.Contains(t, notes[ofType(envs, events.TypeExclude)[0].Seq], "execution_policy_blocked")
	h.verifyReplay(run)
}

// TestEligibilityReplayDetectsTamperedExclusion: an excluded lane's log
// replays verified; a copy whose exclusion records another code, or an
// evaluation time at which the recorded report was stale, is reported as
// a divergence of the verdict at that exclusion.
func TestEligibilityReplayDetectsTamperedExclusion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.put(codexEligibility(policy.EligibilityPolicyBlocked, "credits_present"))
	h.run()
	run := h.submit(sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	h.finishWith(h.nextJob(events.JobSubject("cursor")), "success")
	_, envs := h.waitFinal(run)
	res := h.verifyReplay(run)
	require.Equal(t, 1, res.Exclusions)

	at := -1
	for i, e := range envs {
		if e.Type == events.TypeExclude {
			at = i
		}
	}
	require.GreaterOrEqual(t, at, 0)
	for _, tc := range []struct {
		name  string
		alter func(events.Exclude) events.Exclude
	}{
		{"changed code", func(x events.Exclude) events.Exclude {
			x.Verdict.Code = policy.ExcludeAllowanceUnavailable
			return x
		}},
		{"evaluated a day later", func(x events.Exclude) events.Exclude {
			x.EvaluatedAt = x.EvaluatedAt.Add(24 * time.Hour)
			return x
		}},
		{"a maximum report age the report was already past", func(x events.Exclude) events.Exclude {
			x.MaxAgeMs = 1
			x.EvaluatedAt = x.Report.Snapshot.AcquiredAt.Add(time.Second)
			return x
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			altered := copyLog(t, envs, at, func(p events.Payload) events.Payload { return tc.alter(p.(events.Exclude)) })
			res, err := engine.Replay(context.Background(), altered, run, policy.DefaultOptions())
			require.NoError(t, err)
			require.False(t, res.Verified)
			require.Equal(t, envs[at].Seq, res.Divergence.Seq, "the altered exclusion is the first divergence")
			require.Equal(t, events.TypeExclude, res.Divergence.Type)
			require.Equal(t, engine.FieldVerdict, res.Divergence.Field)
			require.NotEqual(t, res.Divergence.Expected, res.Divergence.Actual)
		})
	}
}

// TestUnauthorizedStopKeepsItsReason: a lane whose attempt the saved
// policy does not authorize stops unauthorized, and the report, status,
// live changes and history all show "unauthorized: <authorization
// reason>", not the bare code.
func TestUnauthorizedStopKeepsItsReason(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	s := sheet(`# access: {"provider":"grok","funding":"unknown","capacity":"standard","apiSpend":"deny","provenance":"user"}`,
		"bug-fix: codex:gpt-5.6-sol@high -> grok:grok-4.7@xhigh")
	run := h.submit(s, "bug-fix", policy.ReadOnly)
	h.finishWith(h.nextJob(events.JobSubject("codex")), "usage-exhausted")
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("grok"))
	const want = "unauthorized: provider grok funding is unknown; unknown funding is not autoauthorized (attempt 1 grok:grok-4.7@xhigh)"

	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	l := rep.Lanes[0]
	require.Equal(t, machines.StateStopped, l.State)
	require.Equal(t, want, l.Reason)
	require.Len(t, l.Attempts, 2)
	blocked := l.Attempts[1]
	require.True(t, blocked.Skipped)
	require.Equal(t, engine.CodeUnauthorized, blocked.Code)
	require.Equal(t, "not launched: unauthorized: provider grok funding is unknown; unknown funding is not autoauthorized", blocked.Cause)
	require.Contains(t, rep.Text(), want)

	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, want, st.Lanes[0].Reason)
	var final engine.LaneChange
	_, err = h.eng.Wait(context.Background(), run, func(ch engine.LaneChange) {
		if ch.To.Final() {
			final = ch
		}
	})
	require.NoError(t, err)
	require.Equal(t, want, final.Reason)
	stop := ofType(envs, events.TypeStop)
	require.Len(t, stop, 1)
	require.Equal(t, "lane stopped: stop "+want, engine.HistoryNotes(envs)[stop[0].Seq])
	h.verifyReplay(run)
}

// countingCapacity counts the refresh requests made through it.
type countingCapacity struct {
	events.Capacity
	mu    sync.Mutex
	asked map[policy.Provider]int
}

func (c *countingCapacity) RequestRefresh(ctx context.Context, p policy.Provider) error {
	c.mu.Lock()
	c.asked[p]++
	c.mu.Unlock()
	return c.Capacity.RequestRefresh(ctx, p)
}

// TestEligibilityWaitsOncePerProvider: a panel whose two seats both start
// on codex, with no codex report and nobody answering, waits for codex's
// workers once, not once per lane; both lanes exclude codex with
// quota_unknown and launch their next attempt.
func TestEligibilityWaitsOncePerProvider(t *testing.T) {
	t.Parallel()
	c := &countingCapacity{Capacity: events.NewMemoryCapacity(), asked: map[policy.Provider]int{}}
	h := newHarness(t, memory, withCapacity(c), withEligibilityWait(300*time.Millisecond))
	h.run()
	run := h.submit(sheet(routeFallback, "arena runners: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default, codex:gpt-5.6-sol@max -> cursor:composer-2.5@default"),
		"arena runners", policy.ReadOnly)
	h.finishWith(h.nextJob(events.JobSubject("cursor")), "success")
	h.finishWith(h.nextJob(events.JobSubject("cursor")), "success")
	_, envs := h.waitFinal(run)
	ex := excludes(envs)
	require.Len(t, ex, 2)
	for _, x := range ex {
		require.Equal(t, policy.ExcludeQuotaUnknown, x.Verdict.Code)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, 1, c.asked[policy.Codex], "one wait for codex, not one per lane")
	h.verifyReplay(run)
}

// TestEligibilityStaleReportIsRefreshed: a codex report older than
// CapacityMaxAge is not trusted: the gate asks codex's workers again and
// launches on the fresh answer; with no answer the stale report is
// quota_unknown.
func TestEligibilityStaleReportIsRefreshed(t *testing.T) {
	t.Parallel()
	for _, answer := range []bool{true, false} {
		t.Run(map[bool]string{true: "answered", false: "unanswered"}[answer], func(t *testing.T) {
			t.Parallel()
			inner := events.NewMemoryCapacity()
			require.NoError(t, inner.Put(context.Background(), eligibleReport(policy.Codex, time.Now().Add(-time.Hour))))
			if answer {
				stop, err := inner.SubscribeRefresh(context.Background(), []policy.Provider{policy.Codex}, func(p policy.Provider) {
					_ = inner.Put(context.Background(), eligibleReport(p, time.Now()))
				})
				require.NoError(t, err)
				t.Cleanup(stop)
			}
			c := &countingCapacity{Capacity: inner, asked: map[policy.Provider]int{}}
			h := newHarness(t, memory, withCapacity(c), withEligibilityWait(map[bool]time.Duration{true: waitTimeout, false: 300 * time.Millisecond}[answer]))
			h.run()
			run := h.submit(sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
			subject := map[bool]string{true: "codex", false: "cursor"}[answer]
			h.finishWith(h.nextJob(events.JobSubject(subject)), "success")
			_, envs := h.waitFinal(run)
			c.mu.Lock()
			require.Equal(t, 1, c.asked[policy.Codex], "the stale report made the gate ask")
			c.mu.Unlock()
			if answer {
				require.Empty(t, excludes(envs))
			} else {
				ex := excludes(envs)
				require.Len(t, ex, 1)
				require.Equal(t, policy.ExcludeQuotaUnknown, ex[0].Verdict.Code)
				require.NotNil(t, ex[0].Report, "the stale report is recorded as what the verdict saw")
			}
			h.verifyReplay(run)
		})
	}
}

// gettingCapacity counts the capacity reads (Get) made through it.
type gettingCapacity struct {
	events.Capacity
	mu   sync.Mutex
	gets map[policy.Provider]int
}

func (c *gettingCapacity) Get(ctx context.Context, p policy.Provider) (policy.CapacityReport, error) {
	c.mu.Lock()
	c.gets[p]++
	c.mu.Unlock()
	return c.Capacity.Get(ctx, p)
}

func (c *gettingCapacity) count(p policy.Provider) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[p]
}

// TestEligibilityOneReadPerProviderPerPass: the lanes one settle pass
// launches together are gated on one read of each provider's fresh report
// (a panel of three codex seats reads codex's report once, not three
// times), and a later pass reads it again: a report that changed meanwhile
// (codex now policy_blocked) excludes the attempt a fallback decides then.
func TestEligibilityOneReadPerProviderPerPass(t *testing.T) {
	t.Parallel()
	c := &gettingCapacity{Capacity: seeded(t, events.NewMemoryCapacity()), gets: map[policy.Provider]int{}}
	h := newHarness(t, memory, withCapacity(c))
	h.run()
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high, codex:gpt-5.6-sol@max, codex:gpt-5.6-sol@high, cursor:composer-2.5@default -> codex:gpt-5.6-sol@max"),
		"arena runners", policy.ReadOnly)
	var codex []events.Job
	for range 3 {
		codex = append(codex, h.nextJob(events.JobSubject("codex")))
	}
	cursor := h.nextJob(events.JobSubject("cursor"))
	require.Equal(t, 1, c.count(policy.Codex), "three codex launches of one pass, one read of codex's report")
	require.Equal(t, 1, c.count(policy.Cursor))

	blocked := codexEligibility(policy.EligibilityPolicyBlocked, "credits_present")
	h.put(blocked)
	h.execute(cursor, "usage-exhausted")
	h.report(cursor, events.ReportClaimed)
	h.report(cursor, events.ReportFinished)
	h.waitType(run, events.TypeExclude, 1)
	require.Equal(t, 2, c.count(policy.Codex), "the fallback's pass read codex's report again")
	for _, job := range codex {
		h.finishWith(job, "success")
	}
	_, envs := h.waitFinal(run)
	ex := excludes(envs)
	require.Len(t, ex, 1, "the fallback to codex is excluded:\n%s", dump(envs))
	require.Equal(t, policy.ExcludePolicyBlocked, ex[0].Verdict.Code)
	require.Equal(t, jsonOf(t, blocked), jsonOf(t, *ex[0].Report), "the exclusion records the report read in its own pass")
	h.verifyReplay(run)
}
