package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// End-to-end: a real embedded JetStream, the engine, an in-process
// activities.Worker, the real runner and the simulated provider CLIs.

// startWorker runs a worker for the providers in scenarios (provider →
// scenario) until the end of the test, and returns its simulators' bin
// directory.
func (h *harness) startWorker(scenarios map[string]string) string {
	h.t.Helper()
	return h.startWorkerConfig(simenv.Scenarios(scenarios))
}

// startWorkerConfig is startWorker for a full simulator configuration
// (scenario queues), for the providers it names.
func (h *harness) startWorkerConfig(cfg simenv.Config) string {
	h.t.Helper()
	cfg.HangCapSeconds = 60
	bin := simenv.Install(h.t, "", cfg)
	home := filepath.Join(h.t.TempDir(), "home")
	require.NoError(h.t, os.Mkdir(home, 0o755))
	var providers []policy.Provider
	for p := range cfg.Providers {
		providers = append(providers, policy.Provider(p))
	}
	w, err := activities.NewWorker(activities.WorkerConfig{
		Queue: h.queue, Claims: h.claims, Store: h.store, Providers: providers,
		LeaseTTL: 3 * time.Second, AckWait: 5 * time.Second, ShutdownGrace: 5 * time.Second,
		Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"},
		Logger: slog.New(slog.NewTextHandler(h.t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", "worker"),
		RunnerConfig: func(events.Job) runner.Config {
			return runner.Config{KillGrace: 500 * time.Millisecond}
		},
	})
	require.NoError(h.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(h.t, w.Run(ctx)) })
	h.t.Cleanup(func() { cancel(); wg.Wait() })
	return bin
}

// wait follows run to run-final with Wait and returns the report and the
// lane changes.
func (h *harness) wait(run string) (engine.RunReport, []engine.LaneChange) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var changes []engine.LaneChange
	rep, err := h.eng.Wait(ctx, run, func(c engine.LaneChange) { changes = append(changes, c) })
	require.NoError(h.t, err)
	require.True(h.t, rep.Final)
	return rep, changes
}

// workloads counts the workload processes the simulators started for
// provider.
func workloads(t *testing.T, bin, provider string) int {
	t.Helper()
	return len(simlog.Filter(simenv.Invocations(t, bin), provider, "workload"))
}

// TestE2ESingleLaneCompletes: one lane, one worker, one complete attempt.
func TestE2ESingleLaneCompletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	h.run()
	bin := h.startWorker(map[string]string{"codex": "success"})
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	rep, changes := h.wait(run)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	require.Equal(t, "codex:gpt-5.6-sol@high", rep.Lanes[0].Success)
	require.Len(t, rep.Lanes[0].Attempts, 1)
	require.Equal(t, policy.StatusComplete, rep.Lanes[0].Attempts[0].ReceiptStatus)
	require.FileExists(t, rep.Lanes[0].Attempts[0].Output)
	require.Equal(t, []machines.State{machines.StateLaunching, machines.StateRunning, machines.StateTerminal, machines.StateComplete}, toStates(changes))
	require.Equal(t, 1, workloads(t, bin, "codex"))
	h.verifyReplay(run)
}

