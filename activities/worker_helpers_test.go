package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// This file holds the machinery of the worker tests: a real embedded
// JetStream server, the simulated provider CLIs, jobs with their own
// directories, a report collector and in-process workers whose decisions
// are observable.

// Test timings: short leases and ack waits keep the tests fast, and are
// still many heartbeats (a third of each) long.
const (
	testLeaseTTL = time.Second
	testAckWait  = time.Second
	waitLong     = 20 * time.Second // upper bound on anything a test waits for
)

// observed is an append-only list whose growth can be waited on.
type observed[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{}
}

func newObserved[T any]() *observed[T] { return &observed[T]{changed: make(chan struct{})} }

func (o *observed[T]) add(v T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items = append(o.items, v)
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *observed[T]) snapshot() []T {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.items)
}

// waitFor waits until pred holds for the items, failing the test after
// waitLong.
func (o *observed[T]) waitFor(t *testing.T, what string, pred func([]T) bool) []T {
	t.Helper()
	deadline := time.NewTimer(waitLong)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		items, changed := slices.Clone(o.items), o.changed
		o.mu.Unlock()
		if pred(items) {
			return items
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s; have %+v", waitLong, what, items)
		}
	}
}

// workerEnv is one test's world: a JetStream server, a run id, the
// simulated CLIs and the runner's environment.
type workerEnv struct {
	t       *testing.T
	srv     *events.Embedded
	js      *events.JetStream
	run     string
	bin     string // simenv bin directory
	work    string // per-job directories
	env     map[string]string
	reports *observed[events.Report]
}

// newWorkerEnv starts a server (listening on loopback when listen is
// set), installs the simulated codex CLI replaying scenario, and collects
// the run's reports.
func newWorkerEnv(t *testing.T, scenario string, listen bool) *workerEnv {
	t.Helper()
	return newWorkerEnvScenarios(t, map[string]string{"codex": scenario}, listen)
}

