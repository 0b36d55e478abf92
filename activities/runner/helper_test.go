package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// The test binary doubles as a fake provider CLI (the os/exec helper
// process pattern) and as a standalone runner process, selected by
// environment variables before any test runs.
const (
	envHelper    = "SY_HELPER"         // workload behaviour of the fake CLI
	envPreflight = "SY_PREFLIGHT"      // preflight behaviour of the fake CLI
	envStdinCopy = "SY_STDIN_COPY"     // the fake CLI copies its stdin here
	envEnvCopy   = "SY_ENV_COPY"       // the fake CLI writes its variable names here
	envStarted   = "SY_STARTED"        // the fake CLI writes its pid here once running
	envCounter   = "SY_COUNTER"        // preflight attempt counter file
	envGrandPid  = "SY_GRANDCHILD_PID" // the grandchild writes its pid here
	envRunner    = "SY_RUNNER_PROCESS" // run the runner itself (for real signals)
	envRunnerCfg = "SY_RUNNER_CONFIG"  // JSON fakeCLI for the runner process
	fakeBinary   = "sy-fake-cli"
)

// binDir holds the fake CLI under fakeBinary (a symlink to this binary).
var binDir string

func TestMain(m *testing.M) {
	sandbox.Enter() // the test binary is the sandbox launcher too
	if os.Getenv(envHelper) != "" || os.Getenv(envPreflight) != "" {
		os.Exit(fakeCLIMain())
	}
	if os.Getenv(envRunner) == "1" {
		os.Exit(runnerProcessMain())
	}
	dir, err := os.MkdirTemp("", "sy-activities-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	self, err := os.Executable()
	if err == nil {
		err = os.Symlink(self, filepath.Join(dir, fakeBinary))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// fakeCLIMain is the fake provider CLI. The first argument says which
// command the runner ran: "preflight" or "exec".
func fakeCLIMain() int {
	if p := os.Getenv(envStarted); p != "" && len(os.Args) > 1 && os.Args[1] == "exec" {
		os.WriteFile(p+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600)
		os.Rename(p+".tmp", p)
	}
	if len(os.Args) > 1 && os.Args[1] == "preflight" {
		return fakePreflight(os.Getenv(envPreflight))
	}
	if len(os.Args) > 1 && os.Args[1] == "grandchild" {
		os.WriteFile(os.Getenv(envGrandPid), []byte(strconv.Itoa(os.Getpid())), 0o600)
		time.Sleep(20 * time.Second)
		return 0
	}
	stdin, _ := io.ReadAll(os.Stdin)
	if p := os.Getenv(envStdinCopy); p != "" {
		os.WriteFile(p, stdin, 0o600)
	}
	if p := os.Getenv(envEnvCopy); p != "" {
		var names []string
		for _, kv := range os.Environ() {
			names = append(names, strings.SplitN(kv, "=", 2)[0])
		}
		os.WriteFile(p, []byte(strings.Join(names, "\n")), 0o600)
	}
	mode, arg, _ := strings.Cut(os.Getenv(envHelper), ":")
	switch mode {
	case "ok":
		codexSuccess(os.Stdout, "final answer from the fake CLI")
		return 0
	case "exit":
		n, _ := strconv.Atoi(arg)
		fmt.Fprintln(os.Stderr, "fake CLI failing on purpose")
		return n
	case "sleep":
		d, _ := time.ParseDuration(arg)
		time.Sleep(d)
		codexSuccess(os.Stdout, "slept and answered")
		return 0
	case "hang": // until a signal's default action ends it
		fmt.Println(`{"type":"thread.started","thread_id":"t-hang"}`)
		select {}
	case "late-answer": // one event, then a full success only once signalled
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println(`{"type":"thread.started","thread_id":"t-late"}`)
		<-term
		codexSuccess(os.Stdout, "an answer after the stall")
		return 0
	case "drip": // a line every 5 ms until a signal ends it
		fmt.Println(`{"type":"thread.started","thread_id":"t-drip"}`)
		for {
			fmt.Println(`{"type":"turn.started"}`)
			time.Sleep(5 * time.Millisecond)
		}
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		os.WriteFile(os.Getenv(envStarted)+".ready", nil, 0o600)
		fmt.Println(`{"type":"thread.started","thread_id":"t-stubborn"}`)
		select {}
	case "grandchild": // answer, exit, and leave a grandchild holding stdout
		codexSuccess(os.Stdout, "answered, but a descendant keeps the pipe")
		self, _ := os.Executable()
		cmd := exec.Command(self, "grandchild")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Env = os.Environ()
		if cmd.Start() != nil {
			return 99
		}
		for i := 0; i < 500; i++ { // wait until the grandchild is up
			if _, err := os.Stat(os.Getenv(envGrandPid)); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return 0
	case "hostile": // tool calls of a model in a hostile repository
		report := hostileCalls()
		codexSuccess(os.Stdout, report)
		return 0
	case "flood":
		n, _ := strconv.Atoi(arg)
		os.Stdout.Write(bytes.Repeat([]byte("x"), n))
		return 1
	}
	fmt.Fprintln(os.Stderr, "unknown fake CLI mode", mode)
	return 98
}

// fakePreflight answers the runner's preflight probe.
func fakePreflight(mode string) int {
	name, arg, _ := strings.Cut(mode, ":")
	switch name {
	case "", "ok":
		fmt.Println("logged in")
		return 0
	case "unauth-once":
		p := os.Getenv(envCounter)
		b, _ := os.ReadFile(p)
		n, _ := strconv.Atoi(string(b))
		os.WriteFile(p, []byte(strconv.Itoa(n+1)), 0o600)
		if n == 0 {
			fmt.Println("not logged in")
			return 1
		}
		fmt.Println("logged in")
		return 0
	case "unauth":
		fmt.Println("not logged in")
		return 1
	case "sleep":
		d, _ := time.ParseDuration(arg)
		time.Sleep(d)
		fmt.Println("logged in")
		return 0
	case "hang":
		select {}
	}
	return 97
}

// codexSuccess prints one successful codex exec --json turn.
func codexSuccess(w io.Writer, text string) {
	msg, _ := json.Marshal(text)
	fmt.Fprintf(w, `{"type":"thread.started","thread_id":"thread-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":%s}}
{"type":"turn.completed","usage":{"input_tokens":11,"cached_input_tokens":2,"output_tokens":5}}
`, msg)
}

// fakeCLI configures a test provider spec: the real codex spec (its
// guard, parser and classification) launching this binary instead.
type fakeCLI struct {
	Helper    string            `json:"helper"`    // workload mode
	Preflight string            `json:"preflight"` // "" runs no probe
	Retry     bool              `json:"retry"`     // ask for the bounded retry on failure
	Dir       string            `json:"dir"`       // marker files live here
	Files     []providers.File  `json:"files"`     // extra private files
	Env       map[string]string `json:"env"`       // extra overlay
}

// marker paths inside the fake's directory.
func (f fakeCLI) stdinCopy() string { return filepath.Join(f.Dir, "stdin.txt") }
func (f fakeCLI) envCopy() string   { return filepath.Join(f.Dir, "env.txt") }
func (f fakeCLI) started() string   { return filepath.Join(f.Dir, "started.pid") }
func (f fakeCLI) counter() string   { return filepath.Join(f.Dir, "counter") }
func (f fakeCLI) grandPid() string  { return filepath.Join(f.Dir, "grandchild.pid") }

// spec builds the provider spec.
func (f fakeCLI) spec() (*providers.Spec, error) {
	base, err := providers.Lookup(policy.Codex)
	if err != nil {
		return nil, err
	}
	s := *base
	s.Binaries = []string{fakeBinary}
	// The fake's marker directory is its state: a contained fake may
	// write its markers there and nowhere else outside the attempt.
	s.StateDirs = func(string, map[string]string) []string { return []string{f.Dir} }
	s.Prepare = func(req providers.Request) ([]providers.File, []string, error) {
		files := append([]providers.File{{Path: filepath.Join(req.PrivateDir, "fake-config.json"), Mode: 0o600, Content: []byte(`{"private":true}`)}}, f.Files...)
		overlay := []string{envHelper + "=" + f.Helper, envPreflight + "=" + f.Preflight,
			envStdinCopy + "=" + f.stdinCopy(), envEnvCopy + "=" + f.envCopy(), envStarted + "=" + f.started(),
			envCounter + "=" + f.counter(), envGrandPid + "=" + f.grandPid(),
			"GORACE=atexit_sleep_ms=0"} // a -race helper would otherwise linger 1 s at exit
		for k, v := range f.Env {
			overlay = append(overlay, k+"="+v)
		}
		return files, overlay, nil
	}
	s.Preflight = func(req providers.Request) [][]string {
		if f.Preflight == "" {
			return nil
		}
		return [][]string{{req.Executable, "preflight"}}
	}
	s.ReadPreflight = func(req providers.Request, n int, c providers.Capture) providers.PreflightVerdict {
		if c.ExitCode != nil && *c.ExitCode == 0 {
			return providers.PreflightVerdict{Evidence: "fake CLI reported a login"}
		}
		if bytes.Contains(c.Stdout, []byte("not logged in")) {
			return providers.PreflightVerdict{Status: policy.StatusUnauthenticated, Evidence: "fake CLI reported no login", Retry: f.Retry}
		}
		return providers.PreflightVerdict{Status: policy.StatusUnavailableCLI, Evidence: "fake CLI preflight failed"}
	}
	s.Invocation = func(req providers.Request) (providers.Command, error) {
		return providers.Command{Argv: []string{req.Executable, "exec", "--model", req.CLIModel, "-"}, Dir: req.Cwd, Stdin: providers.StdinPrompt}, nil
	}
	return &s, nil
}

// lookup is the fake spec for any provider, keeping the real spec's
// descriptor rules (CLIModel, ExplicitAPISpend, SubscriptionModel) so
// descriptor checks stay the provider's own.
func (f fakeCLI) lookup(p policy.Provider) (*providers.Spec, error) {
	s, err := f.spec()
	if err != nil {
		return nil, err
	}
	if real, err := providers.Lookup(p); err == nil {
		s.CLIModel, s.ExplicitAPISpend, s.SubscriptionModel = real.CLIModel, real.ExplicitAPISpend, real.SubscriptionModel
	}
	return s, nil
}

// runnerProcessMain runs the runner as its own process, with real signal
// delivery, for the cancellation tests.
func runnerProcessMain() int {
	var f fakeCLI
	if err := json.Unmarshal([]byte(os.Getenv(envRunnerCfg)), &f); err != nil {
		fmt.Fprintln(os.Stderr, "bad runner config:", err)
		return 2
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	r, err := New(Config{
		Lookup:    f.lookup,
		Env:       map[string]string{"PATH": os.Getenv("SY_FAKE_PATH"), "HOME": os.Getenv("HOME")},
		KillGrace: 2 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { cancel(Signalled{Signal: <-sigs}) }()
	return r.Main(ctx, os.Args[1:])
}

// signalled is a runner context for a test that signals the runner: send
// cancels it as SIGINT or SIGTERM to the runner's process does.
func signalled() (context.Context, func(os.Signal)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, func(s os.Signal) { cancel(Signalled{Signal: s}) }
}

// lane is one test attempt's files.
type lane struct {
	t                                      *testing.T
	dir, prompt, cwd, output, receipt, prg string
	fake                                   fakeCLI
	stdout, stderr                         *bytes.Buffer
}

// newLane makes a temporary directory with a prompt and a checkout.
func newLane(t *testing.T, helper string) *lane {
	t.Helper()
	dir := t.TempDir()
	l := &lane{t: t, dir: dir,
		prompt:  filepath.Join(dir, "prompt.md"),
		cwd:     filepath.Join(dir, "checkout"),
		output:  filepath.Join(dir, "out.md"),
		receipt: filepath.Join(dir, "receipt.json"),
		prg:     filepath.Join(dir, "progress.json"),
		stdout:  &bytes.Buffer{}, stderr: &bytes.Buffer{},
	}
	require.NoError(t, os.Mkdir(l.cwd, 0o755))
	require.NoError(t, os.WriteFile(l.prompt, []byte("Summarize the README.\n"), 0o644))
	markers := filepath.Join(dir, "markers")
	require.NoError(t, os.Mkdir(markers, 0o700))
	l.fake = fakeCLI{Helper: helper, Dir: markers}
	return l
}

// args is a complete runner command line for the lane plus extra flags.
func (l *lane) args(extra ...string) []string {
	return append([]string{"--parent", "claude", "--provider", "codex", "--model", "gpt-5.5",
		"--effort", "high", "--mode", "read-only", "--prompt", l.prompt, "--cwd", l.cwd,
		"--output", l.output, "--receipt", l.receipt}, extra...)
}

// runner builds a Runner over the lane's fake CLI.
func (l *lane) runner(mod func(*Config)) *Runner {
	l.t.Helper()
	cfg := Config{
		Lookup:     l.fake.lookup,
		Env:        map[string]string{"PATH": binDir, "HOME": l.dir},
		Stdout:     l.stdout,
		Stderr:     l.stderr,
		RetryDelay: 50 * time.Millisecond,
		KillGrace:  2 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	require.NoError(l.t, err)
	return r
}

// run runs the runner synchronously.
func (l *lane) run(mod func(*Config), extra ...string) int {
	return l.runner(mod).Main(context.Background(), l.args(extra...))
}

// receiptFile decodes the receipt file strictly.
func (l *lane) receiptFile() *policy.Receipt {
	l.t.Helper()
	b, err := os.ReadFile(l.receipt)
	require.NoError(l.t, err)
	r, err := policy.DecodeReceipt(b)
	require.NoError(l.t, err, "receipt must decode strictly:\n%s", b)
	return r
}

// printedReceipt decodes the receipt line the runner printed on w.
func printedReceipt(t *testing.T, w *bytes.Buffer) *policy.Receipt {
	t.Helper()
	lines := strings.Split(strings.TrimRight(w.String(), "\n"), "\n")
	require.Len(t, lines, 1, "exactly one receipt line expected, got:\n%s", w)
	r, err := policy.DecodeReceipt([]byte(lines[0]))
	require.NoError(t, err)
	return r
}

// waitFile waits for path to exist (the fake CLI's started marker).
func waitFile(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil },
		10*time.Second, 5*time.Millisecond, "waiting for %s", path)
}

// requireGone asserts a path does not exist.
func requireGone(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.True(t, os.IsNotExist(err), "%s should not exist (err %v)", path, err)
}

// requireMode asserts a file's permission bits.
func requireMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, mode, fi.Mode().Perm(), "mode of %s", path)
}

// outcome normalizes the lane's receipt against the codex:gpt-5.5@high
// attempt it ran, proving the runner's receipts pass the policy's
// consistency gates; spend is the attempt's saved apiSpend ("unset" for a
// legacy call).
func (l *lane) outcome(spend policy.APISpend) policy.Outcome {
	l.t.Helper()
	b, err := os.ReadFile(l.receipt)
	require.NoError(l.t, err)
	att := policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Codex, Model: "gpt-5.5", Effort: policy.EffortHigh}
	contract := policy.ContractLegacy
	if strings.Contains(string(b), `"contract": "strict"`) {
		contract = policy.ContractStrict // the lane asked for it
	}
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent:      policy.ParentClaude,
		Contract:    contract,
		Attempt:     policy.AttemptPolicy{Descriptor: att.String(), Attempt: att, ExhaustionGroup: policy.Codex, APISpend: spend, Route: policy.RouteExternal},
		Mode:        policy.ReadOnly,
		ReceiptPath: l.receipt,
		Receipt:     b,
	})
	require.NoError(l.t, err, "receipt:\n%s", b)
	return ev.Status
}
