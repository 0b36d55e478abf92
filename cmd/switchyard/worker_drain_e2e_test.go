package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// slowGrokScenario writes a grok scenario that succeeds after delay (the
// shipped slow-success is too quick to signal a worker in between) and
// returns its absolute directory.
func slowGrokScenario(t *testing.T, delay time.Duration) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "grok-slow")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "workload"), 0o755))
	out, err := os.ReadFile(filepath.Join(simenv.TranscriptsRoot(), "grok", "success", "workload", "stdout"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workload", "stdout"), out, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workload", "delay_ms"), []byte(
		strconv.FormatInt(delay.Milliseconds(), 10)+"\n"), 0o644))
	return dir
}

// grokWorkloads is the grok workload invocations so far (none before the log
// exists).
func grokWorkloads(t *testing.T, bin string) []simlog.Invocation {
	t.Helper()
	invs, err := simlog.Read(simenv.LogPath(bin))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return simlog.Filter(invs, "grok", simlog.KindWorkload)
}

// startDetachedUnderWorker starts a serve and a grok worker, submits a
// one-lane run and waits until the worker's CLI runs its workload.
func startDetachedUnderWorker(t *testing.T, s *engineSandbox, run string) (serve, worker *bgProcess) {
	t.Helper()
	serve = s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	worker = s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	waitOutput(t, worker, "switchyard worker: grok")
	r := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--run-id", run, "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, waitFor(60*time.Second, "the grok workload to start", func() (bool, error) {
		return len(grokWorkloads(t, s.bin)) == 1, nil
	}))
	return serve, worker
}

// finalStatus waits for run to be final and returns its status.
func finalStatus(t *testing.T, s *engineSandbox, run string) engine.RunStatus {
	t.Helper()
	r := s.run(t, 90*time.Second, "status", "--data-dir", s.data, "--run", run, "--watch", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.True(t, st.Final, r.stdout)
	return st
}

// TestWorkerDrainsOnSIGTERM (issue 28, finding 13): the first SIGTERM
// drains the worker: it says so, takes no new job, lets the attempt in
// flight finish unsignalled, reports it, and exits 0; the lane completes
// and the CLI ran once.
func TestWorkerDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	slow := slowGrokScenario(t, 6*time.Second)
	s := newEngineSandboxConfig(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: slow}}}, singleLaneSheet)
	serve, worker := startDetachedUnderWorker(t, s, "drain")

	require.NoError(t, worker.cmd.Process.Signal(syscall.SIGTERM))
	waitOutput(t, worker, "switchyard worker: SIGTERM: draining: taking no new jobs, waiting for 1 running attempt to finish; send SIGINT or SIGTERM again (Ctrl-C) to stop it now\n")
	require.Equal(t, 0, waitExit(t, worker, 60*time.Second), "a draining worker exits 0 once its attempt ended")
	out, _ := worker.output()
	require.Contains(t, out, "switchyard worker: stopped\n")
	require.NotContains(t, out, "again: stopping")

	st := finalStatus(t, s, "drain")
	require.Equal(t, machines.StateComplete, st.Lanes[0].State, "the drained attempt completed its lane")
	require.Len(t, grokWorkloads(t, s.bin), 1, "the attempt ran once")
	sigs, err := simlog.ReadSignals(simenv.SignalsPath(s.bin))
	if !errors.Is(err, os.ErrNotExist) {
		require.NoError(t, err)
		require.Empty(t, sigs, "a drain never signals the CLI")
	}
	require.Equal(t, 0, serve.stop(t))
}

// TestWorkerSecondSignalStopsNow (issue 28, finding 13): a second signal
// while draining stops the running attempt at once, as a single signal
// did before: the CLI gets SIGTERM, its attempt is recorded cancelled, the
// worker exits 0 promptly, and the attempt is never run again.
func TestWorkerSecondSignalStopsNow(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "long-running"}, singleLaneSheet)
	serve, worker := startDetachedUnderWorker(t, s, "stopnow")

	require.NoError(t, worker.cmd.Process.Signal(syscall.SIGTERM))
	waitOutput(t, worker, "draining: taking no new jobs, waiting for 1 running attempt to finish")
	require.NoError(t, worker.cmd.Process.Signal(syscall.SIGINT))
	waitOutput(t, worker, "switchyard worker: SIGINT again: stopping 1 running attempt now")
	require.Equal(t, 0, waitExit(t, worker, 30*time.Second), "a worker exits 0 promptly after its second signal")

	sigs, err := simlog.ReadSignals(simenv.SignalsPath(s.bin))
	require.NoError(t, err)
	require.NotEmpty(t, sigs, "the CLI was signalled")
	require.Equal(t, "SIGTERM", sigs[0].Signal)

	st := finalStatus(t, s, "stopnow")
	require.NotNil(t, st.Lanes[0].Paths)
	b, err := os.ReadFile(st.Lanes[0].Paths.Receipt)
	require.NoError(t, err)
	var rc policy.Receipt
	require.NoError(t, json.Unmarshal(b, &rc), string(b))
	require.Equal(t, policy.StatusCancelled, rc.Status, "the stopped attempt's receipt")

	// Another worker finds nothing to run again.
	again := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	waitOutput(t, again, "switchyard worker: grok")
	require.Equal(t, 0, again.stop(t))
	require.Len(t, grokWorkloads(t, s.bin), 1, "the stopped attempt never ran again")
	require.Equal(t, 0, serve.stop(t))
}
