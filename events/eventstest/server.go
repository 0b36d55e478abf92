// Package eventstest starts real embedded NATS servers for tests and holds
// the conformance suites every events.Store, events.Queue and events.Claims
// implementation must pass. It is the only place tests start NATS.
package eventstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// Option adjusts the configuration StartServer uses.
type Option func(*events.EmbeddedConfig)

// WithFsync sets the fsync policy (default events.FsyncAlways, as in
// production).
func WithFsync(p events.FsyncPolicy) Option {
	return func(c *events.EmbeddedConfig) { c.Fsync = p }
}

// WithDataDir stores JetStream under dir instead of a fresh t.TempDir(), to
// restart a server over the same data.
func WithDataDir(dir string) Option {
	return func(c *events.EmbeddedConfig) { c.DataDir = dir }
}

// WithListen makes the server accept TCP clients on a free loopback port;
// the URL is Embedded.ClientURL().
func WithListen() Option {
	return func(c *events.EmbeddedConfig) { c.Listen = "127.0.0.1:0" }
}

// WithConfig applies f to the configuration.
func WithConfig(f func(*events.EmbeddedConfig)) Option { return Option(f) }

// StartServer starts an embedded JetStream server in a fresh temporary
// directory and shuts it down (waiting) when the test ends.
func StartServer(t testing.TB, opts ...Option) *events.Embedded {
	t.Helper()
	cfg := events.EmbeddedConfig{DataDir: t.TempDir(), ServerName: "sy-test"}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := events.StartEmbedded(cfg)
	require.NoError(t, err, "start embedded NATS")
	t.Cleanup(e.Shutdown)
	return e
}

// Open opens the Switchyard streams on e's in-process connection.
func Open(t testing.TB, e *events.Embedded, cfg events.JetStreamConfig) *events.JetStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := events.OpenJetStream(ctx, e.Conn(), cfg)
	require.NoError(t, err, "open streams")
	return j
}

// StartCluster starts n embedded servers routed into one JetStream cluster
// on loopback, each with its own data directory and a client listener, and
// shuts them all down when the test ends. Ports are fixed at start, so a
// node restarted with events.StartEmbedded(node.Config()) rejoins at the
// same addresses. The cluster's meta leader is elected a few seconds after
// start; events.OpenJetStream waits for it.
func StartCluster(t testing.TB, n int) []*events.Embedded {
	t.Helper()
	require.GreaterOrEqual(t, n, 1)
	ports := FreePorts(t, 2*n)
	clientPorts, routePorts := ports[:n], ports[n:]
	routes := make([]string, n)
	for i := range routes {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i])
	}
	nodes := make([]*events.Embedded, n)
	for i := range nodes {
		e, err := events.StartEmbedded(events.EmbeddedConfig{
			DataDir:    t.TempDir(),
			ServerName: fmt.Sprintf("sy-node-%d", i+1),
			Listen:     fmt.Sprintf("127.0.0.1:%d", clientPorts[i]),
			Cluster: &events.ClusterConfig{
				Name: "sy-test", Listen: fmt.Sprintf("127.0.0.1:%d", routePorts[i]), Routes: routes,
			},
		})
		require.NoError(t, err, "start cluster node %d", i+1)
		t.Cleanup(e.Shutdown)
		nodes[i] = e
	}
	return nodes
}

// ClientURLs lists the nodes' client URLs, for events.Connect.
func ClientURLs(nodes []*events.Embedded) []string {
	urls := make([]string, len(nodes))
	for i, e := range nodes {
		urls[i] = e.ClientURL()
	}
	return urls
}

// FreePorts reserves n distinct free loopback ports by listening on them
// together, then releases them for the servers to take.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	ls := make([]net.Listener, n)
	for i := range ls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls[i], ports[i] = l, l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range ls {
		require.NoError(t, l.Close())
	}
	return ports
}

// ProcessNodeReadyTimeout bounds a ProcessClusterConfigs node's start-up.
// Callers wait at least this long for its READY line, so a slow node
// reports its own error rather than the caller's timeout.
const ProcessNodeReadyTimeout = 45 * time.Second

// ProcessClusterConfigs returns the configurations of an n-node cluster
// named name on free loopback ports, for tests that run each node in a
// process of its own (RunClusterNode) so they can SIGKILL one: node i is
// sy-node-<i+1> with data directory dataDir(i).
func ProcessClusterConfigs(t testing.TB, n int, name string, dataDir func(i int) string) []events.EmbeddedConfig {
	t.Helper()
	ports := FreePorts(t, 2*n)
	routes := make([]string, n)
	for i := range routes {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i])
	}
	cfgs := make([]events.EmbeddedConfig, n)
	for i := range cfgs {
		cfgs[i] = events.EmbeddedConfig{
			DataDir: dataDir(i), ServerName: fmt.Sprintf("sy-node-%d", i+1),
			Listen:  fmt.Sprintf("127.0.0.1:%d", ports[i]),
			Cluster: &events.ClusterConfig{Name: name, Listen: fmt.Sprintf("127.0.0.1:%d", ports[n+i]), Routes: routes},
			// A node process of a race-built suite on two busy cores took
			// longer than the default 10 s to accept clients (a
			// TestFaultsClusterCLI run beside a CPU load); the callers'
			// own deadlines for READY are what the test waits on.
			ReadyTimeout: ProcessNodeReadyTimeout,
		}
	}
	return cfgs
}

// RunClusterNode is the main of a cluster node process: it starts the
// embedded server of cfg (an events.EmbeddedConfig in JSON), calls ready
// once it accepts clients, and serves until SIGTERM or SIGINT (a graceful
// Shutdown) or SIGKILL.
func RunClusterNode(cfg []byte, ready func()) error {
	var c events.EmbeddedConfig
	if err := json.Unmarshal(cfg, &c); err != nil {
		return fmt.Errorf("node config: %w", err)
	}
	e, err := events.StartEmbedded(c)
	if err != nil {
		return err
	}
	defer e.Shutdown()
	ready()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	return nil
}
