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
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
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
		RunnerConfig: func(events.Job) runner.Config { return runner.Config{KillGrace: c.KillGrace} },
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
