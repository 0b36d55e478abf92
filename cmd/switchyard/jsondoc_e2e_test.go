package main

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// usageForeign are the subtrees of usage --json that are the policy
// contract's objects (the capacity snapshot and eligibility report), kept
// as that contract spells them.
var usageForeign = []string{"providers[].snapshot", "providers[].eligibility"}

// TestJSONOutputsAreVersionedCamelCase (issue 28, finding 23): every JSON
// document of the CLI's own commands, printed by the real binary on a real
// store, carries "schemaVersion": 2 (each element of a top-level array,
// each line of a JSON-lines stream) and no snake_case key at any depth.
func TestJSONOutputsAreVersionedCamelCase(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "done", "--json")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	requireJSONDoc(t, "run --json", r.stdout)

	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		foreign []string
	}{
		{"status --json", []string{"status", "--json"}, 0, nil},
		{"status --run --json", []string{"status", "--run", "done", "--json"}, 0, nil},
		{"report --json", []string{"report", "--run", "done", "--json"}, 0, nil},
		{"replay --json", []string{"replay", "--run", "done", "--json"}, 0, nil},
		{"prune --dry-run --json", []string{"prune", "--dry-run", "--json"}, 0, nil},
		{"usage --json", []string{"usage", "--json"}, 0, usageForeign},
		{"doctor --json", []string{"doctor", "--json"}, -1, nil},
		{"native next --json", []string{"native", "next", "--parent", "claude", "--json"}, 0, nil},
	} {
		r := s.run(t, 90*time.Second, append(tc.args, "--data-dir", s.data)...)
		if tc.code >= 0 {
			require.Equal(t, tc.code, r.code, "%s\nstdout:\n%s\nstderr:\n%s", tc.name, r.stdout, r.stderr)
		}
		requireJSONDoc(t, tc.name, r.stdout, tc.foreign...)
	}
	r = s.run(t, 90*time.Second, "models", "--provider", "grok", "--json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	requireJSONDoc(t, "models --json", r.stdout)

	// Against a serve: the watch's lines, and a detached run.
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)
	r = s.run(t, 60*time.Second, "status", "--data-dir", s.data, "--run", "done", "--watch", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	requireJSONLines(t, "status --run --watch --json", r.stdout)
	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "detached", "--detach", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	doc := requireJSONDoc(t, "run --detach --json", r.stdout).(map[string]any)
	require.Equal(t, "detached", doc["run"])
	require.Equal(t, 0, srv.stop(t))
}

