package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// Helpers of the Claude and Codex conformance tests (claude_test.go,
// codex_test.go). They add to the shared harness; they change none of it.

// conformanceModels are the models the Claude and Codex argv checks ask
// for: signed out, no model call is made, so any accepted name will do.
var conformanceModels = map[policy.Provider]string{
	policy.Claude: "sonnet",
	policy.Codex:  "gpt-5.5",
}

// specRequest is the providers.Request the runner would hand the spec for
// one signed-out attempt on the host, with the real CLI as executable.
func (h *host) specRequest(t *testing.T, provider policy.Provider, mode policy.Access, spend policy.APISpend) providers.Request {
	t.Helper()
	model := conformanceModels[provider]
	return providers.Request{
		Parent:     policy.Parent("claude"),
		Provider:   provider,
		Model:      model,
		CLIModel:   model,
		Effort:     policy.EffortHigh,
		Mode:       mode,
		Cwd:        h.Repo,
		APISpend:   spend,
		Home:       h.Home,
		Executable: realcli.Bin(t, string(provider)),
		Prompt:     []byte("Reply with the word ready.\n"),
	}
}

// specOf looks the provider's spec up.
func specOf(t *testing.T, provider policy.Provider) *providers.Spec {
	t.Helper()
	spec, err := providers.Lookup(provider)
	require.NoError(t, err)
	return spec
}

// run is one finished real CLI process: its streams and exit code.
type run struct {
	Stdout, Stderr string
	Exit           int
	// Stopped: the process was ended by the caller's stop condition (the
	// CLI had got far enough), not by its own exit.
	Stopped bool
}

// runUntil runs argv (argv[0] an absolute path) in dir with the host's
// environment and stdin, in its own process group. When stop is not nil
// and returns true for a stdout line, the whole group is killed there and
// the run counts as Stopped. The run is bounded by within; a CLI still
// running then fails the test with what it printed.
func (h *host) runUntil(t *testing.T, dir string, stdin []byte, within time.Duration, stop func(line string) bool, argv ...string) run {
	t.Helper()
	name := filepath.Base(argv[0])
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = h.environ()
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start(), "%s: start %q", cli(t, name), argv)
	// The group is signalled only while its leader is unreaped (alive or a
	// zombie), so its id cannot belong to anyone else's processes.
	var mu sync.Mutex
	reaped := false
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !reaped {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	go func() {
		<-ctx.Done()
		kill()
	}()
	var stdout strings.Builder
	stopped := false
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		stdout.WriteString(line + "\n")
		if stop != nil && stop(line) {
			stopped = true
			break
		}
	}
	timedOut := ctx.Err() != nil && !stopped
	kill() // what is left of the group once stdout closed or the stop matched
	_ = cmd.Wait()
	mu.Lock()
	reaped = true
	mu.Unlock()
	require.False(t, timedOut, "%s: %q neither exited nor got far enough within %s\nstdout:\n%s\nstderr:\n%s",
		cli(t, name), argv, within, stdout.String(), stderr.String())
	return run{Stdout: stdout.String(), Stderr: stderr.String(), Exit: cmd.ProcessState.ExitCode(), Stopped: stopped}
}

// syncBuffer is a bytes.Buffer safe for the os/exec copier and a reader.
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

// jsonEvents decodes the JSON object lines of a stream; other lines fail
// the test (stream-json and --json print nothing else on stdout).
func jsonEvents(t *testing.T, what, stdout string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "%s: stdout line is not a JSON object: %s", what, line)
		evs = append(evs, ev)
	}
	return evs
}

// firstEvent returns the first event whose type (and subtype, when given)
// match, nil when there is none.
func firstEvent(evs []map[string]any, typ, subtype string) map[string]any {
	for _, e := range evs {
		if e["type"] == typ && (subtype == "" || e["subtype"] == subtype) {
			return e
		}
	}
	return nil
}

// strings of a JSON array member, nil when absent.
func stringList(v any) []string {
	items, _ := v.([]any)
	out := []string{}
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// capture turns a finished run into the providers.Capture the runner would
// hand the spec's parser and the classifier.
func (r run) capture() providers.Capture {
	code := r.Exit
	return providers.Capture{Stdout: []byte(r.Stdout), Stderr: []byte(r.Stderr), ExitCode: &code}
}
