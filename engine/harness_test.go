package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// waitTimeout bounds every wait on the log; generous for -race on 2 cores.
const waitTimeout = 30 * time.Second

// Access facts every test sheet carries: subscriptions, no API spend.
const access = `# access: {"provider":"claude","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"cursor","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
`

// sheet builds a policy-enabled sheet: the access facts, an optional
// directive line ("" for none) and the rows.
func sheet(directive string, rows ...string) []byte {
	s := "# engine test sheet\n" + access
	if directive != "" {
		s += directive + "\n"
	}
	for _, r := range rows {
		s += r + "\n"
	}
	return []byte(s)
}

type backend string

const (
	memory    backend = "memory"
	jetstream backend = "jetstream"
)

// harness is one deployment: store, queue and claims on one backend, a data
// directory, a git checkout, and an Engine (Run started by run).
type harness struct {
	t       *testing.T
	backend backend
	store   events.Store
	queue   events.Queue
	claims  events.Claims
	// capacity is the deployment's capacity store; the harness, acting as
	// every provider's worker, seeds it with an eligible measured report
	// for each provider with a live quota source.
	capacity events.Capacity
	// srv is the embedded server of the jetstream backend (nil for memory).
	srv    *events.Embedded
	data   string
	repo   string
	eng    *engine.Engine
	cfg    engine.Config
	ids    atomic.Int64
	prefix string
	// taken counts the jobs nextJob took, per subject.
	taken map[string]int
	// sentinels numbers noJob's sentinel jobs.
	sentinels int
}

type option func(*harness, *engine.Config)

// withIDs makes run and execution ids deterministic: <prefix>-0001, …
func withIDs(prefix string) option {
	return func(h *harness, c *engine.Config) {
		h.prefix = prefix
		c.NewID = func() string { return fmt.Sprintf("%s-%04d", prefix, h.ids.Add(1)) }
	}
}

// withDataDir uses dir as the data directory.
func withDataDir(dir string) option { return func(h *harness, c *engine.Config) { c.DataDir = dir } }

// withRepo uses dir as the runs' checkout.
func withRepo(dir string) option { return func(h *harness, c *engine.Config) { h.repo = dir } }

// withCancelGrace sets Config.CancelGrace.
func withCancelGrace(d time.Duration) option {
	return func(h *harness, c *engine.Config) { c.CancelGrace = d }
}

// withEligibilityWait sets Config.EligibilityWait.
func withEligibilityWait(d time.Duration) option {
	return func(h *harness, c *engine.Config) { c.EligibilityWait = d }
}

// liveQuotaProviders are the sheet providers whose spec has a live quota
// source: the gate needs a current report for each before it launches them.
func liveQuotaProviders() []policy.Provider {
	var out []policy.Provider
	for _, p := range policy.Providers {
		if s, err := providers.Lookup(p); err == nil && s.QuotaSource != policy.QuotaUnsupported {
			out = append(out, p)
		}
	}
	return out
}

// eligibleReport is a measured, eligible capacity report of p acquired at
// at: a 5-hour window at 12 %, and for codex an eligible eligibility report.
func eligibleReport(p policy.Provider, at time.Time) policy.CapacityReport {
	spec, err := providers.Lookup(p)
	if err != nil {
		panic(err)
	}
	used, minutes := 12.0, 300
	r := policy.CapacityReport{
		SchemaVersion: policy.CapacitySchemaVersion, Provider: p,
		Snapshot: policy.CapacitySnapshot{
			SchemaVersion: policy.CapacitySchemaVersion, Provider: p, Source: spec.QuotaSource, State: policy.CapacityMeasured,
			Windows: []policy.CapacityWindow{{Name: "5h", UsedPercent: &used, WindowMinutes: &minutes}}, AcquiredAt: at,
		},
	}
	if p == policy.Codex {
		r.Eligibility = &policy.ExecutionEligibility{SchemaVersion: policy.EligibilitySchemaVersion, Provider: p,
			State: policy.EligibilityEligible, ObservedAt: at}
	}
	return r
}