// TestRunJSONInterruptedPrintsDocument (issue 28, finding 23): SIGINT to a
// self-contained `run --json` once its lane runs (read from status, not
// waited for by time) exits 130 and prints on stdout one JSON document:
// the run, interrupted true, nothing drives it now, its lane as the stopped
// drive left it (stopped, so the run is final), and the report command.
func TestRunJSONInterruptedPrintsDocument(t *testing.T) {
	t.Parallel()
	s := newEngineSandboxConfig(t, simenv.Scenarios(map[string]string{"grok": "long-running"}), singleLaneSheet)
	p := s.start(t, s.runArgs("hillclimb", "--run-id", "cut", "--json")...)
	s.waitOnlyLane(t, p, "cut", machines.StateRunning)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	code := waitExit(t, p, 60*time.Second)
	out, errOut := p.output()
	require.Equal(t, exitInterrupted, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	doc := requireJSONDoc(t, "interrupted run --json", out).(map[string]any)
	flags := " --data-dir " + s.data
	// Its only lane was running: the self-contained run stops its worker,
	// its engine records the cancelled attempt (finding 15), and the run is
	// final now, which the document says, with the lane as recorded and
	// the command that prints the report rather than one that resumes.
	require.Equal(t, "cut", doc["run"])
	require.Equal(t, true, doc["final"], out)
	require.Equal(t, true, doc["interrupted"])
	require.Equal(t, driverNone, doc["driver"])
	require.NotContains(t, doc, "resume", "a final run has nothing to resume")
	require.Equal(t, "switchyard report --run cut"+flags, doc["follow"])
	lanes, ok := doc["lanes"].([]any)
	require.True(t, ok, "lanes is an array: %s", out)
	require.Len(t, lanes, 1)
	lane := lanes[0].(map[string]any)
	require.Equal(t, "grok:grok-4.7@xhigh", lane["descriptor"])
	require.Equal(t, string(machines.StateStopped), lane["state"], "the lane as the stopped drive left it, not as it stood at the interrupt")
	require.Contains(t, errOut, "switchyard run: run cut is final now", "stderr still says so for people")
}

// TestRunJSONInterruptedWithServe: SIGINT to a `run --json` that submitted
// its run to a serve (no worker yet, so its launched lane waits there)
// exits 130 and prints one JSON document: interrupted, not final, driven
// by serve, the status watch to follow it and nothing to resume. The run
// does go on there: a worker started afterwards takes its lane, and it
// ends complete.
func TestRunJSONInterruptedWithServe(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)
	p := s.start(t, s.runArgs("hillclimb", "--run-id", "served", "--json")...)
	s.waitOnlyLane(t, p, "served", machines.StateLaunching) // waiting for a worker
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	code := waitExit(t, p, 60*time.Second)
	out, errOut := p.output()
	require.Equal(t, exitInterrupted, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	doc := requireJSONDoc(t, "interrupted run --json against serve", out).(map[string]any)
	flags := " --data-dir " + s.data
	require.Equal(t, "served", doc["run"])
	require.Equal(t, true, doc["interrupted"])
	require.Equal(t, false, doc["final"], out)
	require.Equal(t, driverServe, doc["driver"])
	require.NotContains(t, doc, "resume", "serve drives the run: nothing to resume")
	require.Equal(t, "switchyard status --run served --watch"+flags, doc["follow"])
	lanes, ok := doc["lanes"].([]any)
	require.True(t, ok, "lanes is an array: %s", out)
	require.Len(t, lanes, 1)
	lane := lanes[0].(map[string]any)
	require.Equal(t, "grok:grok-4.7@xhigh", lane["descriptor"], out)
	require.Equal(t, string(machines.StateLaunching), lane["state"], "an interrupt of the submitting process stops nothing: %s", out)
	require.Contains(t, errOut, "switchyard run: interrupted; run served is not final and goes on in")

	// It goes on in serve: a worker takes the lane, and the watch the
	// document names ends with the run complete.
	w := s.start(t, "worker", "--provider", "grok", "--data-dir", s.data)
	r := s.run(t, 90*time.Second, "status", "--data-dir", s.data, "--run", "served", "--watch", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "served", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.True(t, st.Final, r.stdout)
	require.Len(t, st.Lanes, 1)
	require.Equal(t, machines.StateComplete, st.Lanes[0].State, r.stdout)
	require.Equal(t, 0, w.stop(t))
	require.Equal(t, 0, srv.stop(t))
}

// waitOnlyLane waits, reading status, until run's only lane is in state;
// it fails at once if p, the run's own process, exits first.
func (s *engineSandbox) waitOnlyLane(t *testing.T, p *bgProcess, run string, state machines.State) {
	t.Helper()
	require.NoError(t, waitFor(60*time.Second, "lane 0 of run "+run+" "+string(state), func() (bool, error) {
		select {
		case <-p.done:
			out, errOut := p.output()
			return false, errors.New("run exited early\nstdout:\n" + out + "\nstderr:\n" + errOut)
		default:
		}
		r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run, "--json")
		if r.code != 0 {
			return false, nil // not submitted yet
		}
		var st engine.RunStatus
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			return false, err
		}
		return len(st.Lanes) == 1 && st.Lanes[0].State == state, nil
	}))
}
