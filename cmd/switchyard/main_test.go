package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/testdata/golden"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// binPath is the switchyard binary built once by TestMain.
var binPath string

// repoRoot is the absolute path of the repository; golden commands run there
// so fixture paths read like the README's.
var repoRoot string

func TestMain(m *testing.M) {
	sandbox.Enter() // this test binary is the sandbox launcher of the runners it starts
	if cfg := os.Getenv(envClusterNode); cfg != "" {
		os.Exit(clusterNodeMain(cfg))
	}
	dir, err := os.MkdirTemp("", "switchyard-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdtemp:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "switchyard")
	// The end-to-end, golden and crash tests drive this binary: under
	// -race it is built with the race detector too, so a race in serve,
	// worker or run is caught where it happens.
	args := []string{"build", "-o", binPath, "-ldflags", "-X main.version=test"}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build switchyard: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	if repoRoot, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		fmt.Fprintln(os.Stderr, "repo root:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// noRaceReport fails the test when a race-built switchyard reported a data
// race on stderr. Such a process also exits 66, but only when it exits by
// itself: one stopped by a signal, or a test that ignores the exit code,
// would not show it.
func noRaceReport(t *testing.T, args []string, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("switchyard %q reported a data race:\n%s", args, stderr)
	}
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// runBinary runs the built switchyard with args in the repository root.
func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = repoRoot
	// The caller's NATS settings (NATS_URL is --nats's default) must not
	// send a test's command to the developer's server.
	cmd.Env = withoutNATSEnv(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run switchyard %q: %v", args, err)
	}
	noRaceReport(t, args, stderr.String())
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// render formats a run for a golden file: the command, the exit code, and
// both streams, with machine-specific paths replaced by $TMP and $REPO.
func (r result) render(args []string, tmp string) string {
	norm := func(s string) string {
		if tmp != "" {
			s = strings.ReplaceAll(s, tmp, "$TMP")
		}
		return strings.ReplaceAll(s, repoRoot, "$REPO")
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if a == "" || strings.ContainsAny(a, " \t\"'$\\") {
			quoted[i] = fmt.Sprintf("%q", a)
		}
	}
	return fmt.Sprintf("%s\nexit %d\n--- stdout\n%s--- stderr\n%s",
		norm(strings.Join(append([]string{"$ switchyard"}, quoted...), " ")), r.code, norm(r.stdout), norm(r.stderr))
}

// checkGolden compares got with testdata/golden/<name>.golden, or rewrites
// the file under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, "testdata/golden/"+name+".golden", got)
}

// TestRunInProcess covers run's own error mapping without the binary.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "version", args: []string{"--version"}, wantCode: 0, wantStdout: "switchyard " + version + "\n"},
		{name: "unknown root flag is usage", args: []string{"--bogus"}, wantCode: 64, wantStderr: "error: unknown flag: --bogus\n"},
		{name: "policy usage error", args: []string{"policy", "next"}, wantCode: 64, wantStderr: "error: missing required option --sheet\n"},
		{name: "policy error", args: []string{"policy", "resolve", "--sheet", "../../testdata/sheets/panel.sheet", "--role", "synthesizer", "--parent", "claude"}, wantCode: 65, wantStderr: "invalid model sheet:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			require.Equal(t, tt.wantCode, exitCode(err, &stderr))
			require.True(t, strings.HasPrefix(stdout.String(), tt.wantStdout), "stdout: %s", stdout.String())
			require.True(t, strings.HasPrefix(stderr.String(), tt.wantStderr), "stderr: %s", stderr.String())
		})
	}
}

// withoutNATSEnv drops the NATS_* variables from env.
func withoutNATSEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "NATS_") {
			out = append(out, kv)
		}
	}
	return out
}
