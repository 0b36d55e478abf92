package quota

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simquota"
)

// The spec names its reader: every spec with a live source names one this
// package registers, an UNSUPPORTED spec names none, and every registered
// reader serves some spec (no live source silently reads no_source, no
// reader is dead code).
func TestSpecsNameRegisteredReaders(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	for _, p := range providers.Names() {
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		if spec.QuotaSource == policy.QuotaUnsupported {
			require.Empty(t, spec.QuotaReader, "%s has no live source, so it names no reader", p)
			require.NotContains(t, acquirers, p)
			continue
		}
		require.Contains(t, readers, spec.QuotaReader, "%s's spec names a reader this package does not register", p)
		require.Contains(t, acquirers, p)
		used[spec.QuotaReader] = true
	}
	for name := range readers {
		require.True(t, used[name], "reader %q is named by no spec", name)
	}
	require.Len(t, acquirers, 3, "codex, claude and gemini have live sources")
}

// The kill switch answers unknown/disabled before any file, process or
// network is touched, for every provider with a live source.
func TestAcquireKillSwitch(t *testing.T) {
	t.Parallel()
	for _, p := range []policy.Provider{policy.Claude, policy.Gemini, policy.Codex} {
		for _, v := range []string{"0", "false", "OFF", " no "} {
			t.Run(string(p)+"="+v, func(t *testing.T) {
				t.Parallel()
				s := newStand(t)
				spec, err := providers.Lookup(p)
				require.NoError(t, err)
				got := requireReport(t, p, spec.QuotaSource, s.acquire(t, p, 0, KillSwitch(p)+"="+v))
				requireSnapshot(t, unknownSnapshot(p, spec.QuotaSource, policy.CapacityReasonDisabled, testNow), got)
				require.Zero(t, s.hits(), "the kill switch must prevent every request")
			})
		}
	}
}

// Any other value, or another provider's switch, leaves the source on.
func TestAcquireKillSwitchOtherValues(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{
		{KillSwitch(policy.Claude) + "=1"},
		{KillSwitch(policy.Claude) + "="},
		{KillSwitch(policy.Gemini) + "=0"},
		{KillSwitch(policy.Claude) + "=0", KillSwitch(policy.Claude) + "=1"}, // the last entry wins
	} {
		s := newStand(t)
		got := s.acquire(t, policy.Claude, 0, extra...)
		require.Equal(t, policy.CapacityMeasured, got.Snapshot.State, "env %v", extra)
		require.Equal(t, 1, s.sim.Hits(simquota.ClaudeUsagePath))
	}
	require.Equal(t, "SWITCHYARD_CLAUDE_USAGE_API", KillSwitch(policy.Claude))
}

// Every provider without a live source in this package: UNSUPPORTED when
// its spec says so (opaque, not a failure, whatever its kill switch),
// else unknown/no_source: never "go ahead" on a source nobody reads.
func TestAcquireProvidersWithoutSource(t *testing.T) {
	t.Parallel()
	unsupported := 0
	for _, p := range providers.Names() {
		if _, ok := acquirers[p]; ok {
			continue
		}
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		s := newStand(t)
		got := requireReport(t, p, spec.QuotaSource, s.acquire(t, p, 0, KillSwitch(p)+"=0"))
		want := unknownSnapshot(p, spec.QuotaSource, policy.CapacityReasonNoSource, testNow)
		if spec.QuotaSource == policy.QuotaUnsupported {
			unsupported++
			want.State = policy.CapacityUnsupported
		}
		requireSnapshot(t, want, got)
		require.Zero(t, s.hits())
	}
	require.NotZero(t, unsupported, "no UNSUPPORTED provider was checked")
	for _, p := range []policy.Provider{policy.Claude, policy.Gemini, policy.Codex} {
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		require.NotEqual(t, policy.QuotaUnsupported, spec.QuotaSource, "%s has a live source", p)
	}
}

func TestAcquireUnknownProvider(t *testing.T) {
	t.Parallel()
	got := Acquire(context.Background(), "nonesuch", Config{Now: clock})
	requireSnapshot(t, unknownSnapshot("nonesuch", policy.QuotaUnsupported, policy.CapacityReasonNoSource, testNow),
		requireReport(t, "nonesuch", policy.QuotaUnsupported, got))
}

// The report on the wire: every report carries schema_version, provider,
// source and acquired_at; optional fields are omitted, never null.
func TestAcquireReportJSON(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	b, err := json.Marshal(s.acquire(t, policy.Claude, 0, KillSwitch(policy.Claude)+"=0"))
	require.NoError(t, err)
	require.JSONEq(t, `{"schema_version":1,"provider":"claude","snapshot":{"schema_version":1,"provider":"claude",
		"source":"LIVE_HTTP","state":"unknown","reason":"disabled","acquired_at":"2026-08-21T12:00:00Z"}}`, string(b))
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.withDefaults()
	require.Equal(t, DefaultTimeout, c.Timeout)
	require.NotNil(t, c.HTTPClient)
	require.Equal(t, DefaultTimeout, c.HTTPClient.Timeout)
	before := time.Now()
	got := Acquire(context.Background(), policy.Claude, Config{Env: []string{KillSwitch(policy.Claude) + "=0"}})
	require.False(t, got.Snapshot.AcquiredAt.Before(before.Truncate(time.Second)), "Now defaults to the wall clock")
	require.False(t, got.Snapshot.AcquiredAt.After(time.Now()))
	require.Equal(t, 5*time.Second, Config{Timeout: 5 * time.Second}.withDefaults().Timeout)
}

// finish never lets a report through without a state.
func TestFinishFillsReport(t *testing.T) {
	t.Parallel()
	r := finish(policy.CapacityReport{Eligibility: &policy.ExecutionEligibility{State: policy.EligibilityUnknown}},
		policy.Codex, policy.QuotaLiveRPC, clock)
	require.Equal(t, policy.CapacityUnknown, r.Snapshot.State)
	require.Equal(t, policy.CapacityReasonBackendError, r.Snapshot.Reason)
	require.Equal(t, policy.QuotaLiveRPC, r.Snapshot.Source)
	require.Equal(t, testNow, r.Snapshot.AcquiredAt)
	require.Equal(t, policy.EligibilitySchemaVersion, r.Eligibility.SchemaVersion)
	require.Equal(t, policy.Codex, r.Eligibility.Provider)
	require.Equal(t, testNow, r.Eligibility.ObservedAt)
}

// The caller's context bounds an acquisition too.
func TestAcquireHonoursCallerContext(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	s.sim.SetClaude(simquota.Slow)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := Acquire(ctx, policy.Claude, Config{Env: s.env, Now: clock})
	require.Equal(t, policy.CapacityReasonTimeout, got.Snapshot.Reason)
}
