package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// The end-to-end tests of the engine commands: the real binary, a real
// embedded JetStream in a temporary data directory, and the simulated
// provider CLIs of testdata/simcli first on PATH.

// singleLaneSheet has one single-seat row on grok (which runs only with
// approved API spend, so the access fact says so).
const singleLaneSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
hillclimb: grok:grok-4.7@xhigh
`

// panelSheet3 is the demo's three-seat panel: lane 0's codex primary falls
// back to grok when codex is exhausted.
const panelSheet3 = `# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
swarm workers: codex:gpt-5.6-sol@high -> grok:grok-4.7@xhigh, grok:grok-4.7@high -> devin:swe-2@high, devin:swe-2@high -> codex:gpt-5.6-sol@medium
`

// nativeSheet has one lane that runs natively on the parent.
const nativeSheet = `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
how explorer: inherit-parent
`

func TestRunSingleLaneEndToEnd(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)

	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "single")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, `run single: role "hillclimb", 1 lane, parent claude, read-only, on the embedded server of `+s.data)
	for _, line := range []string{
		"hillclimb#1 (lane 0): launching grok:grok-4.7@xhigh",
		"hillclimb#1 (lane 0): running grok:grok-4.7@xhigh",
		"hillclimb#1 (lane 0): terminal grok:grok-4.7@xhigh (complete)",
		"hillclimb#1 (lane 0): complete grok:grok-4.7@xhigh",
	} {
		require.Contains(t, r.stdout, line+"\n")
	}
	require.Contains(t, r.stdout, "\nlane 0 hillclimb#1: complete via grok:grok-4.7@xhigh; primary grok:grok-4.7@xhigh\n")
	// The run served its data directory while it lasted and let go of it.
	_, err := os.Stat(filepath.Join(s.data, serveInfoName))
	require.True(t, os.IsNotExist(err), "serve.json left behind: %v", err)

	// status --json: the list, then the run.
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	require.Len(t, runs, 1)
	require.Equal(t, "single", runs[0].Run)
	require.True(t, runs[0].Final)

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "single", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.True(t, st.Final)
	require.Len(t, st.Lanes, 1)
	require.Equal(t, machines.StateComplete, st.Lanes[0].State)
	require.Equal(t, "grok:grok-4.7@xhigh", st.Lanes[0].Descriptor)
	require.Equal(t, policy.OutcomeComplete, st.Lanes[0].Outcome)

	// status --watch with nothing serving the data directory shows it once
	// and says why it does not wait.
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "single", "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "run single: role \"hillclimb\", parent claude, read-only, final\n"), r.stdout)
	require.Equal(t, "switchyard status: nothing serves "+s.data+", so nothing changes there; --watch follows a `switchyard serve` or a running `switchyard run`\n", r.stderr)

	// replay --verify passes; an unknown run is a usage error naming it.
	r = s.run(t, 30*time.Second, "replay", "--data-dir", s.data, "--run", "single", "--verify")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Regexp(t, `^run single: verified: \d+ events, 2 decisions and 1 outcome recomputed, no divergence\n$`, r.stdout)

	r = s.run(t, 30*time.Second, "replay", "--data-dir", s.data, "--run", "nope", "--verify", "--json")
	require.Equal(t, 64, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, `error: --run nope: no run matches "nope" in the embedded server of `+s.data+"; list runs with `switchyard status --data-dir "+s.data+"`\n"+
		"Run 'switchyard replay --help' for usage and examples.\n", r.stderr)

	// The same run id again is refused, naming it.
	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "single")...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "single")
}

// TestRunExhaustionFallsBack: an exhaustion found only when the attempt
// runs falls back to the next attempt. The simulated codex account looks
// fine before launch (its app-server answers eligible, so the gate lets
// codex run) and runs out during the attempt, the case runtime fallback
// exists for; an account the app-server already reports exhausted is
// excluded before launch instead (TestUsageStatusAndExclusionAgree).
func TestRunExhaustionFallsBack(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "usage-exhausted"}, panelSheet3)

	r := s.run(t, 60*time.Second, s.runArgs("swarm workers", "--run-id", "panel", "--json")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	// Lane lines go to stderr under --json; stdout is the report alone.
	require.Contains(t, r.stderr, "swarm workers#1 (lane 0): terminal codex:gpt-5.6-sol@high (usage-exhausted)\n")
	require.Contains(t, r.stderr, "swarm workers#1 (lane 0): launching grok:grok-4.7@xhigh\n")
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.True(t, rep.Final)
	require.Len(t, rep.Lanes, 3)
	for i, want := range []string{"grok:grok-4.7@xhigh", "grok:grok-4.7@high", "devin:swe-2@high"} {
		require.Equal(t, machines.StateComplete, rep.Lanes[i].State, "lane %d", i)
		require.Equal(t, want, rep.Lanes[i].Success, "lane %d", i)
	}
	lane0 := rep.Lanes[0]
	require.Equal(t, "codex:gpt-5.6-sol@high", lane0.Primary)
	require.Len(t, lane0.Attempts, 2)
	require.Equal(t, policy.OutcomeUsageExhausted, lane0.Attempts[0].Outcome)
	require.Contains(t, lane0.Attempts[0].Cause, "usage")
	require.Equal(t, policy.OutcomeComplete, lane0.Attempts[1].Outcome)

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "panel")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "exhausted provider groups: codex\n")

	r = s.run(t, 30*time.Second, "replay", "--data-dir", s.data, "--run", "panel", "--verify", "--json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	var res engine.ReplayResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.True(t, res.Verified)
	require.Nil(t, res.Divergence)

	// history prints the log replay just verified: every event, in order.
	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "panel", "--absolute-times")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 1+res.Events, r.stdout)
	require.Regexp(t, `^SEQ +TIME +LANE +TYPE +DETAIL$`, lines[0])
	require.Regexp(t, `^1 +\S+ +run +run-created +role "swarm workers", 3 lanes, parent claude, read-only, sheet sha256:[0-9a-f]{12}$`, lines[1])
	require.Regexp(t, `(?m)^\d+ +\S+ +run +group-exhausted +provider codex exhausted for the run \(lane 0, execution \S+\)$`, strings.Join(lines, "\n"))
	require.Regexp(t, `\n\d+ +\S+ +0 +finish +execution \S+ ended usage-exhausted, process started, reported by \S+\n`, r.stdout)
	require.Regexp(t, `run +run-final +3 lanes: 3 complete; 2 distinct providers delivered: grok, devin$`, lines[len(lines)-1])

	// --json: each event's stored form, one per line; filters by lane and type.
	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "panel", "--lane", "0", "--type", "launch,finish", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var got []string
	for line := range strings.Lines(r.stdout) {
		env, err := events.Decode([]byte(line))
		require.NoError(t, err, line)
		require.Equal(t, 0, env.Lane)
		got = append(got, string(env.Type))
	}
	require.Equal(t, []string{"launch", "finish", "launch", "finish"}, got, "codex, then its grok fallback")
	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "panel", "--lane", "run", "--type", "group-exhausted", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stdout, "\n"), r.stdout)
	require.Contains(t, r.stdout, `"type":"group-exhausted"`)
}

// TestRunNativeLaneAnsweredFromAnotherProcess: a self-contained run serves
// its data directory, so the parent's native next and native report, run
// as separate processes, reach it; run prints both commands.
func TestRunNativeLaneAnsweredFromAnotherProcess(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, nativeSheet)
	p := s.start(t, s.runArgs("how explorer", "--run-id", "native")...)
	waitOutput(t, p, "waiting for the parent: switchyard native next --parent claude --data-dir "+s.data+"\n")

	r := s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var job engine.NativeJob
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job), r.stdout)
	require.Equal(t, "native", job.Run)
	require.Equal(t, "inherit-parent", job.Descriptor)
	require.NotEmpty(t, job.ExecutionID)
	require.FileExists(t, job.Paths.Prompt)

	// Nothing else is queued.
	r = s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "no native job queued for parent claude (--wait blocks until one is)\n", r.stdout)

	waitOutput(t, p, "waiting for the parent: switchyard native report --execution "+job.ExecutionID)
	// complete with no final response at the output path is refused.
	report := []string{"native", "report", "--data-dir", s.data, "--execution", job.ExecutionID,
		"--status", "complete", "--process-started", "true", "--evidence", "host/envelope.json"}
	r = s.run(t, 30*time.Second, report...)
	require.Equal(t, 64, r.code, r.stdout)
	require.True(t, strings.HasPrefix(r.stderr, "error: status complete needs the attempt's final response at its output path "+job.Paths.Output+", and there is no such file;"), r.stderr)
	require.NoError(t, os.WriteFile(job.Paths.Output, []byte("The checkout has a README.\n"), 0o600))
	r = s.run(t, 30*time.Second, report...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "native outcome complete recorded for execution "+job.ExecutionID+"\n", r.stdout)

	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the native report")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "lane 0 how explorer#1: complete via inherit-parent")

	// A repeated report says the execution was already reported (issue
	// 28, finding 32), not that there is no such execution.
	r = s.run(t, 30*time.Second, "native", "report", "--data-dir", s.data, "--execution", job.ExecutionID, "--status", "complete")
	require.Equal(t, 64, r.code, r.stdout)
	require.True(t, strings.HasPrefix(r.stderr, "error: --execution "+job.ExecutionID+" was already reported: run native lane 0 recorded outcome complete, and nothing waits for another report; `switchyard status --run native --data-dir "+s.data+"` shows the lane now"), r.stderr)
	// One no run ever had still names no execution.
	other := "4b1d9e0c-0000-4000-8000-000000000000"
	r = s.run(t, 30*time.Second, "native", "report", "--data-dir", s.data, "--execution", other, "--status", "complete")
	require.Equal(t, 64, r.code, r.stdout)
	require.True(t, strings.HasPrefix(r.stderr, "error: --execution "+other+" names no native execution a run is waiting for"), r.stderr)

	// --wait with nothing serving the directory answers at once, and its
	// two lines agree: stderr says why it did not wait, stdout does not
	// then suggest --wait (issue 28, finding 32).
	r = s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--wait", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "switchyard native next: nothing serves "+s.data+", so no native job can arrive; not waiting (start `switchyard serve` or a `switchyard run`)\n", r.stderr)
	require.Equal(t, "no native job queued for parent claude\n", r.stdout)
}

// TestWorkerNeedsAServer: a worker never starts an embedded server or
// creates a store of its own; it says what to start instead.
func TestWorkerNeedsAServer(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	r := s.run(t, 30*time.Second, "worker", "--provider", "grok", "--data-dir", s.data)
	require.Equal(t, 1, r.code, r.stdout)
	require.Equal(t, "error: no Switchyard data in "+s.data+" and no switchyard serve for it; start `switchyard serve --data-dir "+
		s.data+"` first (it creates the store), or pass --nats URL\n", r.stderr)
	_, err := os.Stat(s.data)
	require.True(t, os.IsNotExist(err), "the worker created %s: %v", s.data, err)

	// A store nobody serves: the same advice.
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	require.Equal(t, 0, serve.stop(t))
	r = s.run(t, 30*time.Second, "worker", "--provider", "grok", "--data-dir", s.data)
	require.Equal(t, 1, r.code, r.stdout)
	require.Equal(t, "error: no switchyard serve is running for data directory "+s.data+
		"; start one with `switchyard serve --data-dir "+s.data+"`, or pass --nats URL\n", r.stderr)
}

