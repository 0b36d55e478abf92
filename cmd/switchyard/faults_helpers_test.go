package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// This file holds the machinery of the process-level fault tests: the real
// switchyard binary as serve and worker processes that the test kills with
// SIGKILL and restarts, a client connection of the test's own that records
// every event and report it sees (so nothing acknowledged can go missing
// unnoticed), and the checks every crash test ends with.

// faultProc is one background process of the binary.
type faultProc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer // stdout and stderr, interleaved
	stdout bytes.Buffer
	done   chan struct{}
	err    error
}

type faultWriter struct {
	p      *faultProc
	stdout bool
}

func (w faultWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.stdout {
		w.p.stdout.Write(b)
	}
	return w.p.out.Write(b)
}

// stdoutText is what the process printed on stdout alone.
func (p *faultProc) stdoutText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// output is what the process printed so far.
func (p *faultProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// exited reports whether the process has ended.
func (p *faultProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill9 sends SIGKILL and waits for the process to be reaped.
func (p *faultProc) kill9(t *testing.T) {
	t.Helper()
	if p.exited() {
		t.Fatalf("%s exited before it could be killed:\n%s", p.name, tail(p.output(), 4000))
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// term sends SIGTERM and waits up to limit (then SIGKILL); it returns the
// exit code (-1 when killed by a signal).
func (p *faultProc) term(limit time.Duration) (int, error) {
	if !p.exited() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(limit):
			p.cmd.Process.Kill()
			<-p.done
			return -1, fmt.Errorf("%s ignored SIGTERM for %s", p.name, limit)
		}
	}
	return p.cmd.ProcessState.ExitCode(), nil
}

// waitOutput waits until the process printed want, failing if it exits
// first or limit passes.
func (p *faultProc) waitOutput(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(p.output(), want) {
			return
		}
		select {
		case <-p.done:
			if strings.Contains(p.output(), want) {
				return
			}
			t.Fatalf("%s exited before printing %q:\n%s", p.name, want, tail(p.output(), 4000))
		case <-deadline:
			t.Fatalf("%s did not print %q within %s:\n%s", p.name, want, limit, tail(p.output(), 4000))
		case <-tick.C:
		}
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// faultWorld is one crash test's deployment: a data directory, a checkout,
// a prompt and a sheet, the simulated CLIs first on PATH, a fixed loopback
// port for serve (so workers reconnect to the same URL after a restart),
// and the processes started on it.
type faultWorld struct {
	t        *testing.T
	dir      string
	data     string
	checkout string
	prompt   string
	sheet    string
	bin      string
	env      []string
	listen   string
	url      string

	mu    sync.Mutex
	procs []*faultProc
}

// newFaultWorld installs the simulators with cfg and writes sheet.
func newFaultWorld(t *testing.T, cfg simenv.Config, sheet string) *faultWorld {
	t.Helper()
	dir := t.TempDir()
	cfg.HangCapSeconds = 120 // a failed test never leaves a simulator behind for long
	w := &faultWorld{
		t: t, dir: dir, data: filepath.Join(dir, "data"), checkout: simenv.Checkout(t), // outside temp: a read-only Grok lane refuses a temporary checkout
		prompt: filepath.Join(dir, "prompt.md"), sheet: filepath.Join(dir, "fault.sheet"),
		bin: simenv.Install(t, "", cfg),
	}
	require.NoError(t, os.MkdirAll(w.checkout, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.checkout, "README.md"), []byte("# Checkout\n"), 0o644))
	require.NoError(t, os.WriteFile(w.prompt, []byte("Summarize README.md in one sentence.\n"), 0o600))
	require.NoError(t, os.WriteFile(w.sheet, []byte(sheet), 0o600))
	w.env = []string{
		"PATH=" + w.bin + ":/usr/bin:/bin",
		simenv.SandboxWritable + "=" + w.bin,
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"LANG=C.UTF-8",
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	w.listen = l.Addr().String()
	require.NoError(t, l.Close())
	w.url = "nats://" + w.listen
	t.Cleanup(w.stopAll)
	return w
}

// start runs the binary with args in the background.
func (w *faultWorld) start(name string, args ...string) *faultProc {
	w.t.Helper()
	return w.startProgram(name, binPath, nil, args...)
}

// startProgram runs program with args in the background, with the world's
// environment plus env.
func (w *faultWorld) startProgram(name, program string, env []string, args ...string) *faultProc {
	w.t.Helper()
	p := &faultProc{name: name, cmd: exec.Command(program, args...), done: make(chan struct{})}
	p.cmd.Dir = w.dir
	p.cmd.Env = append(append([]string{}, w.env...), env...)
	p.cmd.Stdout, p.cmd.Stderr = faultWriter{p, true}, faultWriter{p, false}
	require.NoError(w.t, p.cmd.Start(), "start %s", name)
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	w.mu.Lock()
	w.procs = append(w.procs, p)
	w.mu.Unlock()
	return p
}

// stopAll ends every process still running (cleanup), workers first.
func (w *faultWorld) stopAll() {
	w.mu.Lock()
	procs := append([]*faultProc(nil), w.procs...)
	w.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].term(10 * time.Second)
	}
	if w.t.Failed() || os.Getenv("SY_FAULTS_VERBOSE") != "" {
		for _, p := range procs {
			w.t.Logf("--- %s output (tail):\n%s", p.name, tail(p.output(), 6000))
		}
	}
}

// logCount counts the lines holding msg in the output of every process
// whose name starts with prefix.
func (w *faultWorld) logCount(prefix, msg string) int {
	w.mu.Lock()
	procs := append([]*faultProc(nil), w.procs...)
	w.mu.Unlock()
	n := 0
	for _, p := range procs {
		if strings.HasPrefix(p.name, prefix) {
			n += strings.Count(p.output(), msg)
		}
	}
	return n
}

// startServe starts `switchyard serve` on the world's port and data
// directory and waits until it serves.
func (w *faultWorld) startServe(name string) *faultProc {
	w.t.Helper()
	p := w.start(name, "serve", "--data-dir", w.data, "--listen", w.listen)
	p.waitOutput(w.t, "switchyard serve: data directory "+w.data+" on "+w.url, 30*time.Second)
	return p
}

// startWorker starts `switchyard worker --nats` for providers and waits
// until it runs.
func (w *faultWorld) startWorker(name, providers string, concurrency int) *faultProc {
	w.t.Helper()
	p := w.start(name, "worker", "--nats", w.url, "--data-dir", w.data, "--provider", providers,
		"--concurrency", fmt.Sprint(concurrency))
	p.waitOutput(w.t, "switchyard worker: "+providers, 30*time.Second)
	return p
}

// runArgs is `switchyard run --nats` of role with run id id.
func (w *faultWorld) runArgs(id, role string) []string {
	return []string{"run", "--nats", w.url, "--data-dir", w.data, "--sheet", w.sheet, "--role", role,
		"--parent", "claude", "--prompt", w.prompt, "--cwd", w.checkout, "--run-id", id, "--json"}
}

// cli runs the binary to completion within limit.
func (w *faultWorld) cli(limit time.Duration, args ...string) (int, string, string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = w.dir, w.env, 5*time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	noRaceReport(w.t, args, stderr.String())
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		w.t.Fatalf("switchyard %q did not finish within %s\nstdout:\n%s\nstderr:\n%s", args, limit, stdout.String(), stderr.String())
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		w.t.Fatalf("run switchyard %q: %v", args, err)
	}
	return 0, stdout.String(), stderr.String()
}