// newWorkerEnvScenarios is newWorkerEnv with a scenario per simulated
// provider (the others replay their success); extra adjusts the server
// (credentials, say).
func newWorkerEnvScenarios(t *testing.T, scenarios map[string]string, listen bool, extra ...eventstest.Option) *workerEnv {
	t.Helper()
	opts := []eventstest.Option{eventstest.WithFsync(events.FsyncInterval)}
	if listen {
		opts = append(opts, eventstest.WithListen())
	}
	opts = append(opts, extra...)
	srv := eventstest.StartServer(t, opts...)
	cfg := simenv.Scenarios(scenarios)
	cfg.HangCapSeconds = 30 // a failed test never leaves a simulator behind for long
	e := &workerEnv{
		t: t, srv: srv, js: eventstest.Open(t, srv, events.JetStreamConfig{}),
		run: eventstest.NewRunID(), bin: simenv.Install(t, "", cfg), work: t.TempDir(),
		reports: newObserved[events.Report](),
	}
	home := filepath.Join(e.work, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	e.env = map[string]string{"PATH": e.bin + ":/usr/bin:/bin", simenv.SandboxWritable: e.bin, "HOME": home, "LANG": "C.UTF-8"}

	ctx, cancel := context.WithCancel(context.Background())
	ch, err := e.js.Queue().SubscribeReports(ctx, e.run, 0)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		for rd := range ch {
			if rd.Err == nil {
				e.reports.add(rd.Report)
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return e
}

// newJob prepares a codex job on lane with its own prompt, checkout and
// output paths; the simulator logs the checkout as the workload's cwd.
func (e *workerEnv) newJob(lane int) events.Job {
	e.t.Helper()
	id := eventstest.NewExecutionID()
	dir := filepath.Join(e.work, id)
	require.NoError(e.t, os.MkdirAll(filepath.Join(dir, "checkout"), 0o755))
	require.NoError(e.t, os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("Summarize README.md in one sentence.\n"), 0o600))
	return events.Job{
		ExecutionID: id, Run: e.run, Lane: lane, Descriptor: "codex:gpt-5.5@high",
		Provider: policy.Codex, Model: "gpt-5.5", Effort: policy.EffortHigh, Mode: policy.ReadOnly,
		APISpend: policy.APISpendDeny, Contract: policy.ContractLegacy, Parent: policy.ParentClaude,
		Route: policy.RouteExternal, TimeoutMs: 60_000, StallTimeoutMs: events.DefaultStallTimeoutMs,
		Paths: events.Paths{
			Prompt: filepath.Join(dir, "prompt.md"), Output: filepath.Join(dir, "out.md"),
			Receipt: filepath.Join(dir, "receipt.json"), Progress: filepath.Join(dir, "progress.json"),
			Cwd: filepath.Join(dir, "checkout"),
		},
	}
}

// publish queues jobs on the codex subject, each after the launch the
// engine would have recorded for it (workers refuse a job without one).
func (e *workerEnv) publish(jobs ...events.Job) {
	e.t.Helper()
	for _, j := range jobs {
		e.publishOn(policy.Codex, j)
	}
}

// publishOn records job's launch, as the engine does before it publishes
// a job, and queues the job on provider's subject.
func (e *workerEnv) publishOn(provider policy.Provider, job events.Job) {
	e.t.Helper()
	e.recordLaunch(provider, job)
	require.NoError(e.t, e.js.Queue().PublishJob(context.Background(), events.JobSubject(string(provider)), job))
}

// appendEvent appends p to lane of the test's run after whatever the lane
// holds.
func (e *workerEnv) appendEvent(lane int, p events.Payload) (uint64, error) {
	ctx := context.Background()
	var last uint64
	switch env, err := e.js.Store().Last(ctx, e.run, lane); {
	case err == nil:
		last = env.Seq
	case !errors.Is(err, events.ErrNotFound):
		return 0, err
	}
	return e.js.Store().Append(ctx, events.NewEnvelope(e.run, lane, time.Now(), p), last)
}

// recordLaunch appends job's launch to the store, after the run's
// run-created (recordRun(job) unless the run has one), and checks that the
// log now gives exactly job (events.JobOf, what a worker compares a job
// with), so a test's genuine job is one the engine could have published.
func (e *workerEnv) recordLaunch(provider policy.Provider, job events.Job) {
	e.t.Helper()
	ctx := context.Background()
	st := e.js.Store()
	last := func(lane int) uint64 {
		env, err := st.Last(ctx, job.Run, lane)
		if errors.Is(err, events.ErrNotFound) {
			return 0
		}
		require.NoError(e.t, err)
		return env.Seq
	}
	if last(events.RunLane) == 0 {
		e.recordRun(job)
	}
	launch := eventstest.SamplePayload(events.TypeLaunch).(events.Launch)
	launch.ExecutionID, launch.Descriptor, launch.Route = job.ExecutionID, job.Descriptor, job.Route
	launch.AttemptIndex, launch.Paths, launch.JobSubject = job.AttemptIndex, job.Paths, events.JobSubject(string(provider))
	ap := attemptOf(job)
	launch.Decision.AttemptIndex, launch.Decision.Attempt = &launch.AttemptIndex, &ap
	_, err := st.Append(ctx, events.NewEnvelope(job.Run, job.Lane, time.Now(), launch), last(job.Lane))
	require.NoError(e.t, err)

	runEnvs, err := st.Load(ctx, job.Run, events.RunLane)
	require.NoError(e.t, err)
	want, err := events.JobOf(job.Run, job.Lane, runEnvs[0].Payload.(events.RunCreated), launch, providers.UnsetStallTimeoutMs)
	require.NoError(e.t, err)
	job.Schema = 0
	require.Equal(e.t, want, job, "recordLaunch: the run's log (its run-created is the first recorded job's) does not give this job")
}

// testLanes is how many lanes the tests' run-created resolves.
const testLanes = 8

// recordRun appends the run's run-created, which gives jobs: jobs[0]'s
// access, parent, contract, checkout, timeouts and allow-flags are the
// run's, and each lane's attempts are those of the job on it, or of
// jobs[0] (so a later job like it, on any lane, matches too).
func (e *workerEnv) recordRun(jobs ...events.Job) {
	e.t.Helper()
	first := jobs[0]
	c := eventstest.SamplePayload(events.TypeRunCreated).(events.RunCreated)
	c.Access, c.Parent, c.Cwd = first.Mode, first.Parent, first.Paths.Cwd
	c.Options = events.RunOptions{Contract: first.Contract, TimeoutMs: first.TimeoutMs, StallTimeoutMs: first.StallTimeoutMs,
		OpenCodeChatGPTSubscription: first.OpenCodeChatGPTSubscription}
	if first.AllowUnverifiedContainment {
		c.Options.AllowUnverifiedContainment = []policy.Provider{first.Provider}
	}
	c.Lanes = make([]policy.LanePolicy, testLanes)
	for i := range c.Lanes {
		job := first
		for _, j := range jobs {
			if j.Lane == i {
				job = j
			}
		}
		c.Lanes[i] = policy.LanePolicy{ID: fmt.Sprintf("bug-fix#%d", i+1), Fallback: policy.DefaultFallback()}
		for range job.AttemptIndex + 1 {
			c.Lanes[i].Attempts = append(c.Lanes[i].Attempts, attemptOf(job))
		}
	}
	_, err := e.js.Store().Append(context.Background(), events.NewEnvelope(e.run, events.RunLane, time.Now(), c), 0)
	require.NoError(e.t, err)
}

// attemptOf is the resolved attempt that runs job.
func attemptOf(job events.Job) policy.AttemptPolicy {
	return policy.AttemptPolicy{
		Descriptor:      job.Descriptor,
		Attempt:         policy.Attempt{Kind: policy.KindDescriptor, Provider: job.Provider, Model: job.Model, Effort: job.Effort},
		ExhaustionGroup: job.Provider, Funding: policy.FundingIncluded, APISpend: job.APISpend, Route: job.Route,
		Authorization: policy.Authorization{State: "allowed"},
	}
}

// workerConfig is the tests' worker configuration.
func (e *workerEnv) workerConfig(id string) WorkerConfig {
	return WorkerConfig{
		Queue: e.js.Queue(), Claims: e.js.Claims(), Store: e.js.Store(),
		Providers: []policy.Provider{policy.Codex}, WorkerID: id,
		LeaseTTL: testLeaseTTL, AckWait: testAckWait, Env: e.env,
		Logger:       slog.New(slog.NewTextHandler(e.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		RunnerConfig: func(events.Job) runner.Config { return runner.Config{KillGrace: 500 * time.Millisecond} },
	}
}

// testWorker is a Worker running in the test process.
type testWorker struct {
	*Worker
	events *observed[workerEvent]
	cancel context.CancelFunc
	done   chan error
}

// startWorker runs a worker until stop (or the end of the test).
func (e *workerEnv) startWorker(cfg WorkerConfig) *testWorker {
	e.t.Helper()
	w, err := NewWorker(cfg)
	require.NoError(e.t, err)
	tw := &testWorker{Worker: w, events: newObserved[workerEvent](), done: make(chan error, 1)}
	w.trace = tw.events.add
	ctx, cancel := context.WithCancel(context.Background())
	tw.cancel = cancel
	go func() { tw.done <- w.Run(ctx) }()
	e.t.Cleanup(func() { tw.stop(e.t) })
	return tw
}

// stop cancels the worker and waits for Run to return.
func (tw *testWorker) stop(t *testing.T) {
	t.Helper()
	tw.cancel()
	select {
	case err, ok := <-tw.done:
		if ok {
			require.NoError(t, err)
			close(tw.done)
		}
	case <-time.After(waitLong):
		t.Fatalf("worker %s did not stop", tw.ID())
	}
}

// drain calls Drain and waits for Run to return, failing the test unless
// it does within bound. It returns how long Run took to return.
func (tw *testWorker) drain(t *testing.T, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	tw.Drain()
	select {
	case err, ok := <-tw.done:
		require.True(t, ok, "worker %s had already stopped", tw.ID())
		require.NoError(t, err)
		close(tw.done)
		return time.Since(start)
	case <-time.After(bound):
		t.Fatalf("worker %s still running %v after Drain", tw.ID(), bound)
		return 0
	}
}

// waitEvent waits for the worker's decision kind about execution id.
func (tw *testWorker) waitEvent(t *testing.T, kind workerEventKind, id string, n int) {
	t.Helper()
	tw.events.waitFor(t, fmt.Sprintf("%d× %s of %s", n, kind, id), func(evs []workerEvent) bool {
		return countEvents(evs, kind, id) >= n
	})
}

func countEvents(evs []workerEvent, kind workerEventKind, id string) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind && ev.Execution == id {
			n++
		}
	}
	return n
}

// reportsOf lists the reports about one execution, in stream order.
func reportsOf(all []events.Report, id string) []events.Report {
	var out []events.Report
	for _, r := range all {
		if r.ExecutionID == id {
			out = append(out, r)
		}
	}
	return out
}

// kinds lists the kinds of reports.
func kinds(rs []events.Report) []events.ReportKind {
	out := make([]events.ReportKind, len(rs))
	for i, r := range rs {
		out[i] = r.Kind
	}
	return out
}

// waitReport waits for a report of kind about job and returns it.
func (e *workerEnv) waitReport(kind events.ReportKind, id string) events.Report {
	e.t.Helper()
	all := e.reports.waitFor(e.t, fmt.Sprintf("a %s report of %s", kind, id), func(rs []events.Report) bool {
		return slices.Contains(kinds(reportsOf(rs, id)), kind)
	})
	for _, r := range reportsOf(all, id) {
		if r.Kind == kind {
			return r
		}
	}
	panic("unreachable")
}

// workloads lists the simulated workload invocations of job (its checkout
// is the process's working directory).
func (e *workerEnv) workloads(job events.Job) []simlog.Invocation {
	e.t.Helper()
	var out []simlog.Invocation
	for _, inv := range simlog.Filter(simenv.Invocations(e.t, e.bin), "codex", simlog.KindWorkload) {
		if inv.Cwd == job.Paths.Cwd {
			out = append(out, inv)
		}
	}
	return out
}

// waitWorkload waits until job's workload has started and returns it. The
// invocation log is a file: it is polled.
func (e *workerEnv) waitWorkload(job events.Job) simlog.Invocation {
	e.t.Helper()
	var inv simlog.Invocation
	require.Eventually(e.t, func() bool {
		invs := e.workloads(job)
		if len(invs) > 0 {
			inv = invs[0]
		}
		return len(invs) > 0
	}, waitLong, 20*time.Millisecond, "workload of %s never started", job.ExecutionID)
	return inv
}

// signalsTo lists the signals the simulator with pid logged.
func (e *workerEnv) signalsTo(pid int) []string {
	e.t.Helper()
	var out []string
	for _, s := range simenv.Signals(e.t, e.bin) {
		if s.Pid == pid {
			out = append(out, s.Signal)
		}
	}
	return out
}

// receipt reads job's receipt: its bytes and decoded form.
func (e *workerEnv) receipt(job events.Job) ([]byte, *policy.Receipt) {
	e.t.Helper()
	b, err := os.ReadFile(job.Paths.Receipt)
	require.NoError(e.t, err)
	rc, err := policy.DecodeReceipt(b)
	require.NoError(e.t, err)
	return b, rc
}

// claimOf reads job's claim.
func (e *workerEnv) claimOf(job events.Job) events.Lease {
	e.t.Helper()
	l, err := e.js.Claims().Inspect(context.Background(), job.ExecutionID)
	require.NoError(e.t, err)
	return l
}

// syncReports returns once every report published so far has been
// collected: it publishes a sentinel report on the run and waits for it
// (the subscription delivers in order).
func (e *workerEnv) syncReports() {
	e.t.Helper()
	id := eventstest.NewExecutionID()
	r := events.Report{ExecutionID: id, Run: e.run, Lane: 0, Kind: events.ReportAbandoned, WorkerID: "test-sentinel", Time: time.Now()}
	_, err := e.js.Queue().PublishReport(context.Background(), r)
	require.NoError(e.t, err)
	e.waitReport(events.ReportAbandoned, id)
}

// cancelStops records a cancel on lane (the job's, or RunLane) and
// requires that it stops the running attempt: a finished report, a
// cancelled receipt, SIGTERM to the child.
func (e *workerEnv) cancelStops(job events.Job, inv simlog.Invocation, lane int) {
	e.t.Helper()
	_, err := e.appendEvent(lane, events.Cancel{Reason: "stop", By: "test"})
	require.NoError(e.t, err)
	e.waitReport(events.ReportFinished, job.ExecutionID)
	_, rc := e.receipt(job)
	require.Equal(e.t, policy.StatusCancelled, rc.Status)
	require.Equal(e.t, []string{"SIGTERM"}, e.signalsTo(inv.Pid), "the child got SIGTERM")
}
