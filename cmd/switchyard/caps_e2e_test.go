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

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// capsSheet is a panel of three grok lanes.
const capsSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
swarm workers: grok:grok-4.7@high, grok:grok-4.7@high, grok:grok-4.7@high
`

// TestCapsAcrossWorkers runs `switchyard serve --cap grok=1` with two
// grok workers of --concurrency 2 each (four slots between them) and a
// panel of three slow grok lanes: the deployment's cap, not the workers'
// slots, decides, so no two grok CLIs ever run at once (read from the
// simulated CLIs' invocation log and each attempt's receipt), and status
// shows the cap and the one session running while the others queue.
func TestCapsAcrossWorkers(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: "slow-success"}}}, capsSheet)
	serve := w.start("serve", "serve", "--data-dir", w.data, "--listen", w.listen, "--cap", "grok=1")
	serve.waitOutput(t, "switchyard serve: provider caps (concurrent attempts across all workers): grok=1, others 2", 30*time.Second)
	w.startWorker("worker-1", "grok", 2)
	w.startWorker("worker-2", "grok", 2)
	run := w.start("run", w.runArgs("capped", crashRole)...)

	// While the panel runs, status shows one grok session of one (with
	// the other lanes' jobs queued behind the cap while there are any).
	deadline := time.Now().Add(60 * time.Second)
	var text string
	for !strings.Contains(text, "grok 1/1") && time.Now().Before(deadline) {
		require.False(t, run.exited(), "run ended early:\n%s", run.output())
		code, stdout, stderr := w.cli(30*time.Second, "status", "--data-dir", w.data)
		require.Equal(t, 0, code, stderr)
		text = stdout
	}
	require.Contains(t, text, "sessions running/cap (all workers): ")
	require.Regexp(t, `grok 1/1( \([12] queued\))?[,;\n]`, text)
	code, stdout, stderr := w.cli(30*time.Second, "status", "--data-dir", w.data, "--run", "capped", "--json")
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Run  string           `json:"run"`
		Caps []events.CapInfo `json:"caps"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	i := slices.IndexFunc(doc.Caps, func(c events.CapInfo) bool { return c.Provider == policy.Grok })
	require.GreaterOrEqual(t, i, 0, stdout)
	require.Equal(t, 1, doc.Caps[i].Cap)
	require.LessOrEqual(t, doc.Caps[i].InFlight, 1)
	require.True(t, doc.Caps[i].Bound)

	select {
	case <-run.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("run did not finish; output:\n%s", run.output())
	}
	require.NoError(t, run.err, run.output())

	requireOneAtATime(t, w)

	// A run submitted to this serve has the serve's caps: --cap is refused.
	code, _, stderr = w.cli(30*time.Second, append(w.runArgs("refused", crashRole), "--cap", "grok=3")...)
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "--cap applies to a self-contained run")
}

// TestCapsSelfContainedRun runs the same panel with `run --cap grok=1` and
// no serve: the self-contained run's own worker has two slots, and the cap
// still lets one grok CLI run at a time.
func TestCapsSelfContainedRun(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: "slow-success"}}}, capsSheet)
	code, stdout, stderr := w.cli(90*time.Second, "run", "--data-dir", w.data, "--sheet", w.sheet, "--role", crashRole,
		"--parent", "claude", "--prompt", w.prompt, "--cwd", w.checkout, "--run-id", "alone", "--cap", "grok=1")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	requireOneAtATime(t, w)
}

// requireOneAtATime asserts that the three grok workloads the simulated
// CLIs logged never overlapped.
func requireOneAtATime(t *testing.T, w *faultWorld) {
	t.Helper()
	// Each grok workload ran from its invocation's start to its
	// attempt's receipt, which the runner completes once the CLI has been
	// reaped; the next one started after that.
	type span struct {
		exec       string
		start, end time.Time
	}
	var spans []span
	for _, inv := range simenv.Invocations(t, w.bin) {
		if inv.Kind != simlog.KindWorkload {
			continue
		}
		require.Equal(t, "grok", inv.Provider)
		var receipt string
		for _, a := range inv.Argv {
			if m := executionInPath.FindStringSubmatch(a); m != nil {
				receipt = filepath.Join(w.data, "runs", m[1], "L"+m[2], m[3], "receipt.json")
			}
		}
		require.NotEmpty(t, receipt, "workload names no execution: %q", inv.Argv)
		raw, err := os.ReadFile(receipt)
		require.NoError(t, err)
		var rc struct {
			CompletedAt string `json:"completedAt"`
		}
		require.NoError(t, json.Unmarshal(raw, &rc))
		end, err := time.Parse(time.RFC3339Nano, rc.CompletedAt)
		require.NoError(t, err, rc.CompletedAt)
		spans = append(spans, span{exec: receipt, start: inv.StartedAt, end: end})
	}
	require.Len(t, spans, 3, "one grok workload per lane")
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	for k := 1; k < len(spans); k++ {
		require.False(t, spans[k].start.Before(spans[k-1].end),
			"grok workloads overlapped under cap 1: %s ran %s-%s, %s started %s", spans[k-1].exec,
			spans[k-1].start.Format(time.StampMilli), spans[k-1].end.Format(time.StampMilli), spans[k].exec, spans[k].start.Format(time.StampMilli))
	}
}
