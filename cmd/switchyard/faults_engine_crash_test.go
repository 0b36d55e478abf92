package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// The engine crash test: `switchyard serve` (the engine and the embedded
// JetStream server in one process) is killed with SIGKILL while runs are in
// flight and restarted on the same data directory, with `switchyard
// worker` processes and a waiting `switchyard run` client staying up
// across every kill (their NATS connections reconnect to the same URL).
//
// Providers: grok and devin, because their simulated CLIs' argv carries a
// path inside the execution's directory (--prompt-file), which is what
// lets the invocation log prove that no execution id was started twice.
// Codex reads its prompt on stdin and its argv names no execution.

// crashSheet resolves "swarm workers" into seats: grok replays a slow
// success (1.5 s), devin reports usage exhaustion, so lanes complete on
// grok, fall back from devin to grok, or stop once the run's devin group is
// exhausted, and the group-exhausted event is shared across lanes.
func crashSheet(seats int) string {
	base := []string{
		"grok:grok-4.7@xhigh",
		"devin:swe-2@high -> grok:grok-4.7@high",
		"grok:grok-4.7@high -> devin:swe-2@high",
		"devin:swe-2@max",
	}
	var row []string
	for i := range seats {
		row = append(row, base[i%len(base)])
	}
	return `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
swarm workers: ` + strings.Join(row, ", ") + "\n"
}

const crashRole = "swarm workers"

// crashPlan is one crash test: how many runs of how many lanes, who
// submits them, and when serve is killed.
type crashPlan struct {
	runs, seats int
	workers     int
	concurrency int
	// kills are the kill triggers, in order; each waits for its moment
	// through the client's recorded view.
	kills []crashTrigger
	// submitAfterKill[i] lists runs submitted by the engine client right
	// before kill i's trigger (kill 0's are submitted and killed at once).
	limit time.Duration
}

// crashTrigger waits for its moment, possibly submitting runs first.
type crashTrigger struct {
	name string
	wait func(t *testing.T, h *crashHarness)
}

// crashHarness is a crash test in progress.
type crashHarness struct {
	w       *faultWorld
	c       *faultClient
	serve   *faultProc
	runs    []string
	nextRun int
	plan    crashPlan
	kills   []faultKill
	started time.Time
}

// crashCounts is what a crash test found, for docs/GUARANTEES.md.
type crashCounts struct {
	Runs, Lanes, Kills, Executions, Workloads int
	DoubleLaunches, LostEvents, Duplicates    int
	Events                                    int
	Phases                                    killPhases // summed over kills
	// Orphans are execution directories prepared but never launched: the
	// engine died between preparing an attempt's files and recording its
	// launch (the "before a launch is recorded" point), and the restarted
	// engine decided again under a fresh execution id; the engine removes
	// them before run-final.
	Orphans    int
	MaxRestart time.Duration
	Wall       time.Duration
}

// submit records a new run through the engine client (Submit only appends
// run-created; the serve's engine picks it up).
func (h *crashHarness) submit(t *testing.T) string {
	t.Helper()
	id := fmt.Sprintf("crash-%02d", h.nextRun)
	h.nextRun++
	sheet, err := os.ReadFile(h.w.sheet)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = h.c.eng.Submit(ctx, engine.RunRequest{RunID: id, Sheet: sheet, Role: crashRole,
		Parent: policy.ParentClaude, Mode: policy.ReadOnly, PromptPath: h.w.prompt, Cwd: h.w.checkout})
	require.NoError(t, err, "submit %s", id)
	h.runs = append(h.runs, id)
	return id
}

// kill SIGKILLs serve, then starts a new one on the same directory and
// port.
func (h *crashHarness) kill(t *testing.T, trigger string) {
	t.Helper()
	at := time.Now()
	h.serve.kill9(t)
	n := len(h.kills) + 1
	h.serve = h.w.startServe(fmt.Sprintf("serve-%d", n+1))
	h.kills = append(h.kills, faultKill{Trigger: trigger, At: at, Restart: time.Since(at)})
	t.Logf("kill %d (%s): serve restarted in %s", n, trigger, time.Since(at).Round(time.Millisecond))
}

