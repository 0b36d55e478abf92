package activities

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// flakyProxy forwards TCP connections to a NATS server and can cut them
// all and refuse new ones for a while: a network outage between one
// worker and the server.
type flakyProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &flakyProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

// URL is the proxy's client URL.
func (p *flakyProxy) URL() string { return "nats://" + p.ln.Addr().String() }

func (p *flakyProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		for _, pair := range [][2]net.Conn{{c, s}, {s, c}} {
			p.wg.Go(func() {
				io.Copy(pair[0], pair[1])
				pair[0].Close()
				pair[1].Close()
			})
		}
	}
}

// cut closes every forwarded connection.
func (p *flakyProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// outage cuts every connection and refuses new ones for d.
func (p *flakyProxy) outage(d time.Duration) {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.cut()
	<-time.After(d)
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestWorkerBriefDisconnect cuts a running worker off NATS for less than
// its lease: its renewals and in-progress calls fail meanwhile, a second
// worker may get the job back and watch the lease, but the attempt stays
// with the first worker, which reports it finished once cancelled.
func TestWorkerBriefDisconnect(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, true)
	proxy := startFlakyProxy(t, e.srv.ClientURL()[len("nats://"):])
	nc, err := events.Connect([]string{proxy.URL()})
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx := context.Background()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)

	const ttl = 2 * time.Second // well above a heartbeat plus the outage plus a reconnect
	cfg := e.workerConfig("worker-a")
	cfg.Queue, cfg.Claims, cfg.Store = js.Queue(), js.Claims(), js.Store()
	cfg.LeaseTTL = ttl
	a := e.startWorker(cfg)
	job := e.newJob(0)
	e.publish(job)
	e.waitReport(events.ReportClaimed, job.ExecutionID)
	inv := e.waitWorkload(job)

	other := e.workerConfig("worker-b")
	other.LeaseTTL = ttl
	b := e.startWorker(other)
	for range 2 {
		proxy.outage(700 * time.Millisecond)
		require.Eventually(t, nc.IsConnected, waitLong, 10*time.Millisecond)
		<-time.After(testAckWait / 2) // let a heartbeat through between outages
	}

	_, err = e.appendEvent(job.Lane, events.Cancel{Reason: "done", By: "test"})
	require.NoError(t, err)
	fin := e.waitReport(events.ReportFinished, job.ExecutionID)
	a.waitEvent(t, evAcked, job.ExecutionID, 1)
	require.Equal(t, "worker-a", fin.WorkerID)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	require.Zero(t, countEvents(b.events.snapshot(), evAbandonedStale, job.ExecutionID), "the lease never went stale")
	require.Len(t, e.workloads(job), 1)
	require.Equal(t, []string{"SIGTERM"}, e.signalsTo(inv.Pid))
	l := e.claimOf(job)
	require.Equal(t, events.LeaseReleased, l.State)
	require.Equal(t, "worker-a", l.WorkerID)
	require.NotZero(t, l.Renewals)
	t.Logf("worker-b decisions: %+v", b.events.snapshot())
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// TestWorkerOfflineRetriesQuiet: while WorkerConfig.Offline says the
// connection is known to be down, the failures the worker retries (lease
// renewals, in-progress calls) are logged at debug level, not as a
// warning per lease per beat; the attempt goes on as before.
func TestWorkerOfflineRetriesQuiet(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, true)
	proxy := startFlakyProxy(t, e.srv.ClientURL()[len("nats://"):])
	var offline sync.Mutex
	down := false
	nc, err := events.Connect([]string{proxy.URL()},
		nats.DisconnectErrHandler(func(*nats.Conn, error) { offline.Lock(); down = true; offline.Unlock() }))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx := context.Background()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)

	var logs syncBuffer
	cfg := e.workerConfig("worker-quiet")
	cfg.Queue, cfg.Claims, cfg.Store = js.Queue(), js.Claims(), js.Store()
	cfg.LeaseTTL = 2 * time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Down from the first disconnect to the end of the test: every retry
	// failure is the known outage.
	cfg.Offline = func() bool { offline.Lock(); defer offline.Unlock(); return down }
	e.startWorker(cfg)
	job := e.newJob(0)
	e.publish(job)
	e.waitReport(events.ReportClaimed, job.ExecutionID)
	e.waitWorkload(job)

	proxy.outage(1500 * time.Millisecond) // longer than two heartbeats (TTL/3)
	require.Eventually(t, nc.IsConnected, waitLong, 10*time.Millisecond)

	_, err = e.appendEvent(job.Lane, events.Cancel{Reason: "done", By: "test"})
	require.NoError(t, err)
	fin := e.waitReport(events.ReportFinished, job.ExecutionID)
	require.Equal(t, "worker-quiet", fin.WorkerID)

	out := logs.String()
	require.Regexp(t, `level=DEBUG msg="(lease renewal failed|job in-progress failed)`, out, "a beat failed during the outage")
	for _, line := range strings.Split(out, "\n") {
		require.NotContains(t, line, "level=WARN", "no warning while offline:\n%s", out)
	}
}
