package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// trickleGrokScenario writes a grok scenario that prints the success
// transcript one line every pause (a CLI printing progress slowly) and
// returns its absolute directory.
func trickleGrokScenario(t *testing.T, pause time.Duration) string {
	t.Helper()
	dir := slowGrokScenario(t, 0)
	require.NoError(t, os.Remove(filepath.Join(dir, "workload", "delay_ms")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workload", "chunk_ms"), []byte(
		strconv.FormatInt(pause.Milliseconds(), 10)+"\n"), 0o644))
	return dir
}

// TestLogsFollow (issue 28, finding 33): `switchyard logs --follow`,
// started as a real process while a worker's CLI prints slowly, shows the
// attempt's launch, its worker, its runner's progress snapshots while the
// CLI runs, then what was recorded after that (the finish, the output,
// the lane's end), and exits 0 once the lane is final. `logs` then prints
// the same record at once, --json as one object per line; a follow of a
// lane that cannot end is stopped by Ctrl-C with exit 130; an unknown run
// exits 64 naming the fix.
func TestLogsFollow(t *testing.T) {
	t.Parallel()
	slow := trickleGrokScenario(t, 2500*time.Millisecond)
	s := newEngineSandboxConfig(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: slow}}}, singleLaneSheet)
	serve, worker := startDetachedUnderWorker(t, s, "tail")

	logs := s.start(t, "logs", "--data-dir", s.data, "--run", "ta", "--follow")
	// The CLI prints for about 12 s; the runner writes a snapshot with new
	// byte counts at most every 5 s, so one shows while it runs.
	waitOutput(t, logs, "running on worker ")
	require.NoError(t, waitFor(60*time.Second, "a progress line while the CLI runs", func() (bool, error) {
		out, _ := logs.output()
		return regexp.MustCompile(`attempt 0 grok:grok-4\.7@xhigh: progress #\d+ workload-running; stdout \d+`).MatchString(out), nil
	}))
	before, _ := logs.output()
	require.NotContains(t, before, "ended ", "the attempt was still running when logs showed its progress")
	require.Equal(t, 0, waitExit(t, logs, 90*time.Second), "logs --follow exits 0 once the lane is final")
	out, errOut := logs.output()
	require.Empty(t, errOut)
	after := strings.TrimPrefix(out, before)
	require.Regexp(t, `(?m)^\S+ ago lane 0 attempt 0 grok:grok-4\.7@xhigh: ended complete, took \d+s$`, after, "the finish, recorded after logs showed the running attempt")
	require.Contains(t, after, "output (", "the output follows the finish")
	require.Contains(t, after, "  | The repository has one Go module; its entry point is cmd/switchyard/main.go.\n")
	require.Regexp(t, `(?m)^\S+ ago lane 0: complete$`, after)
	require.Regexp(t, `(?m)^\S+ ago lane 0 attempt 0 grok:grok-4\.7@xhigh: launched \(external, provider grok, execution \S+\)$`, before)

	// Once, after the fact: the same record, the progress at its end.
	r := s.run(t, 30*time.Second, "logs", "--data-dir", s.data, "--run", "tail", "--absolute-times")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ lane 0 attempt 0 grok:grok-4\.7@xhigh: progress #\d+ terminal; stdout \d+`, r.stdout)
	require.Regexp(t, `(?s)launched.*running on worker.*progress.*ended complete.*output \(.*lane 0: complete`, r.stdout)

	r = s.run(t, 30*time.Second, "logs", "--data-dir", s.data, "--run", "tail", "--lane", "0", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var kinds []engine.LogKind
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e engine.LogEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		require.Equal(t, "tail", e.Run)
		_, err := time.Parse(time.RFC3339Nano, e.Time.Format(time.RFC3339Nano))
		require.NoError(t, err)
		kinds = append(kinds, e.Kind)
	}
	require.Equal(t, []engine.LogKind{engine.LogLaunch, engine.LogClaim, engine.LogProgress, engine.LogFinish, engine.LogOutput, engine.LogLaneFinal}, kinds, r.stdout)
	require.NotContains(t, r.stdout, "argv", "no argv")

	// A lane nothing runs never ends: Ctrl-C stops the follow, exit 130.
	require.Equal(t, 0, worker.stop(t))
	r = s.run(t, 30*time.Second, s.runArgs("hillclimb", "--run-id", "stuck", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	stuck := s.start(t, "logs", "--data-dir", s.data, "--run", "stuck", "--follow")
	waitOutput(t, stuck, "launched (external, provider grok")
	require.NoError(t, stuck.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, waitExit(t, stuck, 30*time.Second), "an interrupted follow exits 130")

	r = s.run(t, 30*time.Second, "logs", "--data-dir", s.data, "--run", "nosuch")
	require.Equal(t, 64, r.code, r.stderr)
	require.Contains(t, r.stderr, `no run matches "nosuch"`)
	require.Contains(t, r.stderr, "list runs with `switchyard status --data-dir "+s.data+"`")
	r = s.run(t, 30*time.Second, "logs", "--data-dir", s.data, "--run", "tail", "--lane", "3")
	require.Equal(t, 64, r.code, r.stderr)
	require.Contains(t, r.stderr, "--lane 3: run tail has lanes 0..0")
	require.Equal(t, 0, serve.stop(t))
}
