package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// codexThenGrokSheet has one lane: codex, falling back to grok.
const codexThenGrokSheet = `# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
bug-fix: codex:gpt-5.6-sol@high -> grok:grok-4.7@xhigh
`

// sentinels are the values the quota fixtures and the simulated codex
// app-server plant where a real payload carries account data (account,
// user, token and project ids and the e-mail all carry "SNTL"; balances
// are 4242.17): none may appear in anything Switchyard prints, records or
// logs. (A bare 4242 could be part of a pid, a port or a timestamp.)
var sentinels = regexp.MustCompile(`(?i)sntl|4242\.17`)

// noSentinel fails when what (named by name) carries a sentinel value.
func noSentinel(t *testing.T, name, what string) {
	t.Helper()
	if m := sentinels.FindString(what); m != "" {
		t.Errorf("%s carries the sentinel %q (account data leaked):\n%s", name, m, what)
	}
}

// usageJSON runs usage --json with args and decodes it.
func (s *engineSandbox) usageJSON(t *testing.T, args ...string) usageOutput {
	t.Helper()
	r := s.run(t, 60*time.Second, append([]string{"usage", "--data-dir", s.data, "--json"}, args...)...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	noSentinel(t, "usage --json", r.stdout+r.stderr)
	// The capacity snapshot and eligibility report are the policy
	// contract's objects, spelled as it spells them.
	requireJSONDoc(t, "usage --json", r.stdout, "providers[].snapshot", "providers[].eligibility")
	var out struct {
		SchemaVersion int `json:"schemaVersion"`
		usageOutput
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&out), r.stdout)
	return out.usageOutput
}

// usageOf is provider p's entry.
func usageOf(t *testing.T, out usageOutput, p policy.Provider) providerUsage {
	t.Helper()
	for _, u := range out.Providers {
		if u.Provider == p {
			return u
		}
	}
	t.Fatalf("usage lists no %s: %+v", p, out)
	return providerUsage{}
}

// serveJetStream connects the test to the data directory's serve.
func serveJetStream(t *testing.T, info serveInfo) *events.JetStream {
	t.Helper()
	nc, err := events.Connect([]string{info.URL}, events.FileClientOptions(filepath.Join(info.DataDir, authFileName), events.RoleEngine)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 1})
	require.NoError(t, err)
	return js
}

