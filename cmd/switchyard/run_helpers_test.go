package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// This file holds the machinery of the engine command tests: a sandbox (a
// data directory, a checkout, a prompt, a sheet, and the simulated provider
// CLIs first on PATH), running the real binary in it to completion, and
// starting it in the background (serve, worker) with a bounded stop.

// engineSandbox is one test's world. Every command runs with a constructed
// environment: PATH with the simulators first, HOME and XDG_STATE_HOME
// inside the sandbox, so nothing reaches the real home.
type engineSandbox struct {
	dir      string // root of everything below
	data     string // --data-dir
	checkout string
	prompt   string
	bin      string // simulated CLIs
	env      []string
}

// newEngineSandbox installs the simulators replaying scenarios (provider →
// scenario; absent providers replay success) and writes sheet.
func newEngineSandbox(t *testing.T, scenarios map[string]string, sheet string) *engineSandbox {
	t.Helper()
	return newEngineSandboxConfig(t, simenv.Scenarios(scenarios), sheet)
}

// newEngineSandboxConfig is newEngineSandbox with a full simulator
// configuration (scenario queues).
func newEngineSandboxConfig(t *testing.T, cfg simenv.Config, sheet string) *engineSandbox {
	t.Helper()
	dir := t.TempDir()
	cfg.HangCapSeconds = 60 // a failed test never leaves a simulator behind for long
	s := &engineSandbox{
		dir: dir, data: filepath.Join(dir, "data"), checkout: simenv.Checkout(t), // outside temp: a read-only Grok lane refuses a temporary checkout
		prompt: filepath.Join(dir, "prompt.md"), bin: simenv.Install(t, "", cfg),
	}
	require.NoError(t, os.MkdirAll(s.checkout, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.checkout, "README.md"), []byte("# Checkout\n"), 0o644))
	require.NoError(t, os.WriteFile(s.prompt, []byte("Summarize README.md in one sentence.\n"), 0o600))
	require.NoError(t, os.WriteFile(s.sheetPath(), []byte(sheet), 0o600))
	s.env = []string{
		"PATH=" + s.bin + ":/usr/bin:/bin",
		simenv.SandboxWritable + "=" + s.bin,
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"LANG=C.UTF-8",
	}
	return s
}

func (s *engineSandbox) sheetPath() string { return filepath.Join(s.dir, "test.sheet") }

// runArgs is `switchyard run` on the sandbox for role with parent claude,
// followed by extra.
func (s *engineSandbox) runArgs(role string, extra ...string) []string {
	return append([]string{"run", "--data-dir", s.data, "--sheet", s.sheetPath(), "--role", role,
		"--parent", "claude", "--prompt", s.prompt, "--cwd", s.checkout}, extra...)
}

// run runs the binary in the sandbox to completion, bounded by limit.
func (s *engineSandbox) run(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("switchyard %q did not finish within %s\nstdout:\n%s\nstderr:\n%s", args, limit, stdout.String(), stderr.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run switchyard %q: %v", args, err)
	}
	noRaceReport(t, args, stderr.String())
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// bgProcess is a binary running in the background.
type bgProcess struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// output returns what the process printed so far.
func (p *bgProcess) output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

// start starts the binary in the background. Cleanup stops it (SIGTERM,
// then SIGKILL after 10 s) if the test did not.
func (s *engineSandbox) start(t *testing.T, args ...string) *bgProcess {
	t.Helper()
	p := &bgProcess{cmd: exec.Command(binPath, args...), done: make(chan struct{})}
	p.cmd.Dir = s.dir
	p.cmd.Env = s.env
	p.cmd.Stdout = lockedWriter{&p.mu, &p.stdout}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.stderr}
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM and waits (10 s, then SIGKILL); it returns the exit
// code.
func (p *bgProcess) stop(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
			out, errOut := p.output()
			t.Errorf("switchyard %q ignored SIGTERM for 10s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], out, errOut)
		}
	}
	_, errOut := p.output()
	noRaceReport(t, p.cmd.Args[1:], errOut)
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// waitServeInfo waits until the data directory's serve.json names a
// listening process and returns it.
func waitServeInfo(t *testing.T, dir string, p *bgProcess) serveInfo {
	t.Helper()
	var info serveInfo
	err := waitFor(20*time.Second, "serve.json", func() (bool, error) {
		select {
		case <-p.done:
			out, errOut := p.output()
			return false, errors.New("serve exited early\nstdout:\n" + out + "\nstderr:\n" + errOut)
		default:
		}
		var err error
		info, err = readServeInfo(dir)
		return err == nil, nil
	})
	require.NoError(t, err)
	return info
}

// waitOutput waits until the process has printed want on stdout.
func waitOutput(t *testing.T, p *bgProcess, want string) {
	t.Helper()
	require.NoError(t, waitFor(20*time.Second, want, func() (bool, error) {
		out, errOut := p.output()
		select {
		case <-p.done:
			return strings.Contains(out, want), errors.New("process exited\nstdout:\n" + out + "\nstderr:\n" + errOut)
		default:
		}
		return strings.Contains(out, want), nil
	}))
}