// writerSheet: a writer lane whose grok primary fails after starting (the
// malformed scenario), which must be inspected before devin may run.
const writerSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure"]}
bug-fix: grok:grok-4.7@xhigh -> devin:swe-2@high
`

// TestRunWriterWaitsForVerdict: a started writer that failed waits for the
// parent's verdict; run prints the inspect command, and a clear verdict
// from another process lets the lane fall back. Grok and devin writers
// have UNVERIFIED containment, so the run accepts an unrestricted contract
// for them (warned about and recorded).
func TestRunWriterWaitsForVerdict(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "malformed"}, writerSheet)
	gitInit(t, s.checkout)
	p := s.start(t, s.runArgs("bug-fix", "--run-id", "writer", "--mode", "isolated-write",
		"--allow-unverified-containment", "grok", "--allow-unverified-containment", "devin")...)
	waitOutput(t, p, "  warning: --allow-unverified-containment grok,devin: attempts of grok,devin launch without verified containment")
	inspect := "switchyard inspect --run writer --lane 0 --state clear|unsafe --evidence REF [--from COMMIT|REF] --data-dir " + s.data
	waitOutput(t, p, "waiting for the parent: "+inspect+"\n")

	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "writer")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "waiting for the parent:\n  lane 0: "+inspect+"\n")

	// A ref that names no commit in the run's repository is a usage
	// error naming it; nothing is recorded.
	r = s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "writer", "--lane", "0", "--state", "clear",
		"--evidence", "notes/review.md", "--from", "refs/snapshots/missing")
	require.Equal(t, 64, r.code, r.stdout)
	require.True(t, strings.HasPrefix(r.stderr, `error: --from "refs/snapshots/missing" names no commit in `+s.checkout+
		` (git rev-parse --verify refs/snapshots/missing^{commit} fails)`), r.stderr)
	// The parent snapshots what it reviewed; the fallback writer starts there.
	snap := gitIn(t, s.checkout, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "reviewed partial work")
	gitIn(t, s.checkout, "update-ref", "refs/snapshots/lane0", snap)
	r = s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "writer", "--lane", "0", "--state", "clear",
		"--evidence", "notes/review.md", "--from", "refs/snapshots/lane0")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "verdict clear recorded for run writer lane 0; the next writer, attempt 1 devin:swe-2@high, starts from refs/snapshots/lane0\n", r.stdout)

	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the verdict")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "bug-fix#1 (lane 0): launching devin:swe-2@high\n")
	require.Contains(t, out, "inspection clear (notes/review.md)")
	require.Contains(t, out, "lane 0 bug-fix#1: complete via devin:swe-2@high;")
	require.Contains(t, out, "       worktree from the reviewed state refs/snapshots/lane0 (commit "+snap+") the parent's clear verdict named\n")
	require.Contains(t, out, "falls back to devin:swe-2@high, in a worktree of the reviewed state refs/snapshots/lane0 (commit "+snap+")\n", "the live notice says it too")
	hv := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "writer", "--lane", "0")
	require.Equal(t, 0, hv.code, hv.stderr)
	require.Contains(t, hv.stdout, "verdict clear, evidence notes/review.md; the next writer starts from refs/snapshots/lane0 (commit "+snap+")")
	require.Contains(t, hv.stdout, "devin:swe-2@high, execution ")
	require.Contains(t, hv.stdout, ", worktree from the reviewed state refs/snapshots/lane0 (commit "+snap+")\n")

	h := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "writer", "--lane", "run", "--type", "run-created", "--json")
	require.Equal(t, 0, h.code, h.stderr)
	require.Contains(t, h.stdout, `"allowUnverifiedContainment":["grok","devin"]`)
}

// TestRunWriterContainmentFailsClosed: on a host whose sandbox is
// unverified (simulated: SWITCHYARD_SANDBOX=off for serve, worker and run),
// a grok writer (no containment of its own) is excluded before launch
// with containment_unverified and the lane moves to its next route, devin,
// excluded the same way: neither CLI ever runs, and the run says why and
// how to fix it. With the sandbox on (every other test) both are contained
// by the kernel and run.
func TestRunWriterContainmentFailsClosed(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, writerSheet)
	s.env = append(s.env, "SWITCHYARD_SANDBOX=off")
	gitInit(t, s.checkout)
	r := s.run(t, 90*time.Second, s.runArgs("bug-fix", "--run-id", "contained", "--mode", "isolated-write")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "grok:grok-4.7@xhigh: excluded before launch: containment_unverified: grok: isolated-write containment is UNVERIFIED, not the required WORKSPACE_WRITE_NO_NETWORK")
	require.Contains(t, r.stdout, "devin:swe-2@high: excluded before launch: containment_unverified")
	require.Contains(t, r.stdout, "fix: unset SWITCHYARD_SANDBOX in the worker's environment, or pass --allow-unverified-containment grok")
	require.NotContains(t, r.stdout, "warning: --allow-unverified-containment")
	require.Empty(t, simlog.Filter(simenv.Invocations(t, s.bin), "grok", simlog.KindWorkload), "the grok CLI never ran its workload")
	require.Empty(t, simlog.Filter(simenv.Invocations(t, s.bin), "devin", simlog.KindWorkload))
}

// TestCancelRunningLanes: cancel of a running attempt (one lane, then the
// rest of the run) from another process; the run ends final with every
// lane cancelled and exits 0.
func TestCancelRunningLanes(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "long-running"}, `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
swarm workers: grok:grok-4.7@xhigh, grok:grok-4.7@high
`)
	p := s.start(t, s.runArgs("swarm workers", "--run-id", "cancelme")...)
	waitOutput(t, p, "swarm workers#1 (lane 0): running grok:grok-4.7@xhigh\n")
	waitOutput(t, p, "swarm workers#2 (lane 1): running grok:grok-4.7@high\n")

	r := s.run(t, 30*time.Second, "cancel", "--data-dir", s.data, "--run", "cancelme", "--lane", "0", "--reason", "superseded")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "cancel requested for run cancelme lane 0\n", r.stdout)
	waitOutput(t, p, "swarm workers#1 (lane 0): cancelled grok:grok-4.7@xhigh (superseded)\n")

	r = s.run(t, 30*time.Second, "cancel", "--data-dir", s.data, "--run", "cancelme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "cancel requested for run cancelme\n", r.stdout)

	select {
	case <-p.done:
	case <-time.After(45 * time.Second):
		t.Fatal("run did not finish after the cancels")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "swarm workers#2 (lane 1): cancelled grok:grok-4.7@high")

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "cancelme", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.True(t, st.Final)
	for _, l := range st.Lanes {
		require.Equal(t, machines.StateCancelled, l.State, "lane %d", l.Lane)
	}
	r = s.run(t, 30*time.Second, "replay", "--data-dir", s.data, "--run", "cancelme", "--verify")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}

// TestRunHandoffWaitsForOperation: a started writer that hands off a
// parent operation is inspected first (POLICY-CLI.md section 4: the writer
// gate precedes the operation rules), then waits for the operation; run
// prints each command and the result recorded from another process
// reaches the report.
func TestRunHandoffWaitsForOperation(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"claude": "handoff"}, `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["handoff"],"max":1}
bug-fix: claude:opus@high
`)
	gitInit(t, s.checkout)
	// The sandbox has no Claude login, so Claude's quota is UNKNOWN
	// (no_credentials): the run accepts that explicitly.
	args := s.runArgs("bug-fix", "--run-id", "handoff", "--mode", "isolated-write", "--allow-unknown-quota", "claude")
	args[slices.Index(args, "--parent")+1] = "codex" // a Claude parent would run opus natively
	p := s.start(t, args...)
	waitOutput(t, p, "waiting for the parent: switchyard inspect --run handoff --lane 0 --state clear|unsafe --evidence REF [--from COMMIT|REF] --data-dir "+s.data+"\n")
	r := s.run(t, 30*time.Second, "operation", "done", "--data-dir", s.data, "--run", "handoff", "--lane", "0", "--result", "succeeded", "--ref", "3f9e2c1")
	require.Equal(t, 1, r.code, "no operation before the writer's verdict: %s", r.stdout)
	r = s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "handoff", "--lane", "0", "--state", "clear", "--evidence", "notes/review.md")
	require.Equal(t, 0, r.code, r.stderr)
	// Issue 28 finding 16: the writer has one attempt and handed off an
	// operation, so no next writer exists; inspect names what follows.
	require.NotContains(t, r.stdout, "next writer")
	require.Equal(t, "verdict clear recorded for run handoff lane 0; no writer follows: the lane goes on to the commit-checkpoint the writer handed off (task T-1, checkpoint C-1); next: switchyard operation validate --run handoff --lane 0 --expected-head SHA --file PATH --check ID --data-dir "+s.data+", then operation begin with the digest it prints, then perform the operation, then operation done\n", r.stdout)
	waitOutput(t, p, "waiting for the parent: switchyard operation validate --run handoff --lane 0 --expected-head SHA --file PATH --check ID --data-dir "+s.data+", then operation begin and operation done\n")
	// The live notice names the first valid step, not operation done,
	// which is refused until the operation was validated and begun.
	waitOutput(t, p, "  notice: lane 0: claude:opus@high handed off commit-checkpoint (task T-1, checkpoint C-1); the parent validates it first: switchyard operation validate --run handoff --lane 0 --expected-head SHA --file PATH --check ID --data-dir "+s.data+", then operation begin")
	live, _ := p.output()
	require.NotContains(t, live, "records the result: switchyard operation done")

	r = s.run(t, 30*time.Second, "operation", "done", "--data-dir", s.data, "--run", "handoff", "--lane", "0", "--result", "succeeded", "--ref", "3f9e2c1")
	require.Equal(t, 65, r.code, "done without a pending operation is refused: %s", r.stdout)
	require.Contains(t, r.stderr, "has no pending operation")
	commit := s.operateCLI(t, "handoff", 0)

	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the operation result")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "bug-fix#1 (lane 0): awaiting-operation claude:opus@high\n")
	require.Contains(t, out, ": succeeded ("+commit+")")
	// Issue 28 finding 17: the committed handoff is what the lane
	// delivered, under # continuation max 1 (exhausted-allowance).
	require.Contains(t, out, "bug-fix#1 (lane 0): handed-off claude:opus@high (commit "+commit[:12]+", then exhausted-allowance)\n")
	require.Contains(t, out, "lane 0 bug-fix#1: handed-off commit "+commit+", then stopped: # continuation's max executions were used (recorded reason exhausted-allowance)")
	require.NotContains(t, out, "no provider delivered")

	// The lane waits for nothing now: a second answer says so.
	r = s.run(t, 30*time.Second, "operation", "done", "--data-dir", s.data, "--run", "handoff", "--lane", "0", "--result", "failed")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "run handoff lane 0 is ")
}

// TestRunHandoffContinuesAfterRecover: under # continuation for handoffs,
// a writer whose handoff operation succeeded waits for the parent's
// recovery; run prints the recover command; `switchyard recover --clear`
// from another process makes the same descriptor run again in a fresh
// worktree of the reviewed snapshot, and the run completes.
func TestRunHandoffContinuesAfterRecover(t *testing.T) {
	t.Parallel()
	s := newEngineSandboxConfig(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"claude": {Queue: []string{"handoff", "handoff"}, Scenario: "success"}, // a writer's probe, then its workload
	}}, `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["handoff"]}