// TestUsageStatusAndExclusionAgree, under a serve with real workers: a
// codex account with purchased credits (the simulated app-server's
// credits-present scenario) is measured by the codex worker; the run's
// codex attempt is excluded before launch with execution_policy_blocked
// (codex never executes) and the lane runs grok; usage --json's verdict,
// status --json's eligibility and the recorded exclude event agree, all
// computed from the same report. Nothing anywhere carries the account's
// sentinel values.
func TestUsageStatusAndExclusionAgree(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "credits-present"}, codexThenGrokSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--log-level", "debug")
	info := waitServeInfo(t, s.data, srv)
	wk := s.start(t, "worker", "--data-dir", s.data, "--provider", "codex,grok", "--log-level", "debug")

	// The worker measures codex at start.
	var before usageOutput
	require.NoError(t, waitFor(30*time.Second, "the codex worker's first report", func() (bool, error) {
		before = s.usageJSON(t, "--provider", "codex")
		return usageOf(t, before, policy.Codex).Snapshot != nil, nil
	}))
	u := usageOf(t, before, policy.Codex)
	require.Equal(t, policy.QuotaLiveRPC, u.Source)
	require.Equal(t, policy.CapacityMeasured, u.Snapshot.State)
	require.NotNil(t, u.Eligibility)
	require.Equal(t, policy.EligibilityPolicyBlocked, u.Eligibility.State)
	require.Contains(t, u.Eligibility.Reasons, policy.EligibilityReason("credits_present"))
	require.False(t, u.Verdict.Eligible)
	require.Equal(t, policy.ExcludePolicyBlocked, u.Verdict.Code)

	r := s.run(t, 90*time.Second, s.runArgs("bug-fix", "--run-id", "parity", "--json")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	noSentinel(t, "run", r.stdout+r.stderr)
	for _, inv := range simlog.Filter(simenv.Invocations(t, s.bin), "codex", simlog.KindWorkload) {
		t.Errorf("codex executed although excluded: %+v", inv)
	}
	require.NotEmpty(t, simlog.Filter(simenv.Invocations(t, s.bin), "grok", simlog.KindWorkload), "the lane ran its next provider")

	// The recorded exclusion.
	js := serveJetStream(t, info)
	envs, err := js.Store().Load(context.Background(), "parity", 0)
	require.NoError(t, err)
	runEnvs, err := js.Store().Load(context.Background(), "parity", events.RunLane)
	require.NoError(t, err)
	for _, env := range runEnvs {
		b, err := json.Marshal(env.Payload)
		require.NoError(t, err)
		noSentinel(t, "event "+string(env.Type), string(b))
	}
	var excl []events.Exclude
	for _, env := range envs {
		if x, ok := env.Payload.(events.Exclude); ok {
			excl = append(excl, x)
		}
		b, err := json.Marshal(env.Payload)
		require.NoError(t, err)
		noSentinel(t, "event "+string(env.Type), string(b))
	}
	require.Len(t, excl, 1, "codex's attempt is excluded once")
	require.Equal(t, policy.Codex, excl[0].Provider)
	require.NotNil(t, excl[0].Report)

	after := usageOf(t, s.usageJSON(t, "--provider", "codex"), policy.Codex)
	st := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "parity", "--json")
	require.Equal(t, 0, st.code, st.stderr)
	noSentinel(t, "status --json", st.stdout)
	var status runStatusJSON
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &status), st.stdout)
	var fromStatus *statusEligibility
	for i := range status.Eligibility {
		if status.Eligibility[i].Provider == policy.Codex {
			fromStatus = &status.Eligibility[i]
		}
	}
	require.NotNil(t, fromStatus, "status lists codex's eligibility: %s", st.stdout)
	require.True(t, status.Final)

	// One report, one verdict, three places.
	require.True(t, after.Snapshot.AcquiredAt.Equal(excl[0].Report.Snapshot.AcquiredAt), "usage and the exclusion read the same report")
	require.Equal(t, excl[0].Verdict, after.Verdict, "usage --json and the exclude event")
	require.Equal(t, excl[0].Verdict, fromStatus.Verdict, "status --json and the exclude event")
	require.Equal(t, policy.ExcludePolicyBlocked, excl[0].Verdict.Code)

	require.Equal(t, 0, wk.stop(t))
	require.Equal(t, 0, srv.stop(t))
	_, wkLog := wk.output()
	_, srvLog := srv.output()
	require.Contains(t, wkLog, "capacity acquired", "the worker logs its acquisitions at debug")
	noSentinel(t, "worker log", wkLog)
	noSentinel(t, "serve log", srvLog)
}

// TestUsageRefreshAsksTheWorkers: with a serve, usage reads the workers'
// reports; --refresh asks them to measure again and shows the newer one.
func TestUsageRefreshAsksTheWorkers(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)

	out := s.usageJSON(t, "--provider", "grok")
	g := usageOf(t, out, policy.Grok)
	require.Nil(t, g.Snapshot, "no worker, no report yet")
	require.Equal(t, policy.CapacityUnsupported, g.QuotaView.State)
	require.True(t, g.Verdict.Eligible, "UNSUPPORTED is opaque capacity, not a failure")
	require.Equal(t, policy.EvidenceOpaque, g.Verdict.Capacity)

	s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	var first providerUsage
	require.NoError(t, waitFor(30*time.Second, "the grok worker's first report", func() (bool, error) {
		first = usageOf(t, s.usageJSON(t, "--provider", "grok"), policy.Grok)
		return first.Snapshot != nil, nil
	}))
	require.Equal(t, policy.QuotaUnsupported, first.Snapshot.Source)
	require.NotNil(t, first.AgeSeconds)

	second := usageOf(t, s.usageJSON(t, "--provider", "grok", "--refresh"), policy.Grok)
	require.NotNil(t, second.Snapshot)
	require.True(t, second.Snapshot.AcquiredAt.After(first.Snapshot.AcquiredAt),
		"--refresh shows a newer report: %v, then %v", first.Snapshot.AcquiredAt, second.Snapshot.AcquiredAt)

	// codex has no live worker: usage says so rather than wait for it.
	both := s.run(t, 60*time.Second, "usage", "--data-dir", s.data, "--provider", "codex,grok", "--refresh", "--wait", "10m", "--json")
	require.Equal(t, 0, both.code, both.stderr)
	require.Contains(t, both.stderr, "no live worker for codex to measure again; showing the report it has (start one: `switchyard worker --provider codex --data-dir "+s.data+"`)")

	text := s.run(t, 30*time.Second, "usage", "--data-dir", s.data, "--provider", "grok")
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, "grok (UNSUPPORTED): unsupported (no_source): no trustworthy metric; capacity is opaque\n")
	require.Contains(t, text.stdout, "verdict: eligible (capacity opaque)")
}

