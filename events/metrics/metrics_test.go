package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/events/metrics"
	"github.com/switchyard-dev/switchyard/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestObserve: events count by type; a finish counts an attempt by its
// receipt's provider and outcome and times it from its launch; audits
// count by reason; worker failures by provider. The exposition passes the
// Prometheus linter and no label value is a run or execution id.
func TestObserve(t *testing.T) {
	m := metrics.New()
	t0 := eventstest.T0
	for i, typ := range []events.Type{events.TypeRunCreated, events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeAudit, events.TypeComplete} {
		m.Observe(eventstest.SampleEnvelope(typ, "run-7f3c", 0, t0.Add(time.Duration(i)*time.Minute)))
	}
	m.WatchProviders([]policy.Provider{policy.Grok})
	m.ClaimFailed(policy.Codex)
	m.LeaseFailed(policy.Codex)
	m.LeaseFailed(policy.Codex)
	m.Replayed(true)
	m.Replayed(false)

	want := `
# HELP switchyard_attempts_total Attempts that finished, by provider and normalized outcome.
# TYPE switchyard_attempts_total counter
switchyard_attempts_total{outcome="complete",provider="codex"} 1
# HELP switchyard_audited_deliveries_total Deliveries that changed nothing (late, duplicate, stale or malformed reports, redelivered jobs), by reason.
# TYPE switchyard_audited_deliveries_total counter
switchyard_audited_deliveries_total{reason="duplicate-report"} 1
# HELP switchyard_claim_failures_total Jobs a worker could not claim (the execution id was held, or the claim store failed), by provider.
# TYPE switchyard_claim_failures_total counter
switchyard_claim_failures_total{provider="codex"} 1
switchyard_claim_failures_total{provider="grok"} 0
# HELP switchyard_lease_failures_total Lease refreshes a worker could not make for a running attempt, by provider.
# TYPE switchyard_lease_failures_total counter
switchyard_lease_failures_total{provider="codex"} 2
switchyard_lease_failures_total{provider="grok"} 0
# HELP switchyard_replay_divergences_total Replays whose recomputed decision differed from the recorded one.
# TYPE switchyard_replay_divergences_total counter
switchyard_replay_divergences_total 1
# HELP switchyard_replays_total Final runs whose event log was replayed and every decision recomputed.
# TYPE switchyard_replays_total counter
switchyard_replays_total 2
`
	require.NoError(t, testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want),
		"switchyard_attempts_total", "switchyard_audited_deliveries_total", "switchyard_claim_failures_total",
		"switchyard_lease_failures_total", "switchyard_replay_divergences_total", "switchyard_replays_total"))
	families, err := m.Gatherer().Gather()
	require.NoError(t, err)
	var sum float64
	transitions := map[string]float64{}
	for _, mf := range families {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				require.NotContains(t, l.GetValue(), "run-7f3c", "%s carries a run id", mf.GetName())
				require.NotEqual(t, "x1", l.GetValue(), "%s carries an execution id", mf.GetName())
			}
			switch mf.GetName() {
			case "switchyard_attempt_duration_seconds":
				sum = mt.GetHistogram().GetSampleSum()
			case "switchyard_lane_transitions_total":
				transitions[mt.GetLabel()[0].GetValue()] = mt.GetCounter().GetValue()
			}
		}
	}
	require.Equal(t, 120.0, sum, "launched at t0+1m, finished at t0+3m")
	require.Equal(t, map[string]float64{"run-created": 1, "launch": 1, "claim": 1, "finish": 1, "audit": 1, "complete": 1}, transitions)
	problems, err := testutil.GatherAndLint(m.Gatherer())
	require.NoError(t, err)
	require.Empty(t, problems)
}

// TestSampler: the sampler's gauges appear at scrape time; without one
// they are absent.
func TestSampler(t *testing.T) {
	m := metrics.New()
	n, err := testutil.GatherAndCount(m.Gatherer(), "switchyard_jetstream_up")
	require.NoError(t, err)
	require.Zero(t, n)
	m.SetSampler(func(context.Context) metrics.Snapshot {
		return metrics.Snapshot{LanesByState: map[string]int{"running": 3}, JobsWaiting: map[policy.Provider]int{policy.Grok: 4},
			WorkersLive: map[policy.Provider]int{policy.Grok: 0}}
	})
	want := `
# HELP switchyard_jetstream_up 1 when the process's NATS connection and streams answered at the last scrape, else 0.
# TYPE switchyard_jetstream_up gauge
switchyard_jetstream_up 0
# HELP switchyard_jobs_waiting Jobs queued per provider and not yet handed to a worker.
# TYPE switchyard_jobs_waiting gauge
switchyard_jobs_waiting{provider="grok"} 4
# HELP switchyard_lanes Lanes of every run in the store, by lane state.
# TYPE switchyard_lanes gauge
switchyard_lanes{state="running"} 3
# HELP switchyard_workers_live Workers that announced themselves within the presence TTL, per provider.
# TYPE switchyard_workers_live gauge
switchyard_workers_live{provider="grok"} 0
`
	require.NoError(t, testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want),
		"switchyard_jetstream_up", "switchyard_jobs_waiting", "switchyard_lanes", "switchyard_workers_live"))
}
