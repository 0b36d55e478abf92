// Package httpexample_test runs the HTTP API example (run.sh, curl and jq)
// against a real `switchyard serve --http` and worker on the simulated
// provider CLIs, so the example in docs/API.md keeps working.
package httpexample_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// needTools skips without curl or jq, saying how to get them; under
// CI=true (make test installs them: scripts/test-tools.sh) it fails instead.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"curl", "jq", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI=true: make test installs it when it can (scripts/test-tools.sh)", tool)
			}
			t.Skipf("%s is not installed: apt-get install -y %s to run the HTTP example", tool, tool)
		}
	}
}

// proc is a background switchyard process.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
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

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs bin with args in env; the test's cleanup stops it (SIGTERM,
// then SIGKILL after 15 s).
func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout = lockedWriter{&p.mu, &p.out}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.out}
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("switchyard %q ignored SIGTERM for 15s:\n%s", args, p.output())
		}
	})
	return p
}

// waitFor waits until re matches p's output and returns the match.
func waitFor(t *testing.T, p *proc, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("switchyard %q exited before printing %s:\n%s", p.cmd.Args[1:], re, p.output())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("switchyard %q did not print %s within 2m:\n%s", p.cmd.Args[1:], re, p.output())
	return nil
}

// TestHTTPExample builds switchyard, starts serve --http and a worker on
// the simulated CLIs (grok succeeds, devin runs until cancelled), and runs
// run.sh: its submission reaches final with the grok lane complete, the
// repeated submission is the same run, the cancelled run ends cancelled
// after its devin attempt started, and the unknown run is a JSON
// not_found. The script checks every status code itself and exits
// non-zero on any other.
func TestHTTPExample(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "switchyard")
	build := exec.Command(goTool(), "build", "-o", bin, "../../cmd/switchyard")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build switchyard: %v\n%s", err, out)
	}
	sim := simenv.Install(t, "", simenv.Config{HangCapSeconds: 120, Providers: map[string]simenv.ProviderConfig{
		"grok": {Scenario: "success"}, "devin": {Scenario: "long-running"},
	}})
	// A read-only Grok lane must see a real checkout, never one under a
	// temporary directory.
	data, checkout, home := filepath.Join(dir, "data"), simenv.Checkout(t), filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "README.md"), []byte("# Checkout\n\nA file to summarize.\n"), 0o644))
	env := []string{"PATH=" + sim + ":/usr/local/bin:/usr/bin:/bin", simenv.SandboxWritable + "=" + sim,
		"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "LANG=C.UTF-8"}

	serve := start(t, bin, env, "serve", "--data-dir", data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	url := waitFor(t, serve, regexp.MustCompile(`switchyard serve: http on (http://[^\s]+)/`))[1]
	worker := start(t, bin, env, "worker", "--data-dir", data, "--provider", "grok,devin")
	waitFor(t, worker, regexp.MustCompile(`switchyard worker: `))

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	script := exec.CommandContext(ctx, "bash", "run.sh")
	script.Env = append(env, "SWITCHYARD_URL="+url, "SWITCHYARD_DATA_DIR="+data, "CHECKOUT="+checkout, "WAIT_SECONDS=180")
	var stdout, stderr bytes.Buffer
	script.Stdout, script.Stderr = &stdout, &stderr
	err := script.Run()
	logs := func() string {
		return "stdout:\n" + stdout.String() + "\nstderr:\n" + stderr.String() + "\nserve:\n" + serve.output() + "\nworker:\n" + worker.output()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		t.Fatalf("run.sh: %v\n%s", err, logs())
	}
	out := stdout.String()
	for _, want := range []string{
		`{"run":"http-example-1","created":true}`,
		`{"run":"http-example-1","created":false}`,
		"run http-example-1: final, lane 0 complete",
		`{"run":"http-example-2","created":true}`,
		`{"run":"http-example-2","message":"cancel requested for run http-example-2"}`,
		"run http-example-2: final, cancelled true, lane 0 cancelled",
		`{"error":{"code":"not_found","message":"run http-example-none: unknown run","field":"id"}}`,
	} {
		require.Contains(t, out, want, logs())
	}
	// The devin attempt was started and then signalled: the cancel reached
	// a running child, not a queued job.
	var signalled bool
	for _, sig := range simenv.Signals(t, sim) {
		signalled = signalled || (sig.Provider == "devin" && sig.Signal == "SIGTERM")
	}
	require.True(t, signalled, "the cancelled devin attempt got SIGTERM\n%s", logs())
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
