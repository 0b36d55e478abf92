package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// The cluster fault test runs three routed JetStream servers, each in its
// own helper process, because a crash is what it needs: an in-process
// server (eventstest.StartCluster) can only be stopped with Shutdown, which
// is graceful — it steps its Raft leaderships down first, so the others
// take over within a second — while SIGKILL leaves the stream leaderless
// until the election timeout, as a machine or process crash would.

func init() { faultHelpers["node"] = nodeMain }

// nodeMain runs one cluster node process; it prints "READY" once it
// accepts clients.
func nodeMain(raw []byte) error {
	return eventstest.RunClusterNode(raw, func() { stdoutLine("READY") })
}

// processCluster is three node processes on fixed loopback ports.
type processCluster struct {
	t     *testing.T
	cfgs  []events.EmbeddedConfig
	nodes []*helperProc
}

func startProcessCluster(t *testing.T, n int) *processCluster {
	t.Helper()
	c := &processCluster{t: t}
	logs := t.TempDir()
	if d := os.Getenv("SY_FAULTS_LOGS"); d != "" {
		logs = d
	}
	c.cfgs = eventstest.ProcessClusterConfigs(t, n, "sy-faults", func(int) string { return t.TempDir() })
	for i := range c.cfgs {
		c.cfgs[i].LogFile = filepath.Join(logs, c.cfgs[i].ServerName+".log")
		c.nodes = append(c.nodes, nil)
	}
	for i := range n {
		c.start(i)
	}
	for i := range n {
		c.nodes[i].waitLine(t, eventstest.ProcessNodeReadyTimeout+15*time.Second, "READY")
	}
	return c
}

// start starts node i's process (again).
func (c *processCluster) start(i int) {
	c.nodes[i] = startHelper(c.t, c.cfgs[i].ServerName, "node", c.cfgs[i])
}

func (c *processCluster) urls() []string {
	var out []string
	for _, cfg := range c.cfgs {
		out = append(out, "nats://"+cfg.Listen)
	}
	return out
}

func (c *processCluster) index(name string) int {
	for i, cfg := range c.cfgs {
		if cfg.ServerName == name {
			return i
		}
	}
	c.t.Fatalf("no node named %q", name)
	return -1
}

// ackedStore records every append the store acknowledged to the engine,
// and when.
type ackedStore struct {
	events.Store
	mu    sync.Mutex
	acked map[uint64][]byte
	times []time.Time
}