// faultClient is the test's own connection to the deployment: an engine
// client for Submit, and a recorder of every event and report the server
// acknowledged to anyone, kept across server restarts (the connection
// reconnects forever and the watches resume after the last sequence seen).
type faultClient struct {
	t     *testing.T
	nc    *nats.Conn
	js    *events.JetStream
	eng   *engine.Engine
	ctx   context.Context
	stop  context.CancelFunc
	group sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every new observation
	seen    map[uint64][]byte
	runs    map[string]*machines.Run
	reports map[string]map[uint64]seenReport // run → reports-stream seq → report
	applied map[string]uint64                // run → highest ReportSeq its events record
}

// seenReport is a report the client saw, and when.
type seenReport struct {
	report events.Report
	at     time.Time
}

// connectFaultClient connects to url (with opts, e.g. a dialer) and starts
// recording.
func connectFaultClient(t *testing.T, url, dataDir string, opts ...nats.Option) *faultClient {
	t.Helper()
	// The test observes as the engine would: with this start's secret.
	opts = append(opts, events.FileClientOptions(filepath.Join(dataDir, authFileName), events.RoleEngine)...)
	nc, err := events.Connect([]string{url}, opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	cancel()
	require.NoError(t, err)
	eng, err := engine.New(engine.Config{Store: js.Store(), Queue: js.Queue(), Claims: js.Claims(),
		DataDir: dataDir, Policy: policy.DefaultOptions(), Capacity: js.Capacity()})
	require.NoError(t, err)
	c := &faultClient{t: t, nc: nc, js: js, eng: eng, changed: make(chan struct{}),
		seen: map[uint64][]byte{}, runs: map[string]*machines.Run{}, reports: map[string]map[uint64]seenReport{},
		applied: map[string]uint64{}}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.group.Go(c.watchEvents)
	t.Cleanup(c.close)
	return c
}

func (c *faultClient) close() {
	c.stop()
	c.group.Wait()
	c.nc.Close()
}

// notify wakes waiters; the caller holds mu.
func (c *faultClient) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// watchEvents records every event of every run, resuming after the last
// one seen whenever the watch ends (a killed server), and starts a report
// recorder per run.
func (c *faultClient) watchEvents() {
	var after uint64
	for c.ctx.Err() == nil {
		ch, err := c.js.Store().Watch(c.ctx, "", after)
		if err != nil {
			sleepCtxT(c.ctx, 50*time.Millisecond)
			continue
		}
		for env := range ch {
			after = env.Seq
			c.record(env)
		}
		sleepCtxT(c.ctx, 50*time.Millisecond)
	}
}

func (c *faultClient) record(env events.Envelope) {
	b, err := events.Encode(env)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.t.Errorf("encode watched event %d: %v", env.Seq, err)
		return
	}
	if prev, ok := c.seen[env.Seq]; ok {
		if !bytes.Equal(prev, b) {
			c.t.Errorf("sequence %d seen twice with different content:\n%s\n%s", env.Seq, prev, b)
		}
		return
	}
	c.seen[env.Seq] = b
	c.applied[env.Run] = max(c.applied[env.Run], env.ReportSeq())
	r := c.runs[env.Run]
	if r == nil {
		r = &machines.Run{}
		c.runs[env.Run] = r
		run := env.Run
		c.group.Go(func() { c.watchReports(run) })
	}
	if err := r.Apply(env); err != nil {
		c.t.Errorf("watched log of run %s does not fold at %d: %v", env.Run, env.Seq, err)
	}
	c.notify()
}