// Standard triggers.

// killOnSubmit submits a run and kills at once: the run-created is
// acknowledged and the engine has had next to no time to record launches
// (an execution directory prepared but never launched is possible, and is
// the "before a launch is recorded" point).
func killOnSubmit() crashTrigger {
	return crashTrigger{"run submitted, launches not yet recorded", func(t *testing.T, h *crashHarness) { h.submit(t) }}
}

// killWhenLaunchedAndRunning waits for attempts running while others are
// queued (launched, not yet claimed: more lanes than worker slots).
func killWhenLaunchedAndRunning() crashTrigger {
	return crashTrigger{"attempts running and launches queued", func(t *testing.T, h *crashHarness) {
		h.c.waitUntil(h.plan.limit, "a running lane and a launched, unclaimed one", func(v *faultView) bool {
			n := v.lanes()
			return n[machines.StateRunning] > 0 && n[machines.StateLaunching] > 0
		})
	}}
}

// killOnQueuedReport waits until a report is stored that the log does not
// record yet.
func killOnQueuedReport() crashTrigger {
	return crashTrigger{"a report stored, not yet recorded", func(t *testing.T, h *crashHarness) {
		h.c.waitUntil(h.plan.limit, "a stored report not yet applied", func(v *faultView) bool { return v.unappliedReport() })
	}}
}

// killWhenHalfFinal waits until half the lanes submitted so far are final.
func killWhenHalfFinal() crashTrigger {
	return crashTrigger{"half the lanes final", func(t *testing.T, h *crashHarness) {
		total := len(h.runs) * h.plan.seats
		h.c.waitUntil(h.plan.limit, "half the lanes final", func(v *faultView) bool {
			final := 0
			for s, n := range v.lanes() {
				if s.Final() {
					final += n
				}
			}
			return 2*final >= total
		})
	}}
}

// submitThen submits a run, then waits for tr.
func submitThen(tr crashTrigger) crashTrigger {
	return crashTrigger{tr.name + " (after a new run)", func(t *testing.T, h *crashHarness) {
		h.submit(t)
		tr.wait(t, h)
	}}
}

// runCrashPlan runs plan and checks every guarantee; it returns the counts.
func runCrashPlan(t *testing.T, plan crashPlan) crashCounts {
	t.Helper()
	start := time.Now()
	w := newFaultWorld(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"grok":  {Scenario: "slow-success"},
		"devin": {Scenario: "usage-exhausted"},
	}}, crashSheet(plan.seats))
	h := &crashHarness{w: w, plan: plan, started: start}
	h.serve = w.startServe("serve-1")
	for i := range plan.workers {
		w.startWorker(fmt.Sprintf("worker-%d", i+1), "grok,devin", plan.concurrency)
	}
	h.c = connectFaultClient(t, w.url, w.data)

	// One run is submitted by a waiting `switchyard run --nats` client,
	// which must ride out every kill and print the final report.
	cliRun := "crash-cli"
	runCLI := w.start("run-cli", w.runArgs(cliRun, crashRole)...)
	h.runs = append(h.runs, cliRun)
	h.c.waitUntil(plan.limit, "the CLI's run-created", func(v *faultView) bool { return v.c.runs[cliRun] != nil })

	for _, k := range plan.kills {
		k.wait(t, h)
		h.kill(t, k.name)
	}
	for len(h.runs) < plan.runs {
		h.submit(t)
	}
	h.c.waitUntil(plan.limit, "every run final", func(v *faultView) bool { return v.final(h.runs...) })

	// The waiting CLI client saw the run through.
	select {
	case <-runCLI.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("switchyard run did not exit after its run was final:\n%s", tail(runCLI.output(), 4000))
	}
	require.Zero(t, runCLI.cmd.ProcessState.ExitCode(), "switchyard run:\n%s", tail(runCLI.output(), 4000))
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(runCLI.stdoutText()), &rep), "run --json report:\n%s", tail(runCLI.output(), 4000))
	require.True(t, rep.Final)
	require.Equal(t, cliRun, rep.Run)

	counts := checkCrashOutcome(t, h)
	counts.Wall = time.Since(start)
	return counts
}

