package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// The worker crash seen from the engine: a worker process (this test
// binary run again as a helper) is killed with SIGKILL while its child
// runs; the attempt must end through the engine, within a time set by the
// ack wait and the lease, as an abandoned, failed attempt that is never
// launched again. activities/worker_crash_test.go proves the worker half
// (the child dies, the stale lease is abandoned); this file proves the
// lane's half.

// envEngineHelper makes the test binary a worker process; its value is a
// JSON faultWorkerConfig.
const envEngineHelper = "SY_ENGINE_FAULTS_WORKER"

// faultWorkerConfig is the helper worker's configuration.
type faultWorkerConfig struct {
	URL       string            `json:"url"`
	WorkerID  string            `json:"workerId"`
	Providers []policy.Provider `json:"providers"`
	LeaseTTL  time.Duration     `json:"leaseTtl"`
	AckWait   time.Duration     `json:"ackWait"`
	Env       map[string]string `json:"env"`
}

// TestFaultsWorkerHelperProcess is not a test: re-executed with
// envEngineHelper set, the binary runs a worker until SIGTERM or SIGKILL
// and exits; otherwise it returns at once.
func TestFaultsWorkerHelperProcess(t *testing.T) {
	raw := os.Getenv(envEngineHelper)
	if raw == "" {
		return
	}
	os.Exit(faultWorkerMain(raw))
}

func faultWorkerMain(raw string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var c faultWorkerConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		log.Error("bad config", "err", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	nc, err := events.Connect([]string{c.URL})
	if err != nil {
		log.Error("connect", "err", err)
		return 1
	}
	defer nc.Close()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	if err != nil {
		log.Error("open", "err", err)
		return 1
	}
	w, err := activities.NewWorker(activities.WorkerConfig{
		Queue: js.Queue(), Claims: js.Claims(), Store: js.Store(), Providers: c.Providers, WorkerID: c.WorkerID,
		LeaseTTL: c.LeaseTTL, AckWait: c.AckWait, Env: c.Env, Logger: log,
	})
	if err != nil {
		log.Error("worker", "err", err)
		return 1
	}
	fmt.Println("WORKER READY")
	if err := w.Run(ctx); err != nil {
		log.Error("run", "err", err)
		return 1
	}
	return 0
}

// Short leases, so an abandoned attempt is reported within seconds.
const (
	crashLeaseTTL = time.Second
	crashAckWait  = time.Second
)

// listeningHarness is a harness on a JetStream server that other
// processes can reach.
func listeningHarness(t *testing.T) (*harness, *events.Embedded) {
	t.Helper()
	srv := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithFsync(events.FsyncInterval))
	js := eventstest.Open(t, srv, events.JetStreamConfig{})
	h := &harness{t: t, backend: jetstream, data: t.TempDir(), repo: gitRepo(t)}
	h.store, h.queue, h.claims = js.Store(), js.Queue(), js.Claims()
	h.capacity = seeded(t, js.Capacity())
	h.cfg = engine.Config{
		Store: h.store, Queue: h.queue, Claims: h.claims, DataDir: h.data,
		Logger:   slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
		Capacity: h.capacity,
	}
	eng, err := engine.New(h.cfg)
	require.NoError(t, err)
	h.eng = eng
	return h, srv
}

