package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// envWorkerProcess makes the test binary a worker process (TestMain):
// its value is a JSON workerProcessConfig.
const envWorkerProcess = "SY_WORKER_PROCESS"

// workerProcessConfig is what a worker helper process runs: a codex
// worker against the server at URL.
type workerProcessConfig struct {
	URL       string            `json:"url"`
	WorkerID  string            `json:"workerId"`
	LeaseTTL  time.Duration     `json:"leaseTtl"`
	AckWait   time.Duration     `json:"ackWait"`
	Env       map[string]string `json:"env"`
	KillGrace time.Duration     `json:"killGrace"`
}

// workerProcessMain runs a worker until SIGTERM or SIGINT (or SIGKILL, the
// point of the crash test).
func workerProcessMain() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var c workerProcessConfig
	if err := json.Unmarshal([]byte(os.Getenv(envWorkerProcess)), &c); err != nil {
		log.Error("bad worker process config", "err", err)
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
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	js, err := events.OpenJetStream(octx, nc, events.JetStreamConfig{})
	cancel()
	if err != nil {
		log.Error("open streams", "err", err)
		return 1
	}
	w, err := NewWorker(WorkerConfig{
		Queue: js.Queue(), Claims: js.Claims(), Store: js.Store(),
		Providers: []policy.Provider{policy.Codex}, WorkerID: c.WorkerID,
		LeaseTTL: c.LeaseTTL, AckWait: c.AckWait, Env: c.Env, Logger: log,
		RunnerConfig: func(events.Job) Config { return Config{KillGrace: c.KillGrace} },
	})
	if err != nil {
		log.Error("new worker", "err", err)
		return 1
	}
	if err := w.Run(ctx); err != nil {
		log.Error("run", "err", err)
		return 1
	}
	return 0
}

// lockedBuffer collects a helper process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWorkerCrash SIGKILLs a worker process while its child runs: the
// child dies with it (parent-death signal), and a second worker, once the
// job comes back after the ack wait and the lease has gone stale, reports
// the execution abandoned without running it again.
func TestWorkerCrash(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the child dies with its worker through Linux's parent-death signal")
	}
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, true)
	job := e.newJob(0)
	e.publish(job)

	cfg, err := json.Marshal(workerProcessConfig{URL: e.srv.ClientURL(), WorkerID: "doomed-worker",
		LeaseTTL: testLeaseTTL, AckWait: testAckWait, Env: e.env, KillGrace: 500 * time.Millisecond})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorkerProcess+"="+string(cfg))
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	waited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-waited
		if t.Failed() {
			t.Logf("worker process output:\n%s", out.String())
		}
	})

	claimed := e.waitReport(events.ReportClaimed, job.ExecutionID)
	require.Equal(t, "doomed-worker", claimed.WorkerID)
	inv := e.waitWorkload(job)
	require.Equal(t, cmd.Process.Pid, inv.Ppid, "the worker process started the CLI itself")
	require.False(t, processGone(inv.Pid))

	killedAt := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-waited
	require.Eventually(t, func() bool { return processGone(inv.Pid) }, 5*time.Second, 10*time.Millisecond,
		"the simulated CLI (pid %d) outlived its killed worker", inv.Pid)

	w := e.startWorker(e.workerConfig("worker-b"))
	ab := e.waitReport(events.ReportAbandoned, job.ExecutionID)
	w.waitEvent(t, evAbandonedStale, job.ExecutionID, 1)
	bound := testAckWait + testLeaseTTL + 5*time.Second // redelivery + staleness + scheduling slack
	require.Less(t, time.Since(killedAt), bound, "abandoned within a time set by the ack wait and the lease")
	require.Equal(t, "worker-b", ab.WorkerID)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportAbandoned},
		kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	require.Len(t, e.workloads(job), 1, "an abandoned execution is never relaunched")
	require.Empty(t, e.signalsTo(inv.Pid), "the child was killed outright, not asked to stop")
	l := e.claimOf(job)
	require.Equal(t, events.LeaseAbandoned, l.State)
	require.Equal(t, "worker-b", l.AbandonedBy)
}

// processGone reports whether pid has exited: no such process, or a
// zombie nobody has reaped yet (an orphan waits for init to reap it).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	i := bytes.LastIndexByte(b, ')') // the state follows "(comm) "
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