// checkCrashOutcome asserts the guarantees on the final state and returns
// the counts.
func checkCrashOutcome(t *testing.T, h *crashHarness) crashCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store := h.c.js.Store()
	counts := crashCounts{Runs: len(h.runs), Kills: len(h.kills)}
	// What the recorder saw, taken before the logs are loaded: an event
	// appended after the load (an audit of a report that reaches a final
	// run, such as a redelivered job) would otherwise look lost.
	seen := h.c.snapshotSeen()

	logs := map[string][]events.Envelope{}
	stored := map[uint64][]byte{}
	launches := map[string]int{} // execution → launch events
	claims := map[string]int{}
	finishes := map[string]int{}
	for _, run := range h.runs {
		envs, err := store.LoadRun(ctx, run)
		require.NoError(t, err)
		logs[run] = envs
		counts.Events += len(envs)
		r, err := machines.FoldRun(envs)
		require.NoError(t, err, "run %s folds", run)
		require.NotNil(t, r.Closed, "run %s is final", run)
		finals := map[int]int{}
		runFinals := 0
		for _, env := range envs {
			b, err := events.Encode(env)
			require.NoError(t, err)
			stored[env.Seq] = b
			switch p := env.Payload.(type) {
			case events.Launch:
				launches[p.ExecutionID]++
			case events.Continue:
				launches[p.ExecutionID]++
			case events.Claim:
				claims[p.ExecutionID]++
			case events.Finish:
				finishes[p.ExecutionID]++
			case events.Complete, events.Stop:
				finals[env.Lane]++
			case events.Cancel:
				if env.Lane != events.RunLane {
					finals[env.Lane]++
				}
			case events.RunFinal:
				runFinals++
			}
		}
		require.Equal(t, 1, runFinals, "run %s: one run-final", run)
		for i, l := range r.Lanes {
			counts.Lanes++
			require.True(t, l.State.Final(), "run %s lane %d final, is %s", run, i, l.State)
			require.Equal(t, 1, finals[i], "run %s lane %d: exactly one final transition", run, i)
		}

		code, stdout, stderr := h.w.cli(60*time.Second, "replay", "--nats", h.w.url, "--data-dir", h.w.data, "--run", run, "--verify")
		require.Zero(t, code, "replay --verify %s:\n%s%s", run, stdout, stderr)
		require.Contains(t, stdout, "verified")
	}

	// No execution launched, claimed or finished twice in the log.
	for id, n := range launches {
		if n != 1 {
			counts.Duplicates++
			t.Errorf("execution %s launched %d times in the log", id, n)
		}
	}
	for kind, m := range map[string]map[string]int{"claimed": claims, "finished": finishes} {
		for id, n := range m {
			if n != 1 {
				counts.Duplicates++
				t.Errorf("execution %s %s %d times in the log", id, kind, n)
			}
		}
	}
	counts.Executions = len(launches)

	// No execution id started twice, and every start is a claimed
	// execution of the log.
	workloads := workloadsByExecution(t, h.w.bin)
	for id, n := range workloads {
		counts.Workloads += n
		if n != 1 {
			counts.DoubleLaunches++
			t.Errorf("execution %s was started %d times", id, n)
		}
		if claims[id] != 1 {
			t.Errorf("execution %s started but its claim is not in the log", id)
		}
	}
	for id := range claims {
		require.Contains(t, workloads, id, "claimed execution %s has a receipt-backed start", id)
	}

	// Every event anyone saw acknowledged is still stored, unchanged.
	for seq, b := range seen {
		got, ok := stored[seq]
		switch {
		case !ok:
			counts.LostEvents++
			t.Errorf("event %d seen before a kill is missing after restart: %s", seq, b)
		case string(got) != string(b):
			counts.LostEvents++
			t.Errorf("event %d changed across restarts:\nseen   %s\nstored %s", seq, b, got)
		}
	}

	// Where each kill landed.
	for i, k := range h.kills {
		p := phasesAt(t, logs, h.c.reportsSeenBefore(k.At), k.At)
		t.Logf("kill %d (%s): %s", i+1, k.Trigger, p)
		counts.Phases.Created += p.Created
		counts.Phases.Launching += p.Launching
		counts.Phases.Running += p.Running
		counts.Phases.QueuedReports += p.QueuedReports
		counts.Phases.Final += p.Final
		counts.MaxRestart = max(counts.MaxRestart, k.Restart)
	}
	// Execution directories prepared but never launched: the engine died
	// between preparing files and recording the launch, and the restarted
	// engine decided again under a fresh execution id. Each is removed
	// before its run's run-final (counted from the serves' logs), so none
	// is left now.
	for _, run := range h.runs {
		dirs, _ := filepath.Glob(filepath.Join(h.w.data, "runs", run, "L*", "*"))
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && launches[filepath.Base(d)] == 0 {
				t.Errorf("execution directory %s was never launched and is still there after run-final", d)
			}
		}
	}
	counts.Orphans = h.w.logCount("serve", "removed an execution directory prepared but never launched")
	t.Logf("prepared executions never launched (removed before run-final): %d", counts.Orphans)
	return counts
}