// watchReports records the reports of run as the server stores them.
func (c *faultClient) watchReports(run string) {
	var after uint64
	for c.ctx.Err() == nil {
		ch, err := c.js.Queue().SubscribeReports(c.ctx, run, after)
		if err != nil {
			sleepCtxT(c.ctx, 50*time.Millisecond)
			continue
		}
		for rd := range ch {
			after = rd.Seq
			if rd.Err != nil {
				continue // a control input
			}
			c.mu.Lock()
			if c.reports[run] == nil {
				c.reports[run] = map[uint64]seenReport{}
			}
			if _, ok := c.reports[run][rd.Seq]; !ok {
				c.reports[run][rd.Seq] = seenReport{report: rd.Report, at: time.Now()}
				c.notify()
			}
			c.mu.Unlock()
		}
		sleepCtxT(c.ctx, 50*time.Millisecond)
	}
}

// waitUntil waits until cond holds for the recorded view, or fails after
// limit naming what.
func (c *faultClient) waitUntil(limit time.Duration, what string, cond func(v *faultView) bool) {
	c.t.Helper()
	deadline := time.After(limit)
	for {
		c.mu.Lock()
		ok := cond(&faultView{c})
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			c.mu.Lock()
			summary := (&faultView{c}).summary()
			c.mu.Unlock()
			c.t.Fatalf("timed out after %s waiting for %s; recorded: %s", limit, what, summary)
		}
	}
}

// read calls f with the recorded view.
func (c *faultClient) read(f func(v *faultView)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&faultView{c})
}

// faultView reads the recorded state; only inside waitUntil and read (mu
// held).
type faultView struct{ c *faultClient }

// lanes counts lanes by state over runs.
func (v *faultView) lanes() map[machines.State]int {
	n := map[machines.State]int{}
	for _, r := range v.c.runs {
		for _, l := range r.Lanes {
			n[l.State]++
		}
	}
	return n
}

