package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// stallOf is the stall metadata a worker reports for an attempt whose
// health probe classified the provider as health.
func stallOf(health string) *events.Stall {
	live := events.StallHealthPairs[health]
	probe := map[string]string{events.HealthRequestStalled: "available", events.HealthProviderUnhealthy: "unavailable",
		events.HealthUnknown: "timeout"}[health]
	return &events.Stall{Failure: events.StallFailure, IdleMs: 1200, TimeoutMs: 1000,
		ProviderHealth: health, Liveness: live, Probe: probe, FenceClosed: true}
}

// timeOut runs job with a 1s runner deadline against a CLI that never
// ends, so the runner writes a timed-out receipt, and reports the claim
// and the end (with stall, when not nil).
func (h *harness) timeOut(job events.Job, stall *events.Stall) {
	h.t.Helper()
	short := job
	short.TimeoutMs = 1000
	h.execute(short, "long-running")
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportFinished, func(r *events.Report) { r.Stall = stall })
}

// TestStallProviderUnhealthyExcludedForTheRun: lane 0's claude attempt
// stalls and the worker's health probe finds claude unavailable
// (provider_unhealthy). The finish records the stall; lane 0 falls back to
// cursor; lane 1's later claude attempt is excluded before launch with
// provider_unhealthy (no claude job is published) and its lane stops
// naming it. A request_stalled or health_unknown stall excludes nothing:
// lane 1's claude attempt launches. Replay verifies every run.
func TestStallProviderUnhealthyExcludedForTheRun(t *testing.T) {
	t.Parallel()
	for _, health := range []string{events.HealthProviderUnhealthy, events.HealthRequestStalled, events.HealthUnknown} {
		t.Run(health, func(t *testing.T) {
			t.Parallel()
			stallExclusion(t, memory, health)
		})
	}
	t.Run("jetstream/"+events.HealthProviderUnhealthy, func(t *testing.T) {
		t.Parallel()
		stallExclusion(t, jetstream, events.HealthProviderUnhealthy)
	})
}

func stallExclusion(t *testing.T, b backend, health string) {
	h := newHarness(t, b)
	h.run()
	s := sheet(`# fallback: {"on":["deadline-exceeded"]}`,
		"arena runners: claude:sonnet@low -> cursor:composer-2.5@default, cursor:composer-2.5@default -> claude:sonnet@low")
	run := h.submit(s, "arena runners", policy.ReadOnly)
	claude := h.nextJob(events.JobSubject("claude"))
	require.Equal(t, 0, claude.Lane)
	cursor1 := h.nextJob(events.JobSubject("cursor"))
	require.Equal(t, 1, cursor1.Lane)

	// Lane 0's claude attempt stalls.
	h.timeOut(claude, stallOf(health))
	_, envs := h.waitRun(run, "lane 0's finish", func(r *machines.Run, envs []events.Envelope) bool {
		return len(ofType(onLane(envs, 0), events.TypeFinish)) == 1
	})
	fin := ofType(onLane(envs, 0), events.TypeFinish)[0].Payload.(events.Finish)
	require.Equal(t, stallOf(health), fin.Stall, "the finish records the report's stall")
	require.Equal(t, policy.OutcomeDeadlineExceeded, fin.Event.Status)

	// Lane 1's cursor attempt times out (no stall): its next attempt is
	// claude.
	h.timeOut(cursor1, nil)
	cursor0 := h.nextJob(events.JobSubject("cursor"))
	require.Equal(t, 0, cursor0.Lane, "lane 0 fell back to cursor")
	h.finishWith(cursor0, "success")

	// The report names the stall on lane 0's first attempt.
	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	a0 := rep.Lanes[0].Attempts[0]
	require.Equal(t, stallOf(health), a0.Stall)
	want := "timed-out: response_stalled after 1.2s idle (timeout 1s); provider health: " + health + "/" + events.StallHealthPairs[health]
	require.True(t, strings.HasPrefix(a0.Cause, want), a0.Cause)
	require.Contains(t, rep.Text(), "    1. claude:sonnet@low: "+want)
	require.Nil(t, rep.Lanes[1].Attempts[0].Stall, "a plain timeout records no stall")

	if health != events.HealthProviderUnhealthy {
		claude1 := h.nextJob(events.JobSubject("claude"))
		require.Equal(t, 1, claude1.Lane, "a %s stall does not exclude claude", health)
		h.finishWith(claude1, "success")
		r, envs := h.waitFinal(run)
		require.Empty(t, excludes(envs), "no exclusion:\n%s", dump(envs))
		require.Empty(t, r.Unhealthy)
		require.Equal(t, machines.StateComplete, r.Lanes[1].State)
		h.verifyReplay(run)
		return
	}

	r, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("claude"))
	require.Equal(t, []policy.Provider{policy.Claude}, r.Unhealthy)
	ex := excludes(envs)
	require.Len(t, ex, 1, "one exclusion:\n%s", dump(envs))
	x := ex[0]
	require.Equal(t, 1, x.AttemptIndex)
	require.Equal(t, policy.Claude, x.Provider)
	require.Equal(t, policy.ExcludeProviderUnhealthy, x.Verdict.Code)
	require.False(t, x.Verdict.Eligible)
	require.Nil(t, x.Report, "no capacity report is read for an unhealthy provider")
	require.Equal(t, []events.Type{events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeExclude, events.TypeStop},
		types(onLane(envs, 1)))
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Equal(t, machines.StateStopped, r.Lanes[1].State)

	rep, err = h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.Contains(t, rep.Lanes[1].Reason, "claude:sonnet@low provider_unhealthy")
	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, []policy.Provider{policy.Claude}, st.Unhealthy)
	require.Equal(t, policy.ExcludeProviderUnhealthy, st.Lanes[1].Exclusions[0].Code)
	require.Equal(t, string(policy.ExcludeProviderUnhealthy), rep.Lanes[1].Attempts[1].Code)
	res := h.verifyReplay(run)
	require.Equal(t, 1, res.Exclusions)

	// Replay recomputes the exclusion from the log: without the stall
	// that found claude unhealthy, the recorded verdict diverges.
	at := -1
	for i, e := range envs {
		if f, ok := e.Payload.(events.Finish); ok && f.Stall != nil {
			at = i
		}
	}
	require.GreaterOrEqual(t, at, 0)
	altered := copyLog(t, envs, at, func(p events.Payload) events.Payload {
		f := p.(events.Finish)
		f.Stall = stallOf(events.HealthUnknown)
		return f
	})
	res, err = engine.Replay(context.Background(), altered, run, policy.DefaultOptions())
	require.NoError(t, err)
	require.False(t, res.Verified)
	require.Equal(t, events.TypeExclude, res.Divergence.Type)
	require.Equal(t, engine.FieldVerdict, res.Divergence.Field)
}

