package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	_, err := os.Lstat(s.data)
	require.True(t, errors.Is(err, fs.ErrNotExist), "a refused --detach creates no data directory (issue 28, finding 3): %v", err)

	// With a store there and no serve, it is refused the same way and the
	// store is left as it was.
	self := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "first")...)
	require.Equal(t, 0, self.code, self.stderr)
	before := dirListing(t, s.data)
	r = s.run(t, 30*time.Second, s.runArgs("hillclimb", "--detach")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--detach needs a running `switchyard serve --data-dir "+s.data+"`")
	require.Equal(t, before, dirListing(t, s.data), "a refused --detach changes nothing in the data directory")

	r = s.run(t, 30*time.Second, s.runArgs("hillclimb", "--detach", "--fail-if-undelivered")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--detach and --fail-if-undelivered")
}

// dirListing is every path under dir with its size and mode, for
// comparing a directory before and after a command.
func dirListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size := info.Size()
		if d.IsDir() {
			size = 0
		}
		out = append(out, fmt.Sprintf("%s %s %d", path, info.Mode(), size))
		return nil
	}))
	return out
}
