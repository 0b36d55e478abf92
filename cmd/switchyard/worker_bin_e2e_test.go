package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

const codexOnlySheet = `# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
bug-fix: codex:gpt-5.6-sol@high
`

// TestWorkerBinPinsTheCLI: a worker whose PATH has no codex runs codex
// from worker --bin, for its quota measurement (else the gate would
// exclude codex as UNKNOWN) and for the attempt, whose receipt names the
// pinned path.
func TestWorkerBinPinsTheCLI(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, codexOnlySheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)

	pinned := filepath.Join(s.bin, "codex")
	w := *s
	w.env = slices.Clone(s.env)
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "PATH=") {
			w.env[i] = "PATH=/usr/bin:/bin" // no simulated CLI on the worker's PATH
		}
	}
	wk := w.start(t, "worker", "--data-dir", s.data, "--provider", "codex", "--bin", "codex="+pinned, "--log-level", "info")

	r := s.run(t, 90*time.Second, s.runArgs("bug-fix", "--run-id", "pinned")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "complete via codex:gpt-5.6-sol@high")
	require.NotEmpty(t, simlog.Filter(simenv.Invocations(t, s.bin), "codex", simlog.KindWorkload))

	st := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "pinned", "--json")
	require.Equal(t, 0, st.code, st.stderr)
	var status engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &status), st.stdout)
	b, err := os.ReadFile(status.Lanes[0].Paths.Receipt)
	require.NoError(t, err)
	var rc policy.Receipt
	require.NoError(t, json.Unmarshal(b, &rc), string(b))
	require.NotNil(t, rc.Executable)
	require.Equal(t, pinned, *rc.Executable)

	require.Equal(t, 0, wk.stop(t))
	_, errOut := wk.output()
	require.Contains(t, errOut, "provider CLI pinned by --bin")
}