// seeded puts into c an eligible measured report, acquired now, for every
// provider with a live quota source, as the workers of a healthy
// deployment keep them: existing tests launch exactly as before the gate.
func seeded(t testing.TB, c events.Capacity) events.Capacity {
	t.Helper()
	now := time.Now()
	for _, p := range liveQuotaProviders() {
		require.NoError(t, c.Put(context.Background(), eligibleReport(p, now)))
	}
	return c
}

func newHarness(t *testing.T, b backend, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, backend: b, data: t.TempDir(), repo: gitRepo(t)}
	switch b {
	case memory:
		h.store, h.queue, h.claims = events.NewMemoryStore(), events.NewMemoryQueue(), events.NewMemoryClaims(nil)
		h.capacity = seeded(t, events.NewMemoryCapacity())
	case jetstream:
		srv := eventstest.StartServer(t, eventstest.WithFsync(events.FsyncInterval))
		js := eventstest.Open(t, srv, events.JetStreamConfig{})
		h.store, h.queue, h.claims = js.Store(), js.Queue(), js.Claims()
		h.capacity = seeded(t, js.Capacity())
		h.srv = srv
	}
	h.cfg = engine.Config{
		Store: h.store, Queue: h.queue, Claims: h.claims, DataDir: h.data, NativePoll: 200 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		Capacity: h.capacity,
	}
	for _, o := range opts {
		o(h, &h.cfg)
	}
	h.data = h.cfg.DataDir
	eng, err := engine.New(h.cfg)
	require.NoError(t, err)
	h.eng = eng
	return h
}

// run starts the engine's Run until the end of the test (or the returned
// stop).
func (h *harness) run() (stop func()) { return h.runEngine(h.eng) }

// runEngine runs eng until the end of the test (or the returned stop).
func (h *harness) runEngine(eng *engine.Engine) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			require.NoError(h.t, err)
		case <-time.After(waitTimeout):
			h.t.Fatal("engine Run did not return")
		}
	}
	h.t.Cleanup(stop)
	return stop
}

// submit starts a run of role on sheet and returns its id.
func (h *harness) submit(sheetBytes []byte, role string, mode policy.Access) string {
	h.t.Helper()
	return h.submitUnrestricted(sheetBytes, role, mode)
}

// submitUnrestricted is submit with the run's unverified-containment
// allowance for unrestricted (run --allow-unverified-containment): the
// writer tests that fall back to cursor (UNVERIFIED writer containment)
// name it, since without it cursor's writer fails closed at launch.
func (h *harness) submitUnrestricted(sheetBytes []byte, role string, mode policy.Access, unrestricted ...policy.Provider) string {
	h.t.Helper()
	id, err := h.eng.Submit(context.Background(), engine.RunRequest{
		Sheet: sheetBytes, Role: role, Parent: policy.ParentClaude, Mode: mode,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: h.repo, Timeout: time.Minute,
		AllowUnverifiedContainment: unrestricted,
	})
	require.NoError(h.t, err)
	return id
}

// waitRun watches run's log until cond holds for the run folded so far,
// and returns that fold and the envelopes.
func (h *harness) waitRun(run string, what string, cond func(r *machines.Run, envs []events.Envelope) bool) (*machines.Run, []events.Envelope) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ch, err := h.store.Watch(ctx, run, 0)
	require.NoError(h.t, err)
	r := &machines.Run{}
	var envs []events.Envelope
	for env := range ch {
		require.NoError(h.t, r.Apply(env), "log folds")
		envs = append(envs, env)
		if cond(r, envs) {
			return r, envs
		}
	}
	h.t.Fatalf("run %s: timed out waiting for %s; log:\n%s", run, what, dump(envs))
	return nil, nil
}

