package activities

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// capacityConfig is the tests' worker configuration with a capacity store
// for provs and its log captured in logs.
func (e *workerEnv) capacityConfig(id string, capa events.Capacity, logs *lockedBuffer, provs ...policy.Provider) WorkerConfig {
	cfg := e.workerConfig(id)
	cfg.Providers = provs
	cfg.Capacity = capa
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return cfg
}

// waitPuts waits until the worker has stored n reports of p.
func (tw *testWorker) waitPuts(t *testing.T, p policy.Provider, n int) {
	t.Helper()
	tw.waitEvent(t, evCapacityPut, string(p), n)
}

// getReport reads p's current report.
func getReport(t *testing.T, capa events.Capacity, p policy.Provider) policy.CapacityReport {
	t.Helper()
	r, err := capa.Get(context.Background(), p)
	require.NoError(t, err)
	return r
}

// requestRefresh asks p's workers for a fresh report.
func requestRefresh(t *testing.T, capa events.Capacity, p policy.Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, capa.RequestRefresh(ctx, p))
}

// newGrokJob prepares a grok job on lane, like newJob.
func (e *workerEnv) newGrokJob(lane int) events.Job {
	e.t.Helper()
	j := e.newJob(lane)
	j.Descriptor, j.Provider, j.Model = "grok:grok-4.7@high", policy.Grok, "grok-4.7"
	j.APISpend = policy.APISpendApproved // grok runs only with API spend approved
	// A read-only Grok lane refuses a checkout under a temporary directory
	// (providers/grok_checkout.go): the job's checkout links to one outside.
	require.NoError(e.t, os.Remove(j.Paths.Cwd))
	require.NoError(e.t, os.Symlink(simenv.Checkout(e.t), j.Paths.Cwd))
	return j
}

// TestWorkerCapacityAtStart: a worker with a capacity store puts a report
// of each of its providers when it starts, before any job, and logs one
// debug line per acquisition with the state and reason only.
func TestWorkerCapacityAtStart(t *testing.T) {
	e := newWorkerEnv(t, "success", false)
	capa := e.js.Capacity()
	var logs lockedBuffer
	before := time.Now()
	tw := e.startWorker(e.capacityConfig("w-cap-"+eventstest.NewExecutionID()[2:10], capa, &logs, policy.Codex, policy.Grok))
	tw.waitPuts(t, policy.Grok, 1)
	tw.waitPuts(t, policy.Codex, 1)

	grok := getReport(t, capa, policy.Grok)
	require.Equal(t, policy.Grok, grok.Provider)
	require.Equal(t, policy.QuotaUnsupported, grok.Snapshot.Source)
	require.Equal(t, policy.CapacityUnsupported, grok.Snapshot.State)
	require.Nil(t, grok.LearnedExhaustion, "nothing proved an exhaustion")
	require.False(t, grok.Snapshot.AcquiredAt.Before(before.Truncate(time.Second)), "acquired at start")

	codex := getReport(t, capa, policy.Codex)
	require.Equal(t, policy.QuotaLiveRPC, codex.Snapshot.Source)
	require.False(t, codex.Snapshot.AcquiredAt.Before(before.Truncate(time.Second)))

	out := logs.String()
	require.Contains(t, out, "capacity acquired")
	var grokLines int
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "capacity acquired") && strings.Contains(line, "provider=grok") {
			grokLines++
			require.Contains(t, line, "state=unsupported")
			require.Contains(t, line, "why=start")
		}
	}
	require.Equal(t, 1, grokLines, "one line per acquisition:\n%s", out)
}

