package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
)

// TestRunDetachPrintsIDAndServeFinishesIt: run --detach submits to the
// serve, prints only the run id on stdout and exits 0 without waiting;
// the serve and its worker drive the run to final, and report prints it.
// --json prints {"run": ID}.
func TestRunDetachPrintsIDAndServeFinishesIt(t *testing.T) {
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)

	r := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--run-id", "detached", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "detached\n", r.stdout, "stdout is the run id alone")
	require.Contains(t, r.stderr, "run detached: role \"hillclimb\"")

	// No worker yet: the run cannot have finished; it waits on the serve.
	st := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "detached", "--json")
	require.Equal(t, 0, st.code, st.stderr)
	var status engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &status), st.stdout)
	require.False(t, status.Final, "detached run is final without a worker")

	worker := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	w := s.run(t, 60*time.Second, "status", "--data-dir", s.data, "--run", "detached", "--watch", "--json")
	require.Equal(t, 0, w.code, w.stderr)
	rep := s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "detached", "--json")
	require.Equal(t, 0, rep.code, rep.stderr)
	var report engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(rep.stdout), &report), rep.stdout)
	require.True(t, report.Final)
	require.Equal(t, machines.StateComplete, report.Lanes[0].State)

	j := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--run-id", "detached2", "--detach", "--json")...)
	require.Equal(t, 0, j.code, j.stderr)
	var id struct {
		Run string `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &id), j.stdout)
	require.Equal(t, "detached2", id.Run)
	require.Equal(t, 0, worker.stop(t))
	require.Equal(t, 0, serve.stop(t))
}

// TestRunDetachRefusals: --detach without a serve would leave a run
// nobody drives, and --fail-if-undelivered cannot be answered before the
// run is final: both are usage errors (64) that name the fix.
func TestRunDetachRefusals(t *testing.T) {
	s := newEngineSandbox(t, nil, singleLaneSheet)
	r := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--detach")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--detach needs a running `switchyard serve --data-dir "+s.data+"`")
	require.Empty(t, strings.TrimSpace(r.stdout))

	r = s.run(t, 30*time.Second, s.runArgs("hillclimb", "--detach", "--fail-if-undelivered")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--detach and --fail-if-undelivered")
}