// waitLane waits until lane is in state.
func (h *harness) waitLane(run string, lane int, state machines.State) *machines.Run {
	h.t.Helper()
	r, _ := h.waitRun(run, fmt.Sprintf("lane %d %s", lane, state), func(r *machines.Run, _ []events.Envelope) bool {
		return len(r.Lanes) > lane && r.Lanes[lane].State == state
	})
	return r
}

// waitFinal waits for run-final.
func (h *harness) waitFinal(run string) (*machines.Run, []events.Envelope) {
	h.t.Helper()
	return h.waitRun(run, "run-final", func(r *machines.Run, _ []events.Envelope) bool { return r.Closed != nil })
}

// waitType waits until the run's log holds n events of type typ, on any
// subject.
func (h *harness) waitType(run string, typ events.Type, n int) []events.Envelope {
	h.t.Helper()
	_, envs := h.waitRun(run, fmt.Sprintf("%d %s", n, typ), func(_ *machines.Run, envs []events.Envelope) bool {
		return len(ofType(envs, typ)) >= n
	})
	return envs
}

// verifyReplay asserts Replay reproduces every decision of run.
func (h *harness) verifyReplay(run string) engine.ReplayResult {
	h.t.Helper()
	res, err := engine.Replay(context.Background(), h.store, run, policy.DefaultOptions())
	require.NoError(h.t, err)
	require.True(h.t, res.Verified, "replay: %s", res.Text())
	require.NotZero(h.t, res.Decisions)
	return res
}

// nextJob takes the next job queued on subject (acknowledging it).
func (h *harness) nextJob(subject string) events.Job {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cons, err := h.queue.Jobs(ctx, subject, events.JobOptions{})
	require.NoError(h.t, err)
	d, err := cons.Next(ctx)
	require.NoError(h.t, err, "a job on %s", subject)
	require.NoError(h.t, d.Ack(ctx))
	if h.taken == nil {
		h.taken = map[string]int{}
	}
	h.taken[subject]++
	return d.Job
}

// noJob asserts that run has no job on subject beyond those nextJob took,
// without guessing a quiet period. The caller has first waited for the
// engine to settle (run-final, or a lane waiting for a verdict). The
// engine publishes a job only after recording its launch or continue
// event, so the log must name no more jobs on subject than were taken; and
// a sentinel job published now must be the next one delivered on subject,
// since any job published before it would come first.
func (h *harness) noJob(run, subject string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	envs, err := h.store.LoadRun(ctx, run)
	require.NoError(h.t, err)
	launched := 0
	for _, e := range envs {
		switch p := e.Payload.(type) {
		case events.Launch:
			launched += btoi(p.JobSubject == subject)
		case events.Continue:
			launched += btoi(p.JobSubject == subject)
		}
	}
	require.Equal(h.t, h.taken[subject], launched, "jobs the log launched on %s versus jobs taken:\n%s", subject, dump(envs))

	h.sentinels++
	sentinel := eventstest.SampleJob(run, 0, fmt.Sprintf("sentinel-%d", h.sentinels))
	require.NoError(h.t, h.queue.PublishJob(ctx, subject, sentinel))
	cons, err := h.queue.Jobs(ctx, subject, events.JobOptions{})
	require.NoError(h.t, err)
	d, err := cons.Next(ctx)
	require.NoError(h.t, err, "the sentinel job on %s", subject)
	require.NoError(h.t, d.Ack(ctx))
	require.Equal(h.t, sentinel.ExecutionID, d.Job.ExecutionID, "unexpected job on %s: %+v", subject, d.Job)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// report publishes a worker report for job.
func (h *harness) report(job events.Job, kind events.ReportKind, mut ...func(*events.Report)) uint64 {
	h.t.Helper()
	r := events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: kind, WorkerID: "test-worker", Time: time.Now()}
	switch kind {
	case events.ReportClaimed:
		r.Lease = &events.LeaseInfo{TTLMs: 30_000, Revision: 1}
	case events.ReportFinished:
		b, err := os.ReadFile(job.Paths.Receipt)
		require.NoError(h.t, err, "receipt of %s", job.ExecutionID)
		r.ReceiptPath, r.ReceiptDigest = job.Paths.Receipt, events.Digest(b)
	}
	for _, m := range mut {
		m(&r)
	}
	seq, err := h.queue.PublishReport(context.Background(), r)
	require.NoError(h.t, err)
	return seq
}