// TestWorkerCapacityRefreshRequest: a refresh request through the store
// makes the provider's workers acquire again: a newer report appears
// without waiting for the periodic refresh.
func TestWorkerCapacityRefreshRequest(t *testing.T) {
	e := newWorkerEnv(t, "success", false)
	capa := e.js.Capacity()
	var logs lockedBuffer
	cfg := e.capacityConfig("w-cap-"+eventstest.NewExecutionID()[2:10], capa, &logs, policy.Grok)
	cfg.QuotaRefresh = time.Hour // only the request can cause the second report
	tw := e.startWorker(cfg)
	tw.waitPuts(t, policy.Grok, 1)
	first := getReport(t, capa, policy.Grok)

	// The subscription starts beside the first acquisition: ask until it
	// is answered (each request only folds into a pending one).
	require.Eventually(t, func() bool {
		requestRefresh(t, capa, policy.Grok)
		return countEvents(tw.events.snapshot(), evCapacityPut, string(policy.Grok)) >= 2
	}, waitLong, 100*time.Millisecond)
	second := getReport(t, capa, policy.Grok)
	require.True(t, second.Snapshot.AcquiredAt.After(first.Snapshot.AcquiredAt),
		"the refresh put a newer report: %v then %v", first.Snapshot.AcquiredAt, second.Snapshot.AcquiredAt)
	require.Contains(t, logs.String(), "why=\"refresh request\"")
}

// TestWorkerCapacityLearnsExhaustion: an attempt of grok (UNSUPPORTED: no
// quota to read) that ends usage-exhausted leaves a learned exhaustion
// until now+ExhaustionCooldown in grok's report, which a later refresh and
// a later worker (the next run's) carry over while it lasts.
func TestWorkerCapacityLearnsExhaustion(t *testing.T) {
	e := newWorkerEnvScenarios(t, map[string]string{"grok": "usage-exhausted"}, false)
	capa := e.js.Capacity()
	var logs lockedBuffer
	cfg := e.capacityConfig("w-cap-"+eventstest.NewExecutionID()[2:10], capa, &logs, policy.Grok)
	cfg.ExhaustionCooldown = 2 * time.Hour
	tw := e.startWorker(cfg)
	tw.waitPuts(t, policy.Grok, 1)
	require.Nil(t, getReport(t, capa, policy.Grok).LearnedExhaustion)

	job := e.newGrokJob(0)
	e.publishOn(policy.Grok, job)
	e.waitReport(events.ReportFinished, job.ExecutionID)
	_, rc := e.receipt(job)
	require.Equal(t, policy.StatusUsageExhausted, rc.Status, "the scenario ends usage-exhausted")
	ended := time.Now()
	tw.waitPuts(t, policy.Grok, 2)

	rep := getReport(t, capa, policy.Grok)
	require.NotNil(t, rep.LearnedExhaustion, "the exhaustion the attempt proved is recorded")
	le := *rep.LearnedExhaustion
	require.WithinDuration(t, ended, le.At, 30*time.Second)
	require.Equal(t, 2*time.Hour, le.Until.Sub(le.At), "until now + the configured cooldown")
	require.Contains(t, logs.String(), "why=\"usage exhausted\"")

	// A refresh keeps it.
	require.Eventually(t, func() bool {
		requestRefresh(t, capa, policy.Grok)
		return countEvents(tw.events.snapshot(), evCapacityPut, string(policy.Grok)) >= 3
	}, waitLong, 100*time.Millisecond)
	again := getReport(t, capa, policy.Grok)
	require.NotNil(t, again.LearnedExhaustion)
	require.True(t, again.LearnedExhaustion.Until.Equal(le.Until), "carried over unchanged")

	// The next run's worker starts from the store and keeps it too.
	tw.stop(t)
	next := e.startWorker(e.capacityConfig("w-cap-"+eventstest.NewExecutionID()[2:10], capa, &logs, policy.Grok))
	next.waitPuts(t, policy.Grok, 1)
	carried := getReport(t, capa, policy.Grok)
	require.NotNil(t, carried.LearnedExhaustion, "exhaustion learned in one run carries to the next")
	require.True(t, carried.LearnedExhaustion.Until.Equal(le.Until))
}

// TestWorkerCapacityDropsExpiredExhaustion: a learned exhaustion whose
// time has passed is not carried into the next report.
func TestWorkerCapacityDropsExpiredExhaustion(t *testing.T) {
	e := newWorkerEnv(t, "success", false)
	capa := e.js.Capacity()
	old := time.Now().Add(-2 * time.Hour).UTC()
	require.NoError(t, capa.Put(context.Background(), policy.CapacityReport{
		SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Grok,
		Snapshot: policy.CapacitySnapshot{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Grok,
			Source: policy.QuotaUnsupported, State: policy.CapacityUnsupported, Reason: "no_source", AcquiredAt: old},
		LearnedExhaustion: &policy.LearnedExhaustion{At: old, Until: old.Add(time.Hour)},
	}))
	var logs lockedBuffer
	tw := e.startWorker(e.capacityConfig("w-cap-"+eventstest.NewExecutionID()[2:10], capa, &logs, policy.Grok))
	tw.waitPuts(t, policy.Grok, 1)
	rep := getReport(t, capa, policy.Grok)
	require.True(t, rep.Snapshot.AcquiredAt.After(old))
	require.Nil(t, rep.LearnedExhaustion, "an expired exhaustion is dropped")
}