// TestStallReportOnACompleteReceiptIsNotRecorded: a finished report
// whose stall contradicts its receipt (complete, not timed-out) is
// audited, and the finish is recorded without the stall, so it cannot
// exclude the provider.
func TestStallReportOnACompleteReceiptIsNotRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run, job := h.submitOneLane()
	h.execute(job, "success")
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportFinished, func(r *events.Report) { r.Stall = stallOf(events.HealthProviderUnhealthy) })
	r, envs := h.waitFinal(run)
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.Nil(t, fin.Stall)
	require.Equal(t, policy.OutcomeComplete, fin.Event.Status)
	require.Empty(t, r.Unhealthy)
	var audited bool
	for _, a := range ofType(envs, events.TypeAudit) {
		p := a.Payload.(events.Audit)
		audited = audited || (p.Reason == events.AuditMalformedReport && p.ExecutionID == job.ExecutionID)
	}
	require.True(t, audited, "the contradiction is audited:\n%s", dump(envs))
	h.verifyReplay(run)
}

// TestStallTimeoutPrecedence: a job carries its attempt's effective stall
// timeout: the provider's override, else the run's, else the contract's
// default 300000 ms; never 0. The run records what was asked.
func TestStallTimeoutPrecedence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	submit := func(run time.Duration, per map[policy.Provider]time.Duration) string {
		t.Helper()
		id, err := h.eng.Submit(context.Background(), engine.RunRequest{
			Sheet: sheet("", "arena runners: codex:gpt-5.6-sol@high, cursor:composer-2.5@default"), Role: "arena runners", Parent: policy.ParentClaude,
			Prompt: []byte("x\n"), Cwd: h.repo, StallTimeout: run, ProviderStallTimeouts: per,
		})
		require.NoError(t, err)
		return id
	}
	for _, tc := range []struct {
		name          string
		run           time.Duration
		per           map[policy.Provider]time.Duration
		codex, cursor int64
	}{
		{"default (longer for cursor, silent until done)", 0, nil, 300000, providers.SilentStallTimeoutMs},
		{"run's value", 90 * time.Second, nil, 90000, 90000},
		{"provider override over the run's", 90 * time.Second, map[policy.Provider]time.Duration{policy.Codex: 10 * time.Minute}, 600000, 90000},
		{"provider override over the default", 0, map[policy.Provider]time.Duration{policy.Cursor: 2500 * time.Millisecond}, 300000, 2500},
	} {
		id := submit(tc.run, tc.per)
		codex := h.nextJob(events.JobSubject("codex"))
		cursor := h.nextJob(events.JobSubject("cursor"))
		require.Equal(t, id, codex.Run, tc.name)
		require.Equal(t, tc.codex, codex.StallTimeoutMs, tc.name)
		require.Equal(t, tc.cursor, cursor.StallTimeoutMs, tc.name)
		r := h.waitLane(id, 0, machines.StateLaunching)
		require.Equal(t, tc.run.Milliseconds(), r.Created.Options.StallTimeoutMs, tc.name)
		require.Len(t, r.Created.Options.ProviderStallTimeoutMs, len(tc.per), tc.name)
	}

	for _, tc := range []struct {
		name string
		req  engine.RunRequest
		want string
	}{
		{"negative", engine.RunRequest{StallTimeout: -time.Second}, "must not be negative"},
		{"sub-millisecond", engine.RunRequest{StallTimeout: 1500 * time.Microsecond}, "whole number of milliseconds"},
		{"unknown provider", engine.RunRequest{ProviderStallTimeouts: map[policy.Provider]time.Duration{"codx": time.Minute}}, `"codx"`},
		{"negative override", engine.RunRequest{ProviderStallTimeouts: map[policy.Provider]time.Duration{policy.Grok: -1}}, "grok"},
	} {
		req := tc.req
		req.Sheet, req.Role, req.Parent, req.Prompt, req.Cwd = sheet("", "bug-fix: codex:gpt-5.6-sol@high"), "bug-fix", policy.ParentClaude, []byte("x\n"), h.repo
		_, err := h.eng.Submit(context.Background(), req)
		require.ErrorIs(t, err, engine.ErrInvalidRequest, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
}