// final reports whether every run in ids is final.
func (v *faultView) final(ids ...string) bool {
	for _, id := range ids {
		r := v.c.runs[id]
		if r == nil || r.Closed == nil {
			return false
		}
	}
	return true
}

// unappliedReport reports whether a report is stored that no recorded
// claim, finish or audit has applied yet.
func (v *faultView) unappliedReport() bool {
	for run, reps := range v.c.reports {
		for seq := range reps {
			if seq > v.c.applied[run] {
				return true
			}
		}
	}
	return false
}

func (v *faultView) summary() string {
	var b strings.Builder
	ids := make([]string, 0, len(v.c.runs))
	for id := range v.c.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := v.c.runs[id]
		fmt.Fprintf(&b, "run %s final=%v lanes=[", id, r.Closed != nil)
		for _, l := range r.Lanes {
			fmt.Fprintf(&b, " %s", l.State)
		}
		fmt.Fprintf(&b, " ] reports=%d; ", len(v.c.reports[id]))
	}
	return b.String()
}

// snapshotSeen returns a copy of every event recorded so far.
func (c *faultClient) snapshotSeen() map[uint64][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[uint64][]byte, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

// reportsSeenBefore lists, per run, the reports-stream sequences of
// reports the client saw before t.
func (c *faultClient) reportsSeenBefore(t time.Time) map[string][]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]uint64{}
	for run, reps := range c.reports {
		for seq, r := range reps {
			if r.at.Before(t) {
				out[run] = append(out[run], seq)
			}
		}
	}
	return out
}

func sleepCtxT(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// faultKill is one SIGKILL of serve.
type faultKill struct {
	Trigger string
	At      time.Time
	Restart time.Duration // from the kill until the new serve printed its banner
}

// killPhases is what the log (events recorded before the kill, by their
// engine timestamps) and the reports the client saw before the kill say
// the deployment was doing when serve died.
type killPhases struct {
	Created       int // lanes with no launch recorded yet
	Launching     int // launch recorded, no claim
	Running       int // claimed, not finished
	QueuedReports int // reports stored but not yet recorded in the log
	Final         int // final lanes
	NonFinalRuns  int
}

func (p killPhases) String() string {
	return fmt.Sprintf("created=%d launching=%d running=%d queued-reports=%d final=%d",
		p.Created, p.Launching, p.Running, p.QueuedReports, p.Final)
}

// phasesAt folds every run's final log up to the events stamped before at
// and counts the lanes by phase.
func phasesAt(t *testing.T, logs map[string][]events.Envelope, reportsSeen map[string][]uint64, at time.Time) killPhases {
	t.Helper()
	var p killPhases
	for run, envs := range logs {
		r := &machines.Run{}
		maxReport := uint64(0)
		for _, env := range envs {
			if !env.Time.Before(at) {
				break
			}
			require.NoError(t, r.Apply(env))
			maxReport = max(maxReport, env.ReportSeq())
		}
		if r.Created == nil {
			continue
		}
		if r.Closed == nil {
			p.NonFinalRuns++
		}
		for _, l := range r.Lanes {
			switch {
			case l.State.Final():
				p.Final++
			case l.State == machines.StateCreated:
				p.Created++
			case l.State == machines.StateLaunching:
				p.Launching++
			case l.State == machines.StateRunning:
				p.Running++
			}
		}
		for _, seq := range reportsSeen[run] {
			if seq > maxReport {
				p.QueuedReports++
			}
		}
	}
	return p
}

// executionInPath finds <run>/L<lane>/<execution> in an attempt's file
// path under the data directory's runs/.
var executionInPath = regexp.MustCompile(`/runs/([A-Za-z0-9_-]+)/L(\d+)/([A-Za-z0-9._-]+)/`)

// workloadsByExecution counts the simulated CLIs' workload invocations per
// execution id, read from the paths in their argv (grok's --prompt-file and
// devin's --prompt-file sit in the execution's directory). An invocation
// that names no execution fails the test: it could hide a second start.
func workloadsByExecution(t *testing.T, bin string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, inv := range simenv.Invocations(t, bin) {
		if inv.Kind != simlog.KindWorkload {
			continue
		}
		id := ""
		for _, a := range inv.Argv {
			if m := executionInPath.FindStringSubmatch(a); m != nil {
				id = m[3]
				break
			}
		}
		require.NotEmpty(t, id, "workload invocation names no execution: %q", inv.Argv)
		out[id]++
	}
	return out
}