// firstAckAfter is the first acknowledgement after t, or zero.
func (s *ackedStore) firstAckAfter(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.times {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}

func (s *ackedStore) Append(ctx context.Context, env events.Envelope, last uint64) (uint64, error) {
	seq, err := s.Store.Append(ctx, env, last)
	if err == nil {
		env.Seq = seq
		b, eerr := events.Encode(env)
		s.mu.Lock()
		if eerr == nil {
			s.acked[seq] = b
		}
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
	}
	return seq, err
}

// probe appends to its own lane every few milliseconds, recording the
// time of each acknowledgement: the longest gap is the write pause a
// failover causes.
type probe struct {
	run   string
	mu    sync.Mutex
	acked []uint64
	times []time.Time
}

func (p *probe) loop(ctx context.Context, s events.Store) {
	var last uint64
	for i := 0; ctx.Err() == nil; i++ {
		env := events.NewEnvelope(p.run, 0, time.Now(), events.Audit{Reason: events.AuditDuplicateReport, Detail: fmt.Sprintf("probe %d", i)})
		var seq uint64
		for ctx.Err() == nil {
			// Not acknowledged: the same envelope again is recognised if it
			// was stored after all (Store.Append's retry contract).
			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			var err error
			seq, err = s.Append(actx, env, last)
			cancel()
			if err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.acked = append(p.acked, seq)
		p.times = append(p.times, time.Now())
		p.mu.Unlock()
		last = seq
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// pause is the longest gap between acknowledgements from from on
// (counting from from itself), and how many acknowledgements came after
// from.
func (p *probe) pause(from time.Time) (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var longest time.Duration
	n := 0
	prev := from
	for _, at := range p.times {
		if at.Before(from) {
			continue
		}
		n++
		longest = max(longest, at.Sub(prev))
		prev = at
	}
	return longest, n
}

// clusterSheet: four grok seats replaying a slow success.
const clusterSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
swarm workers: grok:grok-4.7@xhigh, grok:grok-4.7@high, grok:grok-4.7@xhigh, grok:grok-4.7@high
`

// retryRead retries a read that failed transiently: right after a
// leadership change a read consumer may miss its heartbeats once (the
// engine's sessions retry the same way).
func retryRead(ctx context.Context, read func() ([]events.Envelope, error)) ([]events.Envelope, error) {
	for {
		envs, err := read()
		if err == nil || ctx.Err() != nil {
			return envs, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// boundedCtx is a context cancelled after d (or at the end of the test),
// without a deadline.
func boundedCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(d, cancel)
	t.Cleanup(func() {
		timer.Stop()
		cancel()
	})
	return ctx
}

// streamLeader is the name of the server leading stream. Right after a
// node's kill the cluster may still be electing (a stream's leader, or
// the meta leader that answers the info request), and a request then goes
// unanswered for the client's 5 s API timeout: it asks again until ctx
// ends, and returns the last error then.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	for {
		leader, err := streamLeaderOnce(ctx, js, stream)
		if err == nil {
			return leader, nil
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func streamLeaderOnce(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}

// TestFaultsClusterLeaderCrash runs the engine and a worker (in this
// process) against three JetStream servers (separate processes, routed,
// streams and the claims bucket with three replicas) through a URL list,
// SIGKILLs the process of the events stream's leader while a run's
// attempts are in flight, and proves: the run completes with every lane
// final once; every append the store acknowledged to the engine, and every
// acknowledged probe append, is in the log unchanged and once; no launch,
// claim or finish is recorded twice and no execution started twice; replay
// verifies the run. The write pause (the longest gap between acknowledged
// probe appends after the kill) is measured and logged. The killed node is
// then restarted on its directory: it catches up (every replica of every
// stream current) and, made the events stream's leader, serves the same
// log.
func TestFaultsClusterLeaderCrash(t *testing.T) {
	rounds := 1
	if v := os.Getenv("SY_CHAOS_CLUSTER_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		rounds = n
	}
	var total clusterResult
	for i := range rounds {
		var r clusterResult
		if !t.Run(fmt.Sprintf("round-%d", i+1), func(t *testing.T) { r = clusterLeaderCrash(t) }) {
			t.FailNow()
		}
		total.Events += r.Events
		total.Acked += r.Acked
		total.ProbeAcked += r.ProbeAcked
		total.Starts += r.Starts
		total.MaxPause = max(total.MaxPause, r.Pause)
		total.MaxFinal = max(total.MaxFinal, r.Final)
		total.MaxCatchUp = max(total.MaxCatchUp, r.CatchUp)
		if i == 0 || r.Pause < total.MinPause {
			total.MinPause = r.Pause
		}
	}
	t.Logf("cluster table row: | cluster leader SIGKILL (R3, 3 processes) | %d | %d | 4 per round | %d | 0 | 0 | 0 | pause %s–%s, run final ≤ %s after the kill, catch-up ≤ %s |",
		rounds, rounds, total.Starts, total.MinPause.Round(time.Millisecond), total.MaxPause.Round(time.Millisecond),
		total.MaxFinal.Round(time.Millisecond), total.MaxCatchUp.Round(time.Millisecond))
	t.Logf("cluster: %d rounds; %d run events, %d appends acknowledged to the engine, %d probe appends acknowledged; lost 0, duplicated 0",
		rounds, total.Events, total.Acked, total.ProbeAcked)
}

// clusterResult is what one leader crash measured.
type clusterResult struct {
	Events, Acked, ProbeAcked, Starts int
	Pause, MinPause, MaxPause         time.Duration
	Final, MaxFinal                   time.Duration
	CatchUp, MaxCatchUp               time.Duration
}

func clusterLeaderCrash(t *testing.T) clusterResult {
	// Registered first, so it runs after every other cleanup (the nodes
	// killed, the connection closed): an ordered consumer abandoned during
	// the failover (events/jsordered.go) may still be inside nats.go's
	// consumer re-creation, which ends within one backoff step (≤10 s) once
	// its connection is closed. Wait for that here, with a bound, rather
	// than let TestMain's leak check (which waits about 2 s) fail the
	// package.
	mine := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := goleak.Find(mine)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines left 30 s after the cluster test: %v", err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	cl := startProcessCluster(t, 3)
	nc, err := events.Connect(cl.urls())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	// No context here carries a deadline: a JetStream request sent while a
	// stream has no leader is never answered, so a call waits out its
	// context's whole deadline (without one, nats.go bounds each request
	// by 5 s and the callers retry), as the engine's and the worker's
	// calls do in production. Waits are bounded by cancelling instead.
	ctx := boundedCtx(t, 4*time.Minute)
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 3})
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)

	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slogLevel()}))
	store := &ackedStore{Store: j.Store(), acked: map[uint64][]byte{}}
	data := t.TempDir()
	eng, err := engine.New(engine.Config{Store: store, Queue: j.Queue(), Claims: j.Claims(), DataDir: data,
		Policy: policy.DefaultOptions(), Logger: logger, Capacity: j.Capacity()})
	require.NoError(t, err)
	bin := simenv.Install(t, "", simenv.Config{Transcripts: slowerTranscripts(t, 6000),
		Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: "slower-success"}}, HangCapSeconds: 120})
	home := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	w, err := activities.NewWorker(activities.WorkerConfig{
		Queue: j.Queue(), Claims: j.Claims(), Store: j.Store(), Providers: []policy.Provider{policy.Grok}, Concurrency: 2,
		Env: map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"}, Logger: logger,
	})
	require.NoError(t, err)
	runCtx, stopRun := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer func() {
		stopRun()
		bg.Wait()
	}()
	bg.Go(func() {
		if err := eng.Run(runCtx); err != nil {
			t.Errorf("engine: %v", err)
		}
	})
	bg.Go(func() {
		if err := w.Run(runCtx); err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	pr := &probe{run: eventstest.NewRunID()}
	probeCtx, stopProbe := context.WithCancel(runCtx)
	bg.Go(func() { pr.loop(probeCtx, j.Store()) })

	// Outside the temporary directory: a read-only Grok lane refuses a
	// temporary checkout before it starts, and then no attempt would run
	// while the leader is killed.
	checkout := simenv.Checkout(t)
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "README.md"), []byte("# Checkout\n"), 0o644))
	run, err := eng.Submit(ctx, engine.RunRequest{Sheet: []byte(clusterSheet), Role: "swarm workers", Parent: policy.ParentClaude,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: checkout})
	require.NoError(t, err)

	// Kill the events stream's leader once an attempt runs.
	watchCtx, stopWatch := context.WithCancel(ctx)
	ch, err := j.Store().Watch(watchCtx, run, 0)
	require.NoError(t, err)
	for env := range ch {
		if env.Type == events.TypeClaim {
			break
		}
	}
	stopWatch()
	leader, err := streamLeader(ctx, js, events.EventsStream)
	require.NoError(t, err)
	victim := cl.index(leader)
	killedAt := cl.nodes[victim].kill9(t)
	t.Logf("SIGKILLed %s, the %s leader", leader, events.EventsStream)

	rep, err := eng.Wait(boundedCtx(t, 90*time.Second), run, nil)
	if err != nil {
		pr.mu.Lock()
		n := len(pr.times)
		lastAck := time.Time{}
		if n > 0 {
			lastAck = pr.times[n-1]
		}
		pr.mu.Unlock()
		t.Logf("probe: %d acks, last %s after the kill", n, lastAck.Sub(killedAt))
		for _, name := range []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket} {
			ictx, icancel := context.WithTimeout(context.Background(), 3*time.Second)
			l, lerr := streamLeader(ictx, js, name)
			icancel()
			t.Logf("%s leader %q %v", name, l, lerr)
		}
		pprof.Lookup("goroutine").WriteTo(t.Output(), 1)
	}
	require.NoError(t, err)
	require.True(t, rep.Final)
	finalAt := time.Now()
	newLeader, err := streamLeader(ctx, js, events.EventsStream)
	require.NoError(t, err)
	require.NotEqual(t, leader, newLeader)
	require.False(t, store.firstAckAfter(killedAt).IsZero(), "the engine appended after the kill")
	t.Logf("run final %s after the kill; new leader %s", finalAt.Sub(killedAt).Round(time.Millisecond), newLeader)

	// Restart the killed node on its directory; it catches up.
	restartAt := time.Now()
	cl.start(victim)
	cl.nodes[victim].waitLine(t, eventstest.ProcessNodeReadyTimeout+15*time.Second, "READY")
	streams := []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket}
	require.NoError(t, waitCaughtUp(ctx, js, streams, cl.cfgs[victim].ServerName), "the restarted node catches up")
	catchUp := time.Since(restartAt)
	t.Logf("restarted %s caught up on %d streams in %s", leader, len(streams), catchUp.Round(time.Millisecond))
	stopProbe()
	pause, after := pr.pause(killedAt)
	require.NotZero(t, after, "probe appends were acknowledged after the kill")
	t.Logf("write pause (longest gap between acknowledged probe appends from the kill on): %s", pause.Round(time.Millisecond))

	// Made the events stream's leader, the restarted node serves the log.
	require.NoError(t, stepDownTo(ctx, nc, js, events.EventsStream, leader))
	envs, err := retryRead(ctx, func() ([]events.Envelope, error) { return j.Store().LoadRun(ctx, run) })
	require.NoError(t, err)
	stored := map[uint64][]byte{}
	for _, env := range envs {
		b, err := events.Encode(env)
		require.NoError(t, err)
		stored[env.Seq] = b
	}
	checkClusterLog(t, envs)

	// Every acknowledged append is stored, unchanged, once.
	store.mu.Lock()
	acked := store.acked
	store.mu.Unlock()
	lost := 0
	var others []string
	for seq, b := range acked {
		env, err := events.Decode(b)
		require.NoError(t, err)
		if env.Run != run {
			others = append(others, fmt.Sprintf("%s/%d %s seq %d", env.Run, env.Lane, env.Type, seq))
			continue
		}
		if got, ok := stored[seq]; !ok || string(got) != string(b) {
			lost++
			t.Errorf("acknowledged append %d not in the log as acknowledged:\nacked  %s\nstored %s", seq, b, got)
		}
	}
	probeEnvs, err := retryRead(ctx, func() ([]events.Envelope, error) { return j.Store().Load(ctx, pr.run, 0) })
	require.NoError(t, err)
	pr.mu.Lock()
	probeAcked := append([]uint64(nil), pr.acked...)
	pr.mu.Unlock()
	require.GreaterOrEqual(t, len(probeEnvs), len(probeAcked))
	for i, env := range probeEnvs {
		require.Equal(t, fmt.Sprintf("probe %d", i), env.Payload.(events.Audit).Detail, "probe appends stored in order, once")
		if i < len(probeAcked) {
			require.Equal(t, probeAcked[i], env.Seq, "probe %d at its acknowledged sequence", i)
		}
	}
	require.LessOrEqual(t, len(probeEnvs), len(probeAcked)+1, "at most the probe's unacknowledged last append beyond the acknowledged")
	require.Zero(t, lost)

	// No execution started twice.
	starts := map[string]int{}
	exe := regexp.MustCompile(`/runs/[^/]+/L\d+/([^/]+)/`)
	for _, inv := range simenv.Invocations(t, bin) {
		if inv.Kind != simlog.KindWorkload {
			continue
		}
		for _, a := range inv.Argv {
			if m := exe.FindStringSubmatch(a); m != nil {
				starts[m[1]]++
				break
			}
		}
	}
	for id, n := range starts {
		require.Equal(t, 1, n, "execution %s started once", id)
	}
	// The attempts ran: every launch's CLI started (once, above).
	launches := 0
	for _, env := range envs {
		if env.Type == events.TypeLaunch {
			launches++
		}
	}
	require.Equal(t, launches, len(starts), "every launched execution started its CLI")
	var res engine.ReplayResult
	_, err = retryRead(ctx, func() ([]events.Envelope, error) {
		res, err = engine.Replay(ctx, j.Store(), run, policy.DefaultOptions())
		return nil, err
	})
	require.NoError(t, err)
	require.True(t, res.Verified, res.Text())
	if len(others) > 0 {
		t.Logf("acknowledged appends of other runs: %v", others)
	}
	t.Logf("cluster: %d events in the run, %d acknowledged to the engine, %d probe appends acknowledged (%d stored), %d starts; lost 0, duplicated 0; pause %s",
		len(envs), len(acked), len(probeAcked), len(probeEnvs), len(starts), pause.Round(time.Millisecond))
	return clusterResult{Events: len(envs), Acked: len(acked), ProbeAcked: len(probeAcked), Starts: len(starts),
		Pause: pause, Final: finalAt.Sub(killedAt), CatchUp: catchUp}
}

// checkClusterLog asserts the run is final with every lane final once and
// no launch, claim or finish recorded twice.
func checkClusterLog(t *testing.T, envs []events.Envelope) {
	t.Helper()
	r, err := machines.FoldRun(envs)
	require.NoError(t, err)
	require.NotNil(t, r.Closed)
	seen := map[string]int{}
	finals := map[int]int{}
	for _, env := range envs {
		switch p := env.Payload.(type) {
		case events.Launch:
			seen["launch "+p.ExecutionID]++
		case events.Claim:
			seen["claim "+p.ExecutionID]++
		case events.Finish:
			seen["finish "+p.ExecutionID]++
		case events.Complete, events.Stop:
			finals[env.Lane]++
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		require.Equal(t, 1, seen[k], "%s recorded once", k)
	}
	for i, l := range r.Lanes {
		require.True(t, l.State.Final())
		require.Equal(t, 1, finals[i], "lane %d final once", i)
	}
}

// waitCaughtUp waits until every stream lists node among its replicas or
// as leader, with every replica current and no lag.
func waitCaughtUp(ctx context.Context, js jetstream.JetStream, streams []string, node string) error {
	var last string
	for {
		ok := true
		for _, name := range streams {
			s, err := js.Stream(ctx, name)
			if err != nil {
				ok, last = false, err.Error()
				break
			}
			info, err := s.Info(ctx)
			if err != nil || info.Cluster == nil {
				ok, last = false, fmt.Sprint(err)
				break
			}
			found := info.Cluster.Leader == node
			for _, r := range info.Cluster.Replicas {
				if !r.Current || r.Lag != 0 || r.Offline {
					ok, last = false, fmt.Sprintf("%s replica %s current=%v lag=%d offline=%v", name, r.Name, r.Current, r.Lag, r.Offline)
				}
				if r.Name == node {
					found = true
				}
			}
			if !found {
				ok, last = false, fmt.Sprintf("%s does not list %s", name, node)
			}
			if !ok {
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not caught up: %s", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stepDownTo asks stream's leader to step down in favour of node and waits
// until node leads it.
func stepDownTo(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, stream, node string) error {
	req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, node)
	for {
		leader, err := streamLeader(ctx, js, stream)
		if err == nil && leader == node {
			return nil
		}
		if err == nil {
			msg, rerr := nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(req))
			if rerr == nil {
				var resp struct {
					Success bool `json:"success"`
					Error   *struct {
						Description string `json:"description"`
					} `json:"error"`
				}
				if json.Unmarshal(msg.Data, &resp) == nil && resp.Error != nil {
					err = fmt.Errorf("step down: %s", resp.Error.Description)
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never led %s: %v", node, stream, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// slogLevel is the engine's and worker's log level in the cluster test:
// warnings, or everything with SY_FAULTS_VERBOSE set.
func slogLevel() slog.Level {
	if os.Getenv("SY_FAULTS_VERBOSE") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// slowerTranscripts is the simulator's transcripts with one more grok
// scenario, slower-success: success after delayMs. The leader is killed
// once the first attempt is claimed, and the run must still have appends
// to make then; slow-success's 1.5 s was not always enough on a machine
// busy with the other chaos packages (a round went final before its
// kill).
func slowerTranscripts(t *testing.T, delayMs int) string {
	t.Helper()
	orig := simenv.TranscriptsRoot()
	root := t.TempDir()
	entries, err := os.ReadDir(orig)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "grok" {
			require.NoError(t, os.Symlink(filepath.Join(orig, e.Name()), filepath.Join(root, e.Name())))
		}
	}
	grok := filepath.Join(root, "grok")
	scenarios, err := os.ReadDir(filepath.Join(orig, "grok"))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(grok, 0o755))
	for _, e := range scenarios {
		require.NoError(t, os.Symlink(filepath.Join(orig, "grok", e.Name()), filepath.Join(grok, e.Name())))
	}
	work := filepath.Join(grok, "slower-success", "workload")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "base"), []byte("success/workload\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(work, "delay_ms"), []byte(strconv.Itoa(delayMs)+"\n"), 0o644))
	return root
}
