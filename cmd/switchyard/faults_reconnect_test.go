package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// The reconnect test: everything finds `switchyard serve` through the data
// directory (no --nats anywhere), serve listens on port 0 as the README
// shows, and it is killed with SIGKILL twice while runs are in flight. The
// first restart cannot have its old port (the test holds it), so it comes
// back on another one: workers and waiting runs must find it through
// serve.json. The second restart finds its recorded port free and comes
// back on it.

// startServeAnyPort starts `serve --listen 127.0.0.1:0` and waits until it
// serves; it returns the process and its client URL.
func startServeAnyPort(t *testing.T, w *faultWorld, name string) (*faultProc, string) {
	t.Helper()
	p := w.start(name, "serve", "--data-dir", w.data, "--listen", "127.0.0.1:0")
	p.waitOutput(t, "switchyard serve: data directory "+w.data+" on nats://", 30*time.Second)
	info, err := readServeInfo(w.data)
	require.NoError(t, err)
	require.Equal(t, p.cmd.Process.Pid, info.PID, "serve.json names the new serve")
	w.url = info.URL
	u, err := url.Parse(info.URL)
	require.NoError(t, err)
	w.listen = u.Host
	return p, info.URL
}

// TestFaultsServeMovesAndComesBack: two workers and ten waiting
// `switchyard run`s, all found the serve through the data directory; serve
// (on port 0) is SIGKILLed while attempts run and restarted on another
// port, then SIGKILLed again when half the lanes are final and restarted on
// port 0 once more, which brings it back on its recorded port. It proves:
// every run reaches run-final and every waiting run prints its final
// report and exits 0; a status --watch follows both moves and shows every
// run final; no execution is started twice (the simulated CLIs'
// invocation log) or recorded twice; replay --verify passes on every run;
// each worker logs each loss and each recovery once and never a lease
// renewal warning.
func TestFaultsServeMovesAndComesBack(t *testing.T) {
	t.Parallel()
	const runs, seats = 10, 3
	limit := 90 * time.Second
	w := newFaultWorld(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"grok":  {Scenario: "slow-success"},
		"devin": {Scenario: "usage-exhausted"},
	}}, crashSheet(seats))
	h := &crashHarness{w: w, plan: crashPlan{seats: seats, limit: limit}, started: time.Now()}
	var url1 string
	h.serve, url1 = startServeAnyPort(t, w, "serve-1")

	workers := []*faultProc{}
	for i := range 2 {
		p := w.start(fmt.Sprintf("worker-%d", i+1), "worker", "--data-dir", w.data, "--provider", "grok,devin", "--concurrency", "3")
		p.waitOutput(t, "switchyard worker: grok,devin", 30*time.Second)
		workers = append(workers, p)
	}
	// The test's own recorder follows the serve the same way the clients
	// do, so it sees every acknowledged event across both moves.
	h.c = connectFaultClient(t, url1, w.data, nats.SetCustomDialer(engineconn.DataDirDialer(w.data, 2*time.Second)))

	var clis []*faultProc
	for i := range runs {
		id := fmt.Sprintf("moved-%02d", i)
		args := []string{"run", "--data-dir", w.data, "--sheet", w.sheet, "--role", crashRole,
			"--parent", "claude", "--prompt", w.prompt, "--cwd", w.checkout, "--run-id", id, "--json"}
		clis = append(clis, w.start("run-"+id, args...))
		h.runs = append(h.runs, id)
	}
	h.c.waitUntil(limit, "every run created", func(v *faultView) bool {
		for _, id := range h.runs {
			if v.c.runs[id] == nil {
				return false
			}
		}
		return true
	})
	// A status --watch of every run, found through the data directory too:
	// one JSON object per run, then one per change.
	watch := w.start("status-watch", "status", "--watch", "--json", "--limit", "0", "--data-dir", w.data)
	watch.waitOutput(t, `"run":"moved-`, 30*time.Second)

	// Kill 1, while attempts run and launches wait; the old port is taken
	// while serve restarts, so it must move.
	killWhenLaunchedAndRunning().wait(t, h)
	at := time.Now()
	h.serve.kill9(t)
	hold, err := net.Listen("tcp", w.listen)
	require.NoError(t, err, "take serve's old port %s", w.listen)
	var url2 string
	h.serve, url2 = startServeAnyPort(t, w, "serve-2")
	require.NoError(t, hold.Close())
	require.NotEqual(t, url1, url2, "serve moved to another port")
	h.kills = append(h.kills, faultKill{Trigger: "attempts running; serve back on another port", At: at, Restart: time.Since(at)})
	t.Logf("kill 1: serve moved %s -> %s in %s", url1, url2, time.Since(at).Round(time.Millisecond))

	// Kill 2, when half the lanes are final: the clients found the moved
	// serve (lanes only become final through it). Port 0 again, and the
	// recorded port is free: serve comes back on it.
	killWhenHalfFinal().wait(t, h)
	at = time.Now()
	h.serve.kill9(t)
	var url3 string
	h.serve, url3 = startServeAnyPort(t, w, "serve-3")
	require.Equal(t, url2, url3, "serve came back on its recorded port")
	h.kills = append(h.kills, faultKill{Trigger: "half the lanes final; serve back on its recorded port", At: at, Restart: time.Since(at)})

	h.c.waitUntil(limit, "every run final", func(v *faultView) bool { return v.final(h.runs...) })

	// Every waiting run saw its run through and printed the report.
	sawBoth := 0
	for i, p := range clis {
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s did not exit after its run was final:\n%s", p.name, tail(p.output(), 4000))
		}
		require.Zero(t, p.cmd.ProcessState.ExitCode(), "%s:\n%s", p.name, tail(p.output(), 4000))
		var rep engine.RunReport
		require.NoError(t, json.Unmarshal([]byte(p.stdoutText()), &rep), "%s --json report:\n%s", p.name, tail(p.output(), 4000))
		require.True(t, rep.Final, p.name)
		require.Equal(t, h.runs[i], rep.Run)
		// It said each loss and each recovery at most once per kill (a
		// run final before kill 2 saw only kill 1), and its own Close at
		// exit is no loss.
		lost := strings.Count(p.output(), "switchyard run: lost the connection to the server")
		back := strings.Count(p.output(), "switchyard run: reconnected; following the run again")
		require.LessOrEqual(t, lost, 2, "%s:\n%s", p.name, tail(p.output(), 4000))
		require.LessOrEqual(t, back, lost, "%s:\n%s", p.name, tail(p.output(), 4000))
		if lost == 2 && back == 2 {
			sawBoth++
		}
	}
	require.NotZero(t, sawBoth, "a run waiting across both kills said each loss and recovery once")

	// status --watch followed both moves: it is still watching, and the
	// latest line it printed for each run says final.
	allFinal := func() bool {
		latest := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(watch.stdoutText()), "\n") {
			var r engine.RunStatus
			if json.Unmarshal([]byte(line), &r) != nil {
				return false
			}
			latest[r.Run] = r.Final
		}
		if len(latest) != runs {
			return false
		}
		for _, final := range latest {
			if !final {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	for !allFinal() {
		require.False(t, watch.exited(), "status --watch exited:\n%s", tail(watch.output(), 4000))
		require.True(t, time.Now().Before(deadline), "status --watch never showed every run final:\n%s", tail(watch.output(), 4000))
		time.Sleep(50 * time.Millisecond)
	}
	require.False(t, watch.exited(), "status --watch still follows the serve")

	c := checkCrashOutcome(t, h)
	t.Logf("reconnect: runs=%d lanes=%d kills=%d executions=%d starts=%d events=%d double-launches=%d lost-events=%d duplicates=%d wall=%s phases{%s}",
		c.Runs, c.Lanes, c.Kills, c.Executions, c.Workloads, c.Events, c.DoubleLaunches, c.LostEvents, c.Duplicates,
		time.Since(h.started).Round(time.Millisecond), c.Phases)
	require.Equal(t, runs*seats, c.Lanes)
	require.Zero(t, c.DoubleLaunches)
	require.Zero(t, c.LostEvents)
	require.Zero(t, c.Duplicates)
	require.NotZero(t, c.Phases.Running, "a kill landed while attempts ran")

	// The workers said each loss and each recovery once, and nothing per
	// lease per beat; stopping one is no loss either.
	for _, p := range workers {
		code, err := p.term(30 * time.Second)
		require.NoError(t, err)
		require.Zero(t, code, "%s:\n%s", p.name, tail(p.output(), 4000))
		out := p.output()
		require.Equal(t, 2, strings.Count(out, "lost the connection to the server"), "%s:\n%s", p.name, tail(out, 6000))
		require.Equal(t, 2, strings.Count(out, "connection to the server is back"), "%s:\n%s", p.name, tail(out, 6000))
		require.NotContains(t, out, "lease renewal failed", p.name)
		require.Contains(t, out, "server=\"the serve of "+w.data, p.name)
	}
}