// TestE2EUsageExhaustionFallsBackAcrossLanes: lane 0's codex primary is
// usage-exhausted and falls back to cursor; lane 1's native primary is
// reported exhausted by the parent afterwards, and lane 1 then skips its
// codex attempt (exhausted by lane 0) and completes on cursor.
func TestE2EUsageExhaustionFallsBackAcrossLanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	bin := h.startWorker(map[string]string{"codex": "usage-exhausted", "cursor": "success"})
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default, claude:opus@max -> codex:gpt-5.6-sol@max -> cursor:composer-2.5@default"),
		"arena runners", policy.ReadOnly)
	h.waitType(run, events.TypeGroupExhausted, 1)
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, engine.WaitNative, st.Lanes[1].WaitingFor)

	job, err := h.eng.NativeNext(ctx, policy.ParentClaude, true)
	require.NoError(t, err)
	require.NotNil(t, job)
	require.Equal(t, 1, job.Lane)
	require.Equal(t, "claude:opus@max", job.Descriptor)
	none, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
	require.NoError(t, err)
	require.Nil(t, none, "a native job is handed out once")
	h.waitLane(run, 1, machines.StateRunning)
	started := true
	require.NoError(t, h.eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeUsageExhausted, &started, "tool-envelope capacity failure"))

	rep, changes := h.wait(run)
	t.Log("\n" + rep.Text())
	for _, c := range changes {
		if c.Notice != "" {
			t.Log("notice: " + c.Notice)
		}
	}
	for i := range rep.Lanes {
		require.Equal(t, machines.StateComplete, rep.Lanes[i].State, "lane %d", i)
		require.Equal(t, "cursor:composer-2.5@default", rep.Lanes[i].Success)
	}
	l1 := rep.Lanes[1].Attempts
	require.Len(t, l1, 3)
	require.Equal(t, policy.RouteNative, l1[0].Route)
	require.Contains(t, l1[0].Cause, "host reported usage-exhausted")
	require.True(t, l1[1].Skipped, "lane 1 honours the group lane 0 exhausted")
	require.Contains(t, l1[1].Cause, "codex usage exhausted (lane 0")
	require.Equal(t, []policy.Provider{policy.Codex, policy.Cursor, policy.Claude}, rep.Diversity.Attempted)
	require.Equal(t, []policy.Provider{policy.Cursor}, rep.Diversity.Providers)
	require.Equal(t, 1, workloads(t, bin, "codex"), "codex ran once: the skipped attempt never launched")
	require.Equal(t, 2, workloads(t, bin, "cursor"))
	h.verifyReplay(run)
}

// TestE2ERouteUnavailableNeedsFallbackPolicy: a codex that is not logged in
// is route-unavailable; the lane advances to its fallback only when the
// sheet's # fallback lists route-unavailable.
func TestE2ERouteUnavailableNeedsFallbackPolicy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorker(map[string]string{"codex": "unauthenticated", "cursor": "success"})
	row := "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"
	broad := h.submit(sheet(`# fallback: {"on":["usage-exhausted","route-unavailable"]}`, row), "bug-fix", policy.ReadOnly)
	quota := h.submit(sheet("", row), "bug-fix", policy.ReadOnly)

	rep, _ := h.wait(broad)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	require.Equal(t, policy.OutcomeRouteUnavailable, rep.Lanes[0].Attempts[0].Outcome)
	require.Equal(t, "cursor:composer-2.5@default", rep.Lanes[0].Success)

	rep, _ = h.wait(quota)
	require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
	require.Equal(t, "not-eligible: attempt 0 codex:gpt-5.6-sol@high ended route-unavailable, which # fallback does not move on from (on: usage-exhausted)",
		rep.Lanes[0].Reason, "the stop names its cause (issue 28, finding 12)")
	require.Len(t, rep.Lanes[0].Attempts, 1, "no fallback without the policy")
	h.verifyReplay(broad)
	h.verifyReplay(quota)
}