// execute runs job with the real runner against the simulated provider CLI
// replaying scenario, as a worker would, writing its receipt.
func (h *harness) execute(job events.Job, scenario string) {
	h.t.Helper()
	bin := simenv.Install(h.t, "", simenv.Scenarios(map[string]string{string(job.Provider): scenario}))
	home := filepath.Join(h.t.TempDir(), "home")
	require.NoError(h.t, os.Mkdir(home, 0o755))
	r, err := runner.New(runner.Config{
		Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"},
		Stdout: discard{}, Stderr: discard{},
	})
	require.NoError(h.t, err)
	r.Main(context.Background(), runnerArgs(job))
	_, err = os.Stat(job.Paths.Receipt)
	require.NoError(h.t, err, "the runner wrote a receipt")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// runnerArgs is the runner command line a worker builds for job.
func runnerArgs(j events.Job) []string {
	args := []string{
		"--parent=" + string(j.Parent), "--provider=" + string(j.Provider), "--model=" + j.Model,
		"--effort=" + string(j.Effort), "--mode=" + string(j.Mode), "--prompt=" + j.Paths.Prompt,
		"--cwd=" + j.Paths.Cwd, "--output=" + j.Paths.Output, "--receipt=" + j.Paths.Receipt,
		"--progress=" + j.Paths.Progress, "--execution-id=" + j.ExecutionID, "--contract=" + string(j.Contract),
	}
	if j.APISpend == policy.APISpendDeny || j.APISpend == policy.APISpendApproved {
		args = append(args, "--api-spend="+string(j.APISpend))
	}
	if j.TimeoutMs > 0 {
		args = append(args, "--timeout="+strconv.FormatInt(j.TimeoutMs/1000, 10))
	}
	if j.AllowUnverifiedContainment {
		args = append(args, "--allow-unverified-containment")
	}
	if j.OpenCodeChatGPTSubscription {
		args = append(args, "--opencode-chatgpt-subscription")
	}
	return args
}

// gitRepo is a fresh git checkout with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# fixture\n"), 0o644))
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "README.md"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return dir
}

// ofType filters envs by type.
func ofType(envs []events.Envelope, t events.Type) []events.Envelope {
	var out []events.Envelope
	for _, e := range envs {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// onLane filters envs by lane.
func onLane(envs []events.Envelope, lane int) []events.Envelope {
	var out []events.Envelope
	for _, e := range envs {
		if e.Lane == lane {
			out = append(out, e)
		}
	}
	return out
}

// types lists envs' types.
func types(envs []events.Envelope) []events.Type {
	out := make([]events.Type, len(envs))
	for i, e := range envs {
		out[i] = e.Type
	}
	return out
}

// dump renders a log for failure messages.
func dump(envs []events.Envelope) string {
	s := ""
	for _, e := range envs {
		b, _ := events.Encode(e)
		s += string(b) + "\n"
	}
	return s
}

// jsonOf is v's JSON.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// submitOneLane submits a one-lane read-only run (codex, then nothing) and
// takes its job, as a worker would.
func (h *harness) submitOneLane() (string, events.Job) {
	h.t.Helper()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high"), "bug-fix", policy.ReadOnly)
	return run, h.nextJob(events.JobSubject("codex"))
}

// startEngine runs another Engine on h's configuration until the returned
// stop (or the end of the test).
func (h *harness) startEngine() (stop func()) {
	h.t.Helper()
	eng, err := engine.New(h.cfg)
	require.NoError(h.t, err)
	return h.runEngine(eng)
}
