package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// envClusterNode, set to an events.EmbeddedConfig in JSON, makes the test
// binary run one cluster node (see TestMain) instead of the tests.
const envClusterNode = "SY_TEST_CLUSTER_NODE"

// clusterNodeMain runs one cluster node process, printing READY once it
// accepts clients.
func clusterNodeMain(raw string) int {
	if err := eventstest.RunClusterNode([]byte(raw), func() { fmt.Println("READY") }); err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	return 0
}

// cliCluster is three JetStream node processes, routed on loopback.
type cliCluster struct {
	w     *faultWorld
	cfgs  []events.EmbeddedConfig
	nodes []*faultProc
}

func startCLICluster(t *testing.T, w *faultWorld) *cliCluster {
	t.Helper()
	const n = 3
	c := &cliCluster{w: w, nodes: make([]*faultProc, n)}
	c.cfgs = eventstest.ProcessClusterConfigs(t, n, "sy-cli", func(i int) string { return filepath.Join(w.dir, fmt.Sprintf("node-%d", i+1)) })
	for i := range n {
		c.start(t, i)
	}
	return c
}

// start starts node i's process (again) and waits until it is ready.
func (c *cliCluster) start(t *testing.T, i int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	b, err := json.Marshal(c.cfgs[i])
	require.NoError(t, err)
	p := c.w.startProgram(c.cfgs[i].ServerName, self, []string{envClusterNode + "=" + string(b)})
	p.waitOutput(t, "READY", eventstest.ProcessNodeReadyTimeout+15*time.Second)
	c.nodes[i] = p
}

// urls is the --nats value naming all three nodes.
func (c *cliCluster) urls() string {
	var out []string
	for _, cfg := range c.cfgs {
		out = append(out, "nats://"+cfg.Listen)
	}
	return strings.Join(out, ",")
}

// index returns the node named name.
func (c *cliCluster) index(t *testing.T, name string) int {
	for i, cfg := range c.cfgs {
		if cfg.ServerName == name {
			return i
		}
	}
	t.Fatalf("no node named %q", name)
	return -1
}

// TestFaultsClusterCLI runs the deployment the README describes for more
// than one machine, with real processes: three JetStream nodes, and
// `switchyard serve --nats`, `switchyard worker --nats` and a waiting
// `switchyard run --nats`, each given all three URLs (so the streams get
// three replicas by default). Once the run's attempts run, the events
// stream's leader is SIGKILLed. The run completes and `run` prints its
// final report and exits 0, each execution started once, the killed node
// restarts and catches up, and `replay --verify` passes through one node's
// URL alone, which (since streams keep their replicas) leaves the
// deployment at three replicas.
func TestFaultsClusterCLI(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t, simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: "slow-success"}}},
		crashSheet(4))
	cl := startCLICluster(t, w)
	urls := cl.urls()

	serve := w.start("serve", "serve", "--nats", urls, "--data-dir", w.data)
	serve.waitOutput(t, "switchyard serve: engine on", 60*time.Second)
	w.start("worker", "worker", "--nats", urls, "--data-dir", w.data, "--provider", "grok,devin", "--concurrency", "4").
		waitOutput(t, "switchyard worker: grok,devin", 30*time.Second)
	args := []string{"run", "--nats", urls, "--data-dir", w.data, "--sheet", w.sheet, "--role", crashRole,
		"--parent", "claude", "--prompt", w.prompt, "--cwd", w.checkout, "--run-id", "cluster-cli", "--json"}
	run := w.start("run", args...)

	// The test's own view of the cluster, for the leader and the streams.
	nc, err := events.Connect(strings.Split(urls, ","))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	streams := []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket}
	for _, name := range streams {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		require.Equal(t, 3, s.CachedInfo().Config.Replicas, "%s: three URLs give three replicas", name)
	}

	// Kill the events stream's leader once an attempt runs.
	run.waitOutput(t, "running grok:", 60*time.Second)
	s, err := js.Stream(ctx, events.EventsStream)
	require.NoError(t, err)
	leader := s.CachedInfo().Cluster.Leader
	victim := cl.index(t, leader)
	killedAt := time.Now()
	cl.nodes[victim].kill9(t)
	t.Logf("SIGKILLed %s, the %s leader", leader, events.EventsStream)

	select {
	case <-run.done:
	case <-time.After(150 * time.Second):
		t.Fatalf("switchyard run did not finish after the leader's SIGKILL:\n%s\nserve:\n%s", tail(run.output(), 4000), tail(serve.output(), 4000))
	}
	final := time.Since(killedAt)
	require.Zero(t, run.cmd.ProcessState.ExitCode(), "switchyard run:\n%s", tail(run.output(), 4000))
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(run.stdoutText()), &rep), tail(run.output(), 4000))
	require.True(t, rep.Final)
	require.Len(t, rep.Lanes, 4)
	t.Logf("run final %s after the kill", final.Round(time.Millisecond))

	// Every execution the log launched started at most once, and every
	// start is one of them.
	code, stdout, stderr := w.cli(60*time.Second, "history", "--nats", urls, "--run", "cluster-cli", "--type", "launch", "--json")
	require.Zero(t, code, stderr)
	launched := map[string]bool{}
	for line := range strings.Lines(stdout) {
		env, err := events.Decode([]byte(line))
		require.NoError(t, err)
		launched[env.Payload.(events.Launch).ExecutionID] = true
	}
	starts := workloadsByExecution(t, w.bin)
	for id, n := range starts {
		require.True(t, launched[id], "a start of execution %s, which the log never launched", id)
		require.Equal(t, 1, n, "execution %s started %d times", id, n)
	}
	require.NotEmpty(t, starts)
	t.Logf("cluster CLI: 1 run, %d lanes, %d executions launched, %d started, each once", len(rep.Lanes), len(launched), len(starts))

	// The killed node comes back and catches up.
	restart := time.Now()
	cl.start(t, victim)
	require.Eventually(t, func() bool {
		for _, name := range streams {
			s, err := js.Stream(ctx, name)
			if err != nil || s.CachedInfo().Cluster == nil {
				return false
			}
			for _, r := range s.CachedInfo().Cluster.Replicas {
				if r.Name == leader && (!r.Current || r.Lag > 0) {
					return false
				}
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "the restarted node catches up")
	t.Logf("%s caught up in %s", leader, time.Since(restart).Round(time.Millisecond))

	// One node's URL alone: replay verifies, and the deployment keeps its
	// three replicas.
	code, stdout, stderr = w.cli(60*time.Second, "replay", "--nats", "nats://"+cl.cfgs[(victim+1)%3].Listen, "--run", "cluster-cli", "--verify")
	require.Zero(t, code, "replay:\n%s\n%s", stdout, stderr)
	require.Contains(t, stdout, "verified")
	for _, name := range streams {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		require.Equal(t, 3, s.CachedInfo().Config.Replicas, "%s after a one-URL command", name)
	}
}
