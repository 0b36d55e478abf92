package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// TestOrchestratorAgainstServeAndWorker builds the switchyard binary and
// this example, starts a real `switchyard serve` and `switchyard worker`
// on the simulated provider CLIs (grok's attempts fail malformed after
// starting), and runs the example. It proves the client end to end: the
// example dials the serve through the data directory, submits the panel,
// watches lane 0 wait for a verdict after its grok writer failed, answers
// it (clear, from the checkout's HEAD) through the client, and prints the
// final report, in which every lane delivered and lane 0 fell back to
// devin from the reviewed state; grok's workload ran once, never twice.
func TestOrchestratorAgainstServeAndWorker(t *testing.T) {
	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	sy := filepath.Join(dir, "switchyard")
	orch := filepath.Join(dir, "orchestrator")
	for _, b := range [][2]string{{sy, "./cmd/switchyard"}, {orch, "./examples/orchestrator"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Dir = root
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build %s: %s", b[1], out)
	}
	bin := simenv.Install(t, "", simenv.Config{HangCapSeconds: 60, Providers: map[string]simenv.ProviderConfig{
		"grok": {Scenario: "malformed"},
	}})
	data, checkout := filepath.Join(dir, "data"), filepath.Join(dir, "checkout")
	require.NoError(t, os.MkdirAll(checkout, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "README.md"), []byte("# Checkout\n\nA tpyo.\n"), 0o644))
	gitInit(t, checkout)
	env := []string{
		"PATH=" + bin + ":/usr/bin:/bin",
		simenv.SandboxWritable + "=" + bin,
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"LANG=C.UTF-8",
	}

	serve := startProc(t, env, sy, "serve", "--data-dir", data, "--listen", "127.0.0.1:0")
	serve.waitOutput(t, "switchyard serve: data directory "+data, 60*time.Second)
	worker := startProc(t, env, sy, "worker", "--data-dir", data, "--provider", "grok,devin", "--concurrency", "3")
	worker.waitOutput(t, "switchyard worker: grok,devin", 60*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, orch, "-data-dir", data, "-checkout", checkout, "-run-id", "panel", "-timeout", "3m")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out := stdout.String()
	if err != nil {
		hist := exec.Command(sy, "history", "--data-dir", data, "--run", "panel")
		hist.Env = env
		h, _ := hist.CombinedOutput()
		t.Fatalf("orchestrator: %v\nstdout:\n%s\nstderr:\n%s\nserve:\n%s\nworker:\n%s\nhistory:\n%s", err, out, stderr.String(), serve.output(), worker.output(), h)
	}

	head := strings.TrimSpace(git(t, checkout, "rev-parse", "HEAD"))
	require.Contains(t, out, "connected to the serve of "+data)
	require.Contains(t, out, "submitted run panel\n")
	require.Contains(t, out, "(grok:grok-4.7@xhigh), waiting for verdict\n")
	require.Contains(t, out, "answered lane 0: clear, the next writer starts from "+head+"\n")
	require.Contains(t, out, "lane 0 swarm workers#1: complete via devin:swe-2@high;")
	require.Contains(t, out, "lane 1 swarm workers#2: complete via devin:swe-2@high;")
	require.Contains(t, out, "lane 2 swarm workers#3: complete via devin:swe-2@medium;")
	require.Contains(t, out, "the parent's clear verdict named")
	require.Len(t, simlog.Filter(simenv.Invocations(t, bin), "grok", simlog.KindWorkload), 1, "grok's writer ran once")

	// The same id again is the same run: the example follows it to its
	// report without starting anything.
	again := exec.CommandContext(ctx, orch, "-data-dir", data, "-checkout", checkout, "-run-id", "panel", "-timeout", "1m")
	again.Env = env
	out2, err := again.CombinedOutput()
	require.NoError(t, err, "%s", out2)
	require.Contains(t, string(out2), "submitted run panel\n")
	require.NotContains(t, string(out2), "answered lane", "the verdict is not given twice")
	require.Contains(t, string(out2), "lane 0 swarm workers#1: complete via devin:swe-2@high;")
	require.Len(t, simlog.Filter(simenv.Invocations(t, bin), "grok", simlog.KindWorkload), 1, "nothing ran again")
}

// proc is a background process whose output is kept.
type proc struct {
	mu   sync.Mutex
	out  bytes.Buffer
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func startProc(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p, p
	require.NoError(t, p.cmd.Start())
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) waitOutput(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.output(), want) {
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %q:\n%s", p.cmd.Args, want, p.output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within %s:\n%s", p.cmd.Args, want, limit, p.output())
		}
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.email=test@example.com", "-c", "user.name=test", "commit", "-q", "-m", "init")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}
