package docs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// marker precedes each block of the README's quick start:
// "<!-- quickstart: NAME -->" on the line before a ```sh fence.
var marker = regexp.MustCompile("(?m)^<!-- quickstart: ([a-z0-9 ]+) -->\n```sh\n((?s:.*?))```\n")

// quickStart returns the README's marked shell blocks by name.
func quickStart(t *testing.T) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, m := range marker.FindAllStringSubmatch(read(t, "README.md"), -1) {
		if _, dup := blocks[m[1]]; dup {
			t.Fatalf("README.md marks two quick-start blocks %q", m[1])
		}
		blocks[m[1]] = m[2]
	}
	for _, name := range []string{"demo", "every terminal", "terminal 1", "terminal 2", "terminal 3"} {
		if strings.TrimSpace(blocks[name]) == "" {
			t.Fatalf("README.md has no quick-start block marked %q (found %d blocks)", name, len(blocks))
		}
	}
	return blocks
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shell is one terminal of the quick start: bash in the clone's root with
// the fresh shell's environment.
func shell(env []string, script string, out *syncBuffer) *exec.Cmd {
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Dir = repoRoot
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// freshEnv is the environment of a new login shell on this machine, in a
// home of its own: no Switchyard or NATS variable leaks in from the test's
// caller, and Go's caches stay where they are so the build is the warm one
// a returning user has.
func freshEnv(t *testing.T, home, tmp string) []string {
	t.Helper()
	goenv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		goenv[k] = strings.TrimSpace(string(out))
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "SWITCHYARD_"), strings.HasPrefix(k, "NATS_"), strings.HasPrefix(k, "XDG_"),
			k == "HOME", k == "TMPDIR", goenv[k] != "":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "TMPDIR="+tmp)
	for k, v := range goenv {
		env = append(env, k+"="+v)
	}
	return env
}

// TestQuickStart pastes the README's quick start into real shells, as a
// newcomer would: `make demo` (which builds the binary and the simulated
// CLIs), then the serve, worker and run terminals, each after the block
// every terminal gets. It asserts the run ends with a delivered result:
// exit 0 under --fail-if-undelivered, every lane complete, both providers
// delivered, and status listing the run final.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs serve, a worker and a run")
	}
	blocks := quickStart(t)
	home, tmp := t.TempDir(), t.TempDir()
	env := freshEnv(t, home, tmp)

	var demo syncBuffer
	cmd := shell(env, blocks["demo"], &demo)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := runUntil(ctx, cmd); err != nil {
		t.Fatalf("the demo block failed: %v\n%s", err, demo.String())
	}
	for _, want := range []string{"3 lanes: 3 complete", "execution_policy_blocked", "no divergence", "remove it with: rm -rf " + tmp + "/switchyard-demo."} {
		if !strings.Contains(demo.String(), want) {
			t.Fatalf("the demo's output lacks %q:\n%s", want, demo.String())
		}
	}
	// The demo output the docs show has no pre-check block: every provider
	// it launches has its CLI and verified containment (finding 7).
	if strings.Contains(demo.String(), "pre-check:") {
		t.Errorf("the demo printed a pre-check block the documentation does not show:\n%s", demo.String())
	}

	// Terminals 1 and 2 run until stopped: start each, wait for the line
	// that says it is up (the worker's once it has subscribed to its
	// queues), and stop it with Ctrl-C (SIGINT to its group) at the end,
	// as the README says.
	ready := map[string]string{"terminal 1": "stop with Ctrl-C", "terminal 2": "worker started"}
	for _, name := range []string{"terminal 1", "terminal 2"} {
		out := &syncBuffer{}
		cmd := shell(env, blocks["every terminal"]+blocks[name], out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { stop(t, name, cmd, done, out) })
		waitFor(t, name, out, done, ready[name])
	}

	var run syncBuffer
	cmd = shell(env, blocks["every terminal"]+blocks["terminal 3"], &run)
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer rcancel()
	if err := runUntil(rctx, cmd); err != nil {
		t.Fatalf("terminal 3 failed (exit 3 is --fail-if-undelivered: no lane delivered): %v\n%s", err, run.String())
	}
	got := run.String()
	if strings.Contains(got, "no provider delivered") {
		t.Fatalf("the run delivered nothing:\n%s", got)
	}
	for _, want := range []string{"3 lanes: 3 complete", "2 distinct providers delivered", "grok", "devin"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal 3's output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`(?m)swarm workers +final`).MatchString(got) {
		t.Errorf("status does not list the run final:\n%s", got)
	}
	// The run used the data directory the README exports, under the new home.
	if _, err := os.Stat(filepath.Join(home, "switchyard-quickstart", "serve.json")); err != nil {
		t.Errorf("no serve for the README's data directory: %v", err)
	}
}

// runUntil runs cmd to its end, killing its process group when ctx ends.
func runUntil(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return errors.New("timed out")
	}
}

// waitFor waits until out shows want, failing when the process ends first
// or after a generous deadline (2 cores shared by many tests).
func waitFor(t *testing.T, name string, out *syncBuffer, done chan error, want string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("%s ended before saying %q: %v\n%s", name, want, err, out.String())
		case <-deadline:
			t.Fatalf("%s did not say %q within 2 minutes:\n%s", name, want, out.String())
		case <-tick.C:
		}
	}
}

// stop is Ctrl-C in a terminal: SIGINT to its process group, then a kill
// if it has not ended within a minute.
func stop(t *testing.T, name string, cmd *exec.Cmd, done chan error, out *syncBuffer) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Errorf("%s did not stop on Ctrl-C within a minute:\n%s", name, out.String())
	}
}