bug-fix: claude:opus@high
`)
	gitInit(t, s.checkout)
	out, err := exec.Command("git", "-C", s.checkout, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	snapshot := strings.TrimSpace(string(out))
	// The sandbox has no Claude login, so Claude's quota is UNKNOWN
	// (no_credentials): the run accepts that explicitly.
	args := s.runArgs("bug-fix", "--run-id", "resume", "--mode", "isolated-write", "--allow-unknown-quota", "claude")
	args[slices.Index(args, "--parent")+1] = "codex" // a Claude parent would run opus natively
	p := s.start(t, args...)
	waitOutput(t, p, "waiting for the parent: switchyard inspect --run resume --lane 0")
	r := s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "resume", "--lane", "0", "--state", "clear", "--evidence", "notes/review.md")
	require.Equal(t, 0, r.code, r.stderr)
	waitOutput(t, p, "waiting for the parent: switchyard operation validate --run resume --lane 0")
	snapshot = s.operateCLI(t, "resume", 0)
	waitOutput(t, p, "waiting for the parent: switchyard recover --run resume --lane 0 --evidence REF --clear")

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "resume", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"waitingFor": "recovery"`)
	r = s.run(t, 30*time.Second, "recover", "--data-dir", s.data, "--run", "resume", "--lane", "0", "--evidence", "review/lane0.md", "--clear",
		"--correction", "checkpoint committed", "--blockage-id", "handoff-C-1", "--snapshot-ref", "not-a-commit",
		"--snapshot-digest", strings.Repeat("0f", 32), "--partial-work-ref", "p.md", "--side-effects-ref", "e.md", "--stopped-writers-ref", "s.md")
	require.Equal(t, 64, r.code, "a writer's snapshot must be a commit: %s", r.stdout)
	require.Contains(t, r.stderr, `snapshot ref "not-a-commit" is not a commit`)
	r = s.run(t, 30*time.Second, "recover", "--data-dir", s.data, "--run", "resume", "--lane", "0", "--evidence", "review/lane0.md", "--clear",
		"--correction", "checkpoint committed", "--blockage-id", "handoff-C-1", "--snapshot-ref", snapshot,
		"--snapshot-digest", strings.Repeat("0f", 32), "--partial-work-ref", "p.md", "--side-effects-ref", "e.md", "--stopped-writers-ref", "s.md")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "continuation requested for run resume lane 0\n", r.stdout)

	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the recovery")
	}
	stdout, stderr := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "bug-fix#1 (lane 0): complete claude:opus@high")

	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "resume", "--type", "continue", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	env, err := events.Decode([]byte(strings.TrimSpace(r.stdout)))
	require.NoError(t, err, r.stdout)
	cont := env.Payload.(events.Continue)
	require.NotEmpty(t, cont.Paths.Worktree)
	head, err := exec.Command("git", "-C", cont.Paths.Worktree, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	require.Equal(t, snapshot, strings.TrimSpace(string(head)), "the continuation's worktree is the snapshot")
	r = s.run(t, 30*time.Second, "replay", "--data-dir", s.data, "--run", "resume", "--verify")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}

// gitInit makes dir a git work tree with one commit.
// gitIn runs git in dir (no user or system configuration) and returns its
// trimmed stdout.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=test@example.com", "-c", "user.name=test"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "."},
		{"-c", "user.email=test@example.com", "-c", "user.name=test", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}