// TestUsageMeasuresHereWithoutServer: with no server (and no data
// directory), usage acquires in-process for the providers asked, creates
// nothing, and prints no account data.
func TestUsageMeasuresHereWithoutServer(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "credits-present"}, singleLaneSheet)
	out := s.usageJSON(t, "--provider", "grok,codex")
	require.Len(t, out.Providers, 2)
	require.Equal(t, policy.Codex, out.Providers[0].Provider, "canonical order")
	c := usageOf(t, out, policy.Codex)
	require.NotNil(t, c.Snapshot)
	require.Equal(t, policy.CapacityMeasured, c.Snapshot.State)
	require.NotEmpty(t, c.QuotaView.Windows)
	for _, w := range c.QuotaView.Windows {
		require.NotNil(t, w.UsedPercent)
		require.NotNil(t, w.RemainingPercent)
		require.InDelta(t, 100, *w.UsedPercent+*w.RemainingPercent, 0.001)
	}
	require.Equal(t, policy.ExcludePolicyBlocked, c.Verdict.Code)
	g := usageOf(t, out, policy.Grok)
	require.True(t, g.Verdict.Eligible)
	require.NoDirExists(t, s.data, "usage creates nothing")

	text := s.run(t, 60*time.Second, "usage", "--data-dir", s.data, "--provider", "codex")
	require.Equal(t, 0, text.code, text.stderr)
	noSentinel(t, "usage", text.stdout+text.stderr)
	require.Contains(t, text.stdout, "measured here (no server for the data directory)")
	require.Contains(t, text.stdout, "eligibility: policy_blocked (credits_present")
	require.Contains(t, text.stdout, "verdict: excluded before launch: execution_policy_blocked")
}

// TestRunAllowUnknownQuota: --allow-unknown-quota warns and is recorded in
// the run's run-created options.
func TestRunAllowUnknownQuota(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	r := s.run(t, 90*time.Second, s.runArgs("hillclimb", "--run-id", "allow", "--allow-unknown-quota", "grok", "--allow-unknown-quota", "codex,grok")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "\n  warning: --allow-unknown-quota codex,grok: attempts of codex,grok launch even when their quota or eligibility is UNKNOWN")

	h := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "allow", "--lane", "run", "--type", "run-created", "--json")
	require.Equal(t, 0, h.code, h.stderr)
	require.Contains(t, h.stdout, `"allowUnknownQuota":["codex","grok"]`)
}

// grokThenDevinSheet has one lane: grok (UNSUPPORTED: no quota to read),
// falling back to devin.
const grokThenDevinSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
bug-fix: grok:grok-4.7@xhigh -> devin:swe-2@high
`

// TestExhaustionCarriesToTheNextRun: grok has no quota source, so its
// exhaustion is learned by running it. A first self-contained run launches
// grok, which ends usage-exhausted, and falls back to devin; its worker
// records the learned exhaustion. A second run, in a new process, excludes
// grok before launch (quota_exhausted, until the cooldown ends) instead of
// launching it to fail again, and usage shows why.
func TestExhaustionCarriesToTheNextRun(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "usage-exhausted"}, grokThenDevinSheet)
	grokRuns := func() int { return len(simlog.Filter(simenv.Invocations(t, s.bin), "grok", simlog.KindWorkload)) }

	r := s.run(t, 90*time.Second, s.runArgs("bug-fix", "--run-id", "first")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "terminal grok:grok-4.7@xhigh (usage-exhausted)")
	require.Equal(t, 1, grokRuns())

	r = s.run(t, 90*time.Second, s.runArgs("bug-fix", "--run-id", "second")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "excluded before launch: grok:grok-4.7@xhigh quota_exhausted")
	require.Contains(t, r.stdout, "complete via devin:swe-2@high")
	require.Equal(t, 1, grokRuns(), "the second run never launched grok")

	g := usageOf(t, s.usageJSON(t, "--provider", "grok"), policy.Grok)
	require.NotNil(t, g.QuotaView.LearnedExhaustion, "the exhaustion is read from the data directory")
	require.Equal(t, policy.ExcludeQuotaExhausted, g.Verdict.Code)
	require.NotNil(t, g.Verdict.Until)
	require.WithinDuration(t, time.Now().Add(time.Hour), *g.Verdict.Until, 5*time.Minute, "until the default cooldown ends")
}
