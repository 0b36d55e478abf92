package events_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The fault tests of this package run NATS servers in helper processes —
// the test binary executed again with envFaultsHelper set — so that a
// server can be killed with SIGKILL, which no in-process server allows:
// Shutdown is graceful (it flushes, and steps Raft leaders down first).

// envFaultsHelper selects the helper a re-executed test binary runs; its
// configuration is JSON in envFaultsConfig.
const (
	envFaultsHelper = "SY_FAULTS_HELPER"
	envFaultsConfig = "SY_FAULTS_CONFIG"
)

// faultHelpers are the helper process mains, by name.
var faultHelpers = map[string]func(cfg []byte) error{}

// TestFaultsHelperProcess is not a test: when the binary is re-executed as
// a helper it runs the selected helper and exits; otherwise it returns at
// once.
func TestFaultsHelperProcess(t *testing.T) {
	name := os.Getenv(envFaultsHelper)
	if name == "" {
		return
	}
	helper, ok := faultHelpers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown fault helper %q\n", name)
		os.Exit(2)
	}
	if err := helper([]byte(os.Getenv(envFaultsConfig))); err != nil {
		fmt.Fprintf(os.Stderr, "fault helper %s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helperProc is a running helper process whose stdout lines are handed to
// a callback as they arrive.
type helperProc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  []string
	update chan struct{} // closed and replaced on every line
	done   chan struct{} // closed once stdout is drained and the process reaped
}

// startHelper starts helper name with cfg (JSON-encoded). Every stdout line
// is recorded (see waitLine, linesSnapshot). Cleanup kills it.
func startHelper(t *testing.T, label, name string, cfg any) *helperProc {
	t.Helper()
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	p := &helperProc{name: label, update: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(self, "-test.run=^TestFaultsHelperProcess$", "-test.count=1")
	p.cmd.Env = append(os.Environ(), envFaultsHelper+"="+name, envFaultsConfig+"="+string(b))
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, b: &p.stderr}
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.update)
			p.update = make(chan struct{})
			p.mu.Unlock()
		}
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("--- %s stderr (tail):\n%s", label, p.stderrTail(4000))
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *helperProc) stderrTail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stderr.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// waitLines waits until cond holds for the lines printed so far.
func (p *helperProc) waitLines(t *testing.T, limit time.Duration, what string, cond func(lines []string) bool) {
	t.Helper()
	deadline := time.After(limit)
	for {
		p.mu.Lock()
		ok := cond(p.lines)
		ch := p.update
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-p.done:
			p.mu.Lock()
			ok := cond(p.lines)
			p.mu.Unlock()
			if ok {
				return
			}
			t.Fatalf("%s exited before %s; stderr:\n%s", p.name, what, p.stderrTail(4000))
		case <-deadline:
			t.Fatalf("%s: timed out after %s waiting for %s; stderr:\n%s", p.name, limit, what, p.stderrTail(4000))
		}
	}
}

// waitLine waits for a line starting with prefix and returns it.
func (p *helperProc) waitLine(t *testing.T, limit time.Duration, prefix string) string {
	t.Helper()
	var found string
	p.waitLines(t, limit, "a line "+prefix, func(lines []string) bool {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// kill9 SIGKILLs the helper and waits until its output is drained.
func (p *helperProc) kill9(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	return at
}

// linesSnapshot returns every complete line printed.
func (p *helperProc) linesSnapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// stdoutLine writes one line to stdout in a single write, so concurrent
// writers never interleave within a line.
var stdoutMu sync.Mutex

func stdoutLine(format string, a ...any) {
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	os.Stdout.WriteString(fmt.Sprintf(format, a...) + "\n")
}