// TestLearnedExhaustion pins the carry-over rule.
func TestLearnedExhaustion(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later := &policy.LearnedExhaustion{At: now.Add(-time.Minute), Until: now.Add(3 * time.Hour)}
	sooner := &policy.LearnedExhaustion{At: now.Add(-time.Minute), Until: now.Add(10 * time.Minute)}
	require.Nil(t, learnedExhaustion(nil, policy.QuotaUnsupported, time.Time{}, time.Hour))
	require.Equal(t, sooner, learnedExhaustion(sooner, policy.QuotaUnsupported, time.Time{}, time.Hour), "carried as is")
	require.Equal(t, &policy.LearnedExhaustion{At: now, Until: now.Add(time.Hour)},
		learnedExhaustion(sooner, policy.QuotaUnsupported, now, time.Hour), "a new proof outlasting the carried one")
	require.Equal(t, later, learnedExhaustion(later, policy.QuotaUnsupported, now, time.Hour), "the longer one stays")
	require.Nil(t, learnedExhaustion(nil, policy.QuotaLiveRPC, now, time.Hour), "a live source is measured, not learned")
}

// TestEnvList renders the worker's environment for quota sorted.
func TestEnvList(t *testing.T) {
	require.Equal(t, []string{"A=1", "HOME=/h", "PATH=/bin"}, envList(map[string]string{"PATH": "/bin", "HOME": "/h", "A": "1"}))
}

// TestWorkerCapacityPeriodic: without requests, the worker acquires again
// every QuotaRefresh.
func TestWorkerCapacityPeriodic(t *testing.T) {
	e := newWorkerEnv(t, "success", false)
	capa := e.js.Capacity()
	var logs lockedBuffer
	cfg := e.capacityConfig("w-cap-periodic", capa, &logs, policy.Grok)
	cfg.QuotaRefresh = 150 * time.Millisecond
	tw := e.startWorker(cfg)
	tw.waitPuts(t, policy.Grok, 3)
	require.Contains(t, logs.String(), "why=periodic")
}

// TestWorkerCapacityNeverBlocksJobs: while codex's quota source hangs
// (the simulated app-server answers nothing), a codex job still runs to
// its finished report; the acquisition ends at quota's deadline with an
// UNKNOWN snapshot (timeout), and a worker stopped meanwhile leaks
// nothing (goleak checks the package).
func TestWorkerCapacityNeverBlocksJobs(t *testing.T) {
	e := newWorkerEnv(t, "app-server-hang", false)
	capa := e.js.Capacity()
	var logs lockedBuffer
	tw := e.startWorker(e.capacityConfig("w-cap-hang", capa, &logs, policy.Codex))
	job := e.newJob(0)
	e.publish(job)
	e.waitReport(events.ReportFinished, job.ExecutionID)
	require.Zero(t, countEvents(tw.events.snapshot(), evCapacityPut, string(policy.Codex)),
		"the job finished while the acquisition still waited on the hung source")
	_, err := capa.Get(context.Background(), policy.Codex)
	require.ErrorIs(t, err, events.ErrNoCapacityReport)

	require.Eventually(t, func() bool {
		return countEvents(tw.events.snapshot(), evCapacityPut, string(policy.Codex)) >= 1
	}, 60*time.Second, 50*time.Millisecond, "the acquisition ends at quota's deadline")
	rep := getReport(t, capa, policy.Codex)
	require.Equal(t, policy.CapacityUnknown, rep.Snapshot.State)
	require.Equal(t, policy.CapacityReason("timeout"), rep.Snapshot.Reason)

	// A second hang, cut short by the stop.
	requestRefresh(t, capa, policy.Codex)
	tw.stop(t)
}
