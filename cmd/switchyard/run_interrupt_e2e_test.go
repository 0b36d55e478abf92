package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// interruptSheet has two grok seats that would fall back to devin. Run
// with --cap grok=1, one grok attempt runs while the other seat's job
// waits in the queue.
const interruptSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure"]}
swarm workers: grok:grok-4.7@xhigh -> devin:swe-2@high, grok:grok-4.7@high -> devin:swe-2@high
`

// runningGrok is the lane line of a grok attempt that started.
var runningGrok = regexp.MustCompile(`\(lane (\d)\): running (grok:\S+)\n`)

// interruptedLanes is what interruptRun left: the lane whose attempt ran
// (and its descriptor) and the lane whose job was queued.
type interruptedLanes struct {
	ran, queued int
	desc        string
	stderr      string
}

// interruptRun starts a self-contained run of interruptSheet (grok's
// simulated CLI hangs until signalled), waits until one lane's attempt
// runs its workload, sends SIGINT and waits for exit 130.
func interruptRun(t *testing.T, s *engineSandbox, runID string) interruptedLanes {
	t.Helper()
	return interruptRole(t, s, "swarm workers", "--run-id", runID, "--cap", "grok=1")
}

// interruptRole is interruptRun for role and extra run flags; queued is
// meaningful only for interruptSheet.
func interruptRole(t *testing.T, s *engineSandbox, role string, extra ...string) interruptedLanes {
	t.Helper()
	p := s.start(t, s.runArgs(role, extra...)...)
	var m []string
	require.NoError(t, waitFor(30*time.Second, "a running grok lane", func() (bool, error) {
		out, errOut := p.output()
		select {
		case <-p.done:
			return false, fmt.Errorf("run exited\nstdout:\n%s\nstderr:\n%s", out, errOut)
		default:
		}
		m = runningGrok.FindStringSubmatch(out)
		return m != nil, nil
	}))
	// The attempt's CLI runs its workload (its preflight is over).
	require.NoError(t, waitFor(30*time.Second, "the grok workload to start", func() (bool, error) {
		return len(grokWorkloads(t, s.bin)) == 1, nil
	}))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, exitInterrupted, waitExit(t, p, 60*time.Second))
	ran, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	_, errOut := p.output()
	return interruptedLanes{ran: ran, queued: 1 - ran, desc: m[2], stderr: errOut}
}

// statusJSON is `switchyard status --run run --json` on s.
func statusJSON(t *testing.T, s *engineSandbox, run string) engine.RunStatus {
	t.Helper()
	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	return st
}

// withScenarios is s (same data directory, checkout and sheet) with other
// simulators first on PATH, replaying scenarios: for a process started
// after an interrupt, such as the worker that resumes a run.
func withScenarios(t *testing.T, s *engineSandbox, scenarios map[string]string) *engineSandbox {
	t.Helper()
	o := *s
	o.bin = simenv.Install(t, "", simenv.Scenarios(scenarios))
	o.env = nil
	for _, kv := range s.env {
		switch {
		case strings.HasPrefix(kv, "PATH="):
			kv = "PATH=" + o.bin + ":/usr/bin:/bin"
		case strings.HasPrefix(kv, simenv.SandboxWritable+"="):
			kv = simenv.SandboxWritable + "=" + o.bin
		}
		o.env = append(o.env, kv)
	}
	return &o
}

// TestSelfContainedRunInterruptStopsAttempts (issue 28, finding 15):
// Ctrl-C of a self-contained run stops its workers first and lets its own
// engine record what they report before it stops. After the process
// exits, status shows the interrupted lane stopped with the cancelled
// receipt as its cause (not running), and the lane whose job was queued
// still queued; stderr says exactly that. A serve and a worker then resume
// the run: the queued lane runs, and the interrupted attempt never runs
// again (one grok workload for its execution, none after the resume).
func TestSelfContainedRunInterruptStopsAttempts(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "long-running"}, interruptSheet)
	got := interruptRun(t, s, "stopme")

	require.Contains(t, got.stderr, "switchyard run: interrupted; stopping this run's workers, then its engine once it has recorded how their attempts ended (up to 10s; interrupt again to stop at once)\n"+
		"switchyard run: run stopme is not final and stays stored in "+s.data+"\n")
	require.Contains(t, got.stderr, "  each running CLI was sent SIGTERM; this run's engine recorded, before it stopped:\n"+
		fmt.Sprintf("    lane %d %s: stopped (not-eligible: attempt 0 %s was stopped while it ran (receipt cancelled: ", got.ran, got.desc, got.desc))
	require.Regexp(t, fmt.Sprintf(`  not started: lane %d grok:\S+: the job stays queued and a worker starts it when the run resumes\n`, got.queued), got.stderr)
	require.Contains(t, got.stderr, "  resume it with `switchyard serve --data-dir "+s.data+"`")
	require.NotContains(t, got.stderr, "not recorded yet", "the engine recorded the stopped attempt before it stopped")

	st := statusJSON(t, s, "stopme")
	require.False(t, st.Final)
	stopped := st.Lanes[got.ran]
	require.Equal(t, machines.StateStopped, stopped.State, "the interrupted lane is recorded, not left running")
	require.Equal(t, got.desc, stopped.Descriptor, "no fallback to devin")
	require.Equal(t, policy.OutcomeFailed, stopped.Outcome)
	require.Equal(t, "not-eligible: attempt 0 "+got.desc+" was stopped while it ran (receipt cancelled: its run was interrupted, or the worker running it was stopped); it may have done work, so it is not run again and the lane does not fall back",
		stopped.Reason)
	queued := st.Lanes[got.queued]
	require.Equal(t, machines.StateLaunching, queued.State, "the queued job was not started")
	require.Equal(t, engine.WaitWorker, queued.WaitingFor)
	require.Equal(t, map[string]int{stopped.ExecutionID: 1}, workloadsByExecution(t, s.bin), "only the interrupted attempt ran")

	// Resume with a serve and a worker whose grok CLI succeeds.
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	resumed := withScenarios(t, s, map[string]string{"grok": "success"})
	worker := resumed.start(t, "worker", "--data-dir", s.data, "--provider", "grok,devin")
	r := s.run(t, 90*time.Second, "status", "--data-dir", s.data, "--run", "stopme", "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	st = statusJSON(t, s, "stopme")
	require.True(t, st.Final)
	require.Equal(t, machines.StateStopped, st.Lanes[got.ran].State)
	require.Equal(t, stopped.ExecutionID, st.Lanes[got.ran].ExecutionID, "the interrupted lane got no new execution")
	require.Equal(t, machines.StateComplete, st.Lanes[got.queued].State, "the queued job ran on resume")
	require.Equal(t, map[string]int{st.Lanes[got.queued].ExecutionID: 1}, workloadsByExecution(t, resumed.bin),
		"after the resume only the queued attempt ran: the cancelled one never again")
	require.Equal(t, map[string]int{stopped.ExecutionID: 1}, workloadsByExecution(t, s.bin))
	require.Equal(t, 0, worker.stop(t))
	require.Equal(t, 0, serve.stop(t))
}

// TestSelfContainedRunInterruptFinalNow: when the interrupted attempt was
// the run's last open lane, the engine records its stop and run-final
// before it stops; run says the run is final now and that nothing is left
// to resume (exit 130: it was interrupted before it was final), and
// status agrees.
func TestSelfContainedRunInterruptFinalNow(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "long-running"}, singleLaneSheet)
	got := interruptRole(t, s, "hillclimb", "--run-id", "last")
	require.Contains(t, got.stderr, "switchyard run: run last is final now (1 lane: 1 stopped; no provider delivered); nothing to resume; print its report with `switchyard report --run last --data-dir "+s.data+"`\n")
	require.Contains(t, got.stderr, "    lane 0 grok:grok-4.7@xhigh: stopped (not-eligible: attempt 0 grok:grok-4.7@xhigh was stopped while it ran (receipt cancelled: ")
	require.NotContains(t, got.stderr, "resume it with")
	st := statusJSON(t, s, "last")
	require.True(t, st.Final)
	require.Equal(t, machines.StateStopped, st.Lanes[0].State)
}