// TestFaultsEngineCrash kills `switchyard serve` with SIGKILL four times
// while three runs (12 lanes) are in flight on two worker processes:
// right after a run is submitted (before its launches are recorded), while
// attempts run and launched jobs wait for a worker slot, when a worker's
// report is stored but not yet recorded, and when half the lanes are final;
// each time serve restarts on the same data directory and port. It proves:
// every lane reaches exactly one final state and every run one run-final;
// the simulated CLIs' invocation log shows no execution started twice (and
// every start is a claimed execution of the log); no launch, claim or finish
// is recorded twice; every event the test's own client saw before a kill is
// stored unchanged after it; `replay --verify` passes on every run; and a
// `switchyard run --nats` client waiting across the kills prints the final
// report and exits 0.
func TestFaultsEngineCrash(t *testing.T) {
	t.Parallel()
	plan := crashPlan{
		runs: 5, seats: 10, workers: 2, concurrency: 3, limit: 90 * time.Second,
		kills: []crashTrigger{
			killOnSubmit(),
			killWhenLaunchedAndRunning(),
			submitThen(killOnQueuedReport()),
			killWhenHalfFinal(),
		},
	}
	c := runCrashPlan(t, plan)
	t.Logf("crash: runs=%d lanes=%d kills=%d executions=%d starts=%d events=%d double-launches=%d lost-events=%d duplicates=%d prepared-never-launched=%d max-restart=%s wall=%s phases{%s}",
		c.Runs, c.Lanes, c.Kills, c.Executions, c.Workloads, c.Events, c.DoubleLaunches, c.LostEvents, c.Duplicates, c.Orphans,
		c.MaxRestart.Round(time.Millisecond), c.Wall.Round(time.Millisecond), c.Phases)
	require.Equal(t, 5*10, c.Lanes)
	require.Zero(t, c.DoubleLaunches)
	require.Zero(t, c.LostEvents)
	require.Zero(t, c.Duplicates)
	require.NotZero(t, c.Phases.Running, "a kill landed while attempts ran")
	require.NotZero(t, c.Phases.Launching, "a kill landed between launch and claim")
}