// startWorkerProcess starts a helper worker process and waits until it
// consumes jobs.
func startWorkerProcess(t *testing.T, cfg faultWorkerConfig) (*exec.Cmd, <-chan struct{}, *strings.Builder) {
	t.Helper()
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^TestFaultsWorkerHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envEngineHelper+"="+string(b))
	var mu sync.Mutex
	stderr := &strings.Builder{}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return stderr.Write(p)
	})
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "WORKER READY" {
				close(ready)
			}
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			mu.Lock()
			t.Logf("worker process stderr:\n%s", stderr.String())
			mu.Unlock()
		}
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("worker process exited before it was ready:\n%s", stderr.String())
	case <-time.After(waitTimeout):
		t.Fatal("worker process not ready")
	}
	return cmd, done, stderr
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// processGone reports whether pid has exited (no such process, or a zombie).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// TestFaultsWorkerCrashThroughTheEngine SIGKILLs the worker process
// running a lane's attempt (a long-running simulated CLI) and proves,
// through the engine, for a read-only lane and for a writer lane: the
// child dies with its worker; a second worker, once the job comes back
// after the ack wait and the lease has gone stale, reports the attempt
// abandoned; the engine finishes it failed with processStarted unknown
// and stops the lane (the sheet's fallback would allow terminal failures,
// but a possibly started attempt never advances) within ack wait + 1.25 ×
// lease TTL plus slack of the kill; the execution is never launched or
// started again, no fallback job is published, a writer's worktree is kept;
// replay verifies the run.
//
// A started writer does not pause for inspection here: DESIGN.md says an
// abandoned writer attempt normalizes to inspect, but the engine follows
// the seed (an unsettled started failure is failed, which never advances),
// as engine/doc.go records; docs/GUARANTEES.md lists the difference.
func TestFaultsWorkerCrashThroughTheEngine(t *testing.T) {
	t.Parallel()
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			h, srv := listeningHarness(t)
			h.run()
			cfg := simenv.Scenarios(map[string]string{"codex": "long-running", "cursor": "success"})
			cfg.HangCapSeconds = 60
			bin := simenv.Install(t, "", cfg)
			home := filepath.Join(t.TempDir(), "home")
			require.NoError(t, os.Mkdir(home, 0o755))
			env := map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"}

			run := h.submit(sheet(`# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure","deadline-exceeded"]}`,
				"bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", mode)
			cmd, exited, _ := startWorkerProcess(t, faultWorkerConfig{URL: srv.ClientURL(), WorkerID: "doomed-worker",
				Providers: []policy.Provider{policy.Codex}, LeaseTTL: crashLeaseTTL, AckWait: crashAckWait, Env: env})
			h.waitLane(run, 0, machines.StateRunning)
			var child simlog.Invocation
			require.Eventually(t, func() bool {
				invs := simlog.Filter(simenv.Invocations(t, bin), "codex", simlog.KindWorkload)
				if len(invs) == 0 {
					return false
				}
				child = invs[0]
				return true
			}, waitTimeout, 10*time.Millisecond, "the simulated CLI started")
			require.False(t, processGone(child.Pid))

			killedAt := time.Now()
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-exited
			require.Eventually(t, func() bool { return processGone(child.Pid) }, waitTimeout, 10*time.Millisecond,
				"the simulated CLI (pid %d) outlived its killed worker", child.Pid)

			// The second worker runs both providers, so a relaunch or a
			// fallback would be executed and seen.
			w, err := activities.NewWorker(activities.WorkerConfig{
				Queue: h.queue, Claims: h.claims, Store: h.store, Providers: []policy.Provider{policy.Codex, policy.Cursor},
				WorkerID: "survivor", LeaseTTL: crashLeaseTTL, AckWait: crashAckWait, Env: env,
				Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
			})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := w.Run(ctx); err != nil {
					t.Errorf("worker: %v", err)
				}
			})
			defer func() { cancel(); wg.Wait() }()

			r, envs := h.waitFinal(run)
			elapsed := time.Since(killedAt)
			bound := crashAckWait + crashLeaseTTL*5/4 + 10*time.Second // redelivery + staleness + scheduling slack under -race on a loaded machine
			t.Logf("%s lane final %s after the worker's SIGKILL (bound %s)", mode, elapsed.Round(time.Millisecond), bound)
			require.Less(t, elapsed, bound)
			require.Equal(t, machines.StateStopped, r.Lanes[0].State)
			require.Equal(t, string(policy.StopNotEligible), r.Lanes[0].Reason)
			fins := ofType(envs, events.TypeFinish)
			require.Len(t, fins, 1)
			fin := fins[0].Payload.(events.Finish)
			require.True(t, fin.Abandoned)
			require.Equal(t, "survivor", fin.WorkerID)
			require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
			require.Nil(t, fin.Event.ProcessStarted)
			launches := ofType(envs, events.TypeLaunch)
			require.Len(t, launches, 1, "never launched again")
			require.Empty(t, ofType(envs, events.TypeInspect), "the engine does not pause an abandoned writer for inspection")
			require.Len(t, simlog.Filter(simenv.Invocations(t, bin), "codex", simlog.KindWorkload), 1, "never started again")
			require.Empty(t, simlog.Filter(simenv.Invocations(t, bin), "cursor", simlog.KindWorkload), "no fallback")
			if mode == policy.IsolatedWrite {
				wt := launches[0].Payload.(events.Launch).Paths.Cwd
				require.Contains(t, wt, filepath.Join(h.data, "worktrees"))
				_, err := os.Stat(filepath.Join(wt, "README.md"))
				require.NoError(t, err, "the writer's worktree is kept")
			}
			h.verifyReplay(run)
		})
	}
}