// TestE2EStartedWriterWaitsForVerdict: a writer whose started attempt was
// usage-exhausted waits for the parent's verdict; clear advances to the
// next descriptor in a fresh worktree, unsafe stops the lane.
func TestE2EStartedWriterWaitsForVerdict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorker(map[string]string{"codex": "usage-exhausted", "cursor": "success"})
	row := "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"
	clear := h.submitUnrestricted(sheet("", row), "bug-fix", policy.IsolatedWrite, policy.Cursor)
	unsafe := h.submitUnrestricted(sheet("", row), "bug-fix", policy.IsolatedWrite, policy.Cursor)
	for _, run := range []string{clear, unsafe} {
		h.waitLane(run, 0, machines.StateInspecting)
	}
	require.NoError(t, h.eng.Verdict(ctx, clear, 0, events.VerdictClear, "diff and tool log reviewed"))
	require.NoError(t, h.eng.Verdict(ctx, unsafe, 0, events.VerdictUnsafe, "wrote outside the worktree"))

	rep, changes := h.wait(clear)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	a := rep.Lanes[0].Attempts
	require.Len(t, a, 2)
	require.NotEqual(t, a[0].Worktree, a[1].Worktree)
	require.DirExists(t, a[0].Worktree, "the failed worktree is kept")
	require.Equal(t, policy.InspectionClear, a[0].Inspection.State)
	var inspectNotice bool
	for _, c := range changes {
		inspectNotice = inspectNotice || (c.Event == events.TypeInspect && c.Notice != "")
	}
	require.True(t, inspectNotice, "the pause for inspection is announced")

	rep, _ = h.wait(unsafe)
	require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
	require.Equal(t, string(policy.StopUnsafeWriter), rep.Lanes[0].Reason)
	h.verifyReplay(clear)
	h.verifyReplay(unsafe)
}

// TestE2EHandoffWaitsForParentOperation: a delivered handoff waits for the
// parent operation; its result is recorded and decided on.
func TestE2EHandoffWaitsForParentOperation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorker(map[string]string{"claude": "handoff"})
	run := h.submit(sheet("", "judgment and prose: claude:sonnet@low"), "judgment and prose", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateAwaitingOperation)
	h.operate(run, 0)
	rep, _ := h.wait(run)
	require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
	require.Equal(t, string(policy.DenyNoContinuation), rep.Lanes[0].Reason)
	require.Contains(t, rep.Lanes[0].Attempts[0].Operation, "commit-checkpoint task T-1 checkpoint C-1: succeeded")
	h.verifyReplay(run)
}

// TestE2ECancelRunningAttempt: cancelling a lane whose attempt runs (its
// CLI has started) makes the worker signal the child with SIGTERM; its
// cancelled receipt, which names the signal, is kept and recorded, and the
// lane ends cancelled without another attempt.
func TestE2ECancelRunningAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	bin := h.startWorker(map[string]string{"codex": "long-running"})
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	r := h.waitLane(run, 0, machines.StateRunning)
	receipt := r.Lanes[0].Dispatch.Paths.Receipt
	// The workload has started: the cancel reaches a running CLI.
	var started []simlog.Invocation
	require.Eventually(t, func() bool {
		started = simlog.Filter(simenv.Invocations(t, bin), "codex", simlog.KindWorkload)
		return len(started) > 0
	}, waitTimeout, 20*time.Millisecond, "the codex workload never started")
	require.NoError(t, h.eng.Cancel(ctx, run, 0, "the parent no longer needs it"))
	rep, _ := h.wait(run)
	require.Equal(t, machines.StateCancelled, rep.Lanes[0].State)
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "receipt cancelled")
	b, err := os.ReadFile(receipt)
	require.NoError(t, err)
	rc, err := policy.DecodeReceipt(b)
	require.NoError(t, err)
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.NotNil(t, rc.Signal, "the runner signalled a live child")
	require.Equal(t, "SIGTERM", *rc.Signal)
	require.Equal(t, 1, workloads(t, bin, "codex"), "exactly one workload")
	sigs := simenv.Signals(t, bin)
	require.Len(t, sigs, 1, "signals %+v", sigs)
	require.Equal(t, started[0].Pid, sigs[0].Pid, "the workload itself received the signal")
	require.Equal(t, "SIGTERM", sigs[0].Signal)
	h.verifyReplay(run)
}

func toStates(changes []engine.LaneChange) []machines.State {
	out := make([]machines.State, len(changes))
	for i, c := range changes {
		out[i] = c.To
	}
	return out
}
