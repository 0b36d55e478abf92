package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call is one invocation of a simulated CLI.
type call struct {
	provider string
	args     []string
	stdin    io.Reader // nil: /dev/null
	env      []string  // nil: minimalEnv
	dir      string
}

type outcome struct {
	stdout, stderr string
	code           int
}

func minimalEnv(t *testing.T, bin string) []string {
	return []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
}

func runSim(t *testing.T, bin string, c call) outcome {
	t.Helper()
	cmd := exec.Command(simenv.Binary(t, bin, c.provider), c.args...)
	cmd.Stdin = c.stdin
	cmd.Env = c.env
	if cmd.Env == nil {
		cmd.Env = minimalEnv(t, bin)
	}
	cmd.Dir = c.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %s %q: %v", c.provider, c.args, err)
	}
	return outcome{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}

// Runner-shaped argv per provider (RUNNER.md §2), enough for the
// simulator's classification and templating.
var workloadArgv = map[string][]string{
	"claude":      {"-p", "--model", "opus", "--effort", "high", "--permission-mode", "plan", "--output-format", "stream-json", "--verbose"},
	"codex":       {"exec", "--model", "gpt-5.6-sol", "--sandbox", "read-only", "--skip-git-repo-check", "--json", "-"},
	"grok":        {"--prompt-file", "/dev/null", "--model", "grok-4.7", "--output-format", "streaming-messages-json", "--verbatim"},
	"devin":       {"--model", "swe-2-high", "--permission-mode", "auto", "--print"},
	"cursor":      {"--print", "--output-format", "json", "--trust", "--model", "composer-2.5", "--sandbox", "enabled"},
	"antigravity": {"--print=", "--output-format", "stream-json", "--input-format", "stream-json", "--model", "gemini-3.1-pro-high", "--agent", "pstack-0123456789abcdef", "--sandbox"},
	"opencode":    {"run", "--pure", "--format", "json", "--model", "openai/gpt-6.1-sol", "--agent", "pstack-x", "--title", "pstack-worker"},
	"gemini":      {"--model", "gemini-2.5-pro", "--output-format", "stream-json", "--approval-mode", "plan"},
}

func TestScenarioSelectionPerProviderAndKind(t *testing.T) {
	t.Parallel()
	type row struct {
		name       string
		provider   string
		scenario   string
		args       []string
		wantKind   string
		wantDir    string // suffix of the transcript directory replayed
		wantCode   int
		wantStdout string // substring
		wantStderr string // substring
	}
	rows := []row{
		{"claude version default", "claude", "success", []string{"--version"}, simlog.KindVersion, "claude/_preflight/preflight-version", 0, "2.1.332 (Claude Code)", ""},
		{"claude old version", "claude", "old-version", []string{"--version"}, simlog.KindVersion, "claude/old-version/preflight-version", 0, "2.1.240", ""},
		{"claude auth status is classified", "claude", "success", []string{"auth", "status", "--json"}, simlog.KindStatus, "claude/_preflight/preflight-status", 0, `"loggedIn": true`, ""},
		{"codex logged in on stderr", "codex", "success", []string{"login", "status"}, simlog.KindStatus, "codex/_preflight/preflight-status", 0, "", "Logged in using ChatGPT"},
		{"codex not logged in", "codex", "unauthenticated", []string{"login", "status"}, simlog.KindStatus, "codex/unauthenticated/preflight-status", 1, "", "Not logged in"},
		{"codex usage limit", "codex", "usage-exhausted", workloadArgv["codex"], simlog.KindWorkload, "codex/usage-exhausted/workload", 1, `"type":"turn.failed"`, "Reading additional input"},
		{"grok models", "grok", "success", []string{"models"}, simlog.KindModels, "grok/_preflight/preflight-models", 0, "grok-4.7", ""},
		{"grok models signed out", "grok", "unauthenticated", []string{"models"}, simlog.KindModels, "grok/unauthenticated/preflight-models", 1, "Not logged in", ""},
		{"devin auth status", "devin", "success", []string{"auth", "status"}, simlog.KindStatus, "devin/_preflight/preflight-status", 0, "Logged in as", ""},
		{"devin quota on stderr", "devin", "usage-exhausted", workloadArgv["devin"], simlog.KindWorkload, "devin/usage-exhausted/workload", 1, "", "Error: Quota exhausted:"},
		{"cursor status json", "cursor", "success", []string{"status", "--format", "json"}, simlog.KindStatus, "cursor/_preflight/preflight-status", 0, `"isAuthenticated": true`, ""},
		{"cursor signed out exits 0", "cursor", "unauthenticated", []string{"status", "--format", "json"}, simlog.KindStatus, "cursor/unauthenticated/preflight-status", 0, `"isAuthenticated": false`, ""},
		{"cursor version", "cursor", "success", []string{"--version"}, simlog.KindVersion, "cursor/_preflight/preflight-version", 0, "2026.10.01", ""},
		{"cursor usage limit", "cursor", "usage-exhausted", workloadArgv["cursor"], simlog.KindWorkload, "cursor/usage-exhausted/workload", 1, "", "ActionRequiredError: You've hit your usage limit"},
		{"agy models", "antigravity", "success", []string{"models"}, simlog.KindModels, "antigravity/_preflight/preflight-models", 0, "gemini-3.1-pro-high", ""},
		{"agy malformed is empty exit 0", "antigravity", "malformed", workloadArgv["antigravity"], simlog.KindWorkload, "antigravity/malformed/workload", 0, "", ""},
		{"opencode version", "opencode", "success", []string{"--version"}, simlog.KindVersion, "opencode/_preflight/preflight-version", 0, "1.18.32", ""},
		{"opencode v2 banner", "opencode", "v2-success", []string{"--version"}, simlog.KindVersion, "opencode/v2-success/preflight-version", 0, "opencode v2.0.27", ""},
		{"opencode prerelease banner", "opencode", "prerelease-banner", []string{"--version"}, simlog.KindVersion, "opencode/prerelease-banner/preflight-version", 0, "opencode v2.1.0-beta.3", ""},
		{"opencode v2 auth list", "opencode", "v2-no-method", []string{"auth", "list", "--standalone", "--format", "json"}, simlog.KindStatus, "opencode/v2-no-method/preflight-status", 0, `"type": "credential"`, ""},
		{"opencode auth list", "opencode", "success", []string{"--pure", "auth", "list"}, simlog.KindStatus, "opencode/_preflight/preflight-status", 0, "1 credentials", ""},
		{"gemini version", "gemini", "success", []string{"--version"}, simlog.KindVersion, "gemini/_preflight/preflight-version", 0, "0.55.2", ""},
		{"gemini auth exit 41", "gemini", "unauthenticated", workloadArgv["gemini"], simlog.KindWorkload, "gemini/unauthenticated/workload", 41, "", "Please set an Auth method"},
		{"gemini quota exit 173", "gemini", "usage-exhausted", workloadArgv["gemini"], simlog.KindWorkload, "gemini/usage-exhausted/workload", 173, "TerminalQuotaError", ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{r.provider: r.scenario}))
			got := runSim(t, bin, call{provider: r.provider, args: r.args, stdin: strings.NewReader("prompt")})
			assert.Equal(t, r.wantCode, got.code, "exit code; stderr: %s", got.stderr)
			assert.Contains(t, got.stdout, r.wantStdout)
			assert.Contains(t, got.stderr, r.wantStderr)
			if r.wantStdout == "" && r.wantStderr != "" {
				assert.NotContains(t, got.stdout, r.wantStderr, "stderr text leaked to stdout")
			}
			if r.wantStderr == "" {
				assert.Empty(t, got.stderr, "stderr")
			}
			invs := simenv.Invocations(t, bin)
			require.Len(t, invs, 1)
			assert.Equal(t, r.wantKind, invs[0].Kind)
			assert.Equal(t, r.scenario, invs[0].Scenario)
			assert.True(t, strings.HasSuffix(invs[0].TranscriptDir, filepath.FromSlash(r.wantDir)), "replayed %s", invs[0].TranscriptDir)
		})
	}
}

func TestEveryProviderHasTheRequiredScenarios(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	for _, p := range simconfig.Providers {
		for _, sc := range []string{"success", "usage-exhausted", "unauthenticated", "malformed"} {
			simenv.Configure(t, bin, simenv.Scenarios(map[string]string{p.Name: sc}))
			got := runSim(t, bin, call{provider: p.Name, args: workloadArgv[p.Name], stdin: strings.NewReader("prompt")})
			switch sc {
			case "success":
				assert.Equal(t, 0, got.code, "%s %s: %s", p.Name, sc, got.stderr)
				assert.NotEmpty(t, got.stdout, "%s %s", p.Name, sc)
			case "usage-exhausted", "unauthenticated":
				assert.NotEqual(t, 0, got.code, "%s %s", p.Name, sc)
			case "malformed":
				assert.Equal(t, 0, got.code, "%s %s exits 0 with a protocol violation", p.Name, sc)
			}
			assert.NotContains(t, got.stdout+got.stderr, "simcli:", "%s %s", p.Name, sc)
		}
	}
	_, err := os.Stat(filepath.Join(simenv.TranscriptsRoot(), "codex", "reconnect-then-success", "workload", "stdout"))
	require.NoError(t, err)
}

func TestTemplatingEchoesTheRequest(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"codex":  {Session: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
		"cursor": {Scenario: "success-with-model"},
	}})
	cwd := t.TempDir()

	claude := runSim(t, bin, call{provider: "claude", args: workloadArgv["claude"], stdin: strings.NewReader("p"), dir: cwd})
	require.Equal(t, 0, claude.code, claude.stderr)
	assert.Contains(t, claude.stdout, `"model":"claude-opus-5"`, "an alias is reported as a dated revision")
	assert.Contains(t, claude.stdout, `"cwd":"`+cwd+`"`, "cwd is the process directory")
	assert.Contains(t, claude.stdout, `"session_id":"`+simconfig.DefaultSession+`"`)
	assert.NotContains(t, claude.stdout, "{{")

	cursor := runSim(t, bin, call{provider: "cursor", args: append(workloadArgv["cursor"], "--workspace", "/work/tree"), stdin: strings.NewReader("p")})
	require.Equal(t, 0, cursor.code, cursor.stderr)
	var env struct{ Model, Result string }
	require.NoError(t, json.Unmarshal([]byte(cursor.stdout), &env))
	assert.Equal(t, "composer-2.5", env.Model, "cursor echoes the exact slug")

	codex := runSim(t, bin, call{provider: "codex", args: workloadArgv["codex"], stdin: strings.NewReader("p")})
	assert.Contains(t, codex.stdout, `"thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"`, "session from the config")

	agy := runSim(t, bin, call{provider: "antigravity", args: workloadArgv["antigravity"], stdin: strings.NewReader("{}\n")})
	assert.Contains(t, agy.stdout, `"init":{"model":"gemini-3.1-pro-high","agent":"pstack-0123456789abcdef"`)

	simenv.Configure(t, bin, simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"claude": {ReportedModel: "claude-sonnet-5"},
		"grok":   {Models: []string{"grok-9"}},
	}})
	mismatch := runSim(t, bin, call{provider: "claude", args: workloadArgv["claude"], stdin: strings.NewReader("p")})
	assert.Contains(t, mismatch.stdout, `"model":"claude-sonnet-5"`, "reportedModel overrides the report")
	models := runSim(t, bin, call{provider: "grok", args: []string{"models"}})
	assert.Contains(t, models.stdout, "\ngrok-9\n", "extra listed models")
}

func TestStdoutAndStderrStaySeparate(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"grok": "usage-exhausted"}))
	got := runSim(t, bin, call{provider: "grok", args: workloadArgv["grok"]})
	assert.Equal(t, 1, got.code)
	for _, line := range strings.Split(strings.TrimSpace(got.stdout), "\n") {
		assert.True(t, json.Valid([]byte(line)), "stdout line is JSON: %q", line)
	}
	assert.True(t, strings.HasPrefix(got.stderr, "Error: You\u2019ve reached your free Grok Build usage limit"), got.stderr)
	assert.NotContains(t, got.stdout, "Error: ")
}

// scenarioDir writes a one-off scenario under t.TempDir() and returns its
// absolute path (usable as a scenario name).
func scenarioDir(t *testing.T, kind string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "custom")
	dir := filepath.Join(root, kind)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return root
}

func TestExitCodesAndCrashes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		exit     string
		wantCode int
		wantSig  syscall.Signal
	}{
		{"0", 0, 0},
		{"1", 1, 0},
		{"77\n", 77, 0},
		{"255", 255, 0},
		{"SIGKILL", -1, syscall.SIGKILL},
		{"SIGTERM", -1, syscall.SIGTERM},
		{"SIGHUP", -1, syscall.SIGHUP},
	} {
		t.Run(strings.TrimSpace(tc.exit), func(t *testing.T) {
			t.Parallel()
			sc := scenarioDir(t, "workload", map[string]string{"exit": tc.exit, "stdout": "out\n"})
			bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"devin": sc}))
			cmd := exec.Command(simenv.Binary(t, bin, "devin"), "--print")
			cmd.Env = minimalEnv(t, bin)
			out, err := cmd.Output()
			if tc.wantCode == 0 {
				require.NoError(t, err)
			}
			assert.Equal(t, "out\n", string(out))
			st := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.wantSig != 0 {
				assert.True(t, st.Signaled(), "died by a signal")
				assert.Equal(t, tc.wantSig, st.Signal())
				return
			}
			assert.Equal(t, tc.wantCode, cmd.ProcessState.ExitCode())
		})
	}
}

func TestDelayAndChunkedInterleaving(t *testing.T) {
	t.Parallel()
	sc := scenarioDir(t, "workload", map[string]string{
		"stdout": "o1\no2\no3\n", "stderr": "e1\ne2\n", "chunk_ms": "40", "delay_ms": "200",
	})
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"codex": sc}))
	cmd := exec.Command(simenv.Binary(t, bin, "codex"), workloadArgv["codex"]...)
	cmd.Env = minimalEnv(t, bin)
	// One pipe for both streams shows the interleaving order.
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	start := time.Now()
	require.NoError(t, cmd.Run())
	elapsed := time.Since(start)
	assert.Equal(t, "o1\ne1\no2\ne2\no3\n", both.String())
	assert.GreaterOrEqual(t, elapsed, 200*time.Millisecond+2*40*time.Millisecond, "delay plus two chunk pauses")
}

// startHanging starts a long-running scenario in its own process group and
// returns once it has written its first stdout line, i.e. it is replaying.
func startHanging(t *testing.T, bin, provider string, args []string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(simenv.Binary(t, bin, provider), args...)
	cmd.Env = minimalEnv(t, bin)
	cmd.Stdin = strings.NewReader("prompt")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.NotEmpty(t, line)
	return cmd, r
}

func TestHangUntilSignalled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig      syscall.Signal
		name     string
		wantCode int
	}{
		{syscall.SIGTERM, "SIGTERM", 143},
		{syscall.SIGINT, "SIGINT", 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"claude": "long-running"}))
			cmd, rest := startHanging(t, bin, "claude", workloadArgv["claude"])
			start := time.Now()
			require.NoError(t, cmd.Process.Signal(tc.sig))
			_, _ = io.Copy(io.Discard, rest)
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.wantCode, ee.ExitCode())
			assert.Less(t, time.Since(start), 5*time.Second, "the signal ended the hang")
			sigs := simenv.Signals(t, bin)
			require.Len(t, sigs, 1)
			assert.Equal(t, tc.name, sigs[0].Signal)
			assert.Equal(t, cmd.Process.Pid, sigs[0].Pid)
			assert.False(t, sigs[0].Ignored)
		})
	}
}

func TestHangIgnoringSignalsNeedsSIGKILL(t *testing.T) {
	t.Parallel()
	sc := scenarioDir(t, "workload", map[string]string{"stdout": "started\n", "hang": "ignore"})
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"opencode": sc}))
	cmd, rest := startHanging(t, bin, "opencode", workloadArgv["opencode"])
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitFor(t, "SIGTERM logged as ignored", func() bool {
		s := simenv.Signals(t, bin)
		return len(s) == 1 && s[0].Ignored
	})
	require.NoError(t, syscall.Kill(cmd.Process.Pid, 0), "still running after SIGTERM")
	require.NoError(t, cmd.Process.Kill())
	_, _ = io.Copy(io.Discard, rest)
	err := cmd.Wait()
	require.Error(t, err)
	st := cmd.ProcessState.Sys().(syscall.WaitStatus)
	assert.True(t, st.Signaled())
	assert.Equal(t, syscall.SIGKILL, st.Signal())
}

func TestGrandchildIsReachedOnlyByAGroupKill(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"codex": "long-running-grandchild"}))
	cmd, rest := startHanging(t, bin, "codex", workloadArgv["codex"])

	invs := simenv.Invocations(t, bin)
	gc := simlog.Filter(invs, "codex", simlog.KindGrandchild)
	require.Len(t, gc, 1, "the grandchild is logged before any output")
	assert.Equal(t, cmd.Process.Pid, gc[0].Ppid)
	assert.Equal(t, cmd.Process.Pid, gc[0].Pgid, "same process group as the CLI")
	gpid := gc[0].Pid
	require.True(t, alive(gpid), "grandchild running")

	// Signalling only the CLI leaves the grandchild behind.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_, _ = io.Copy(io.Discard, rest)
	require.Error(t, cmd.Wait())
	assert.Equal(t, 143, cmd.ProcessState.ExitCode())
	assert.True(t, alive(gpid), "orphaned grandchild survives a direct-child kill")

	// The group kill reaches it.
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
	waitFor(t, "grandchild gone", func() bool { return !alive(gpid) })
}

// alive reports whether pid exists and is not a zombie (an orphan whose
// reaper has not collected it yet counts as gone).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesized command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// waitFor polls cond until it holds, failing after 10 seconds. Used only
// for effects of another process that offer nothing to wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInvocationLogRecordsNamesNeverValues(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{CaptureStdin: true})
	const secret = "sk-simcli-planted-9f8e7d6c5b4a"
	env := append(minimalEnv(t, bin), "ANTHROPIC_API_KEY="+secret, "SIMCLI_PLANTED="+secret)
	cwd := t.TempDir()
	prompt := "## Worker contract\nDo the task.\n"
	before := time.Now().UTC()
	got := runSim(t, bin, call{provider: "claude", args: workloadArgv["claude"], stdin: strings.NewReader(prompt), env: env, dir: cwd})
	require.Equal(t, 0, got.code, got.stderr)
	// grok takes no stdin: it is not read even when a pipe is given.
	runSim(t, bin, call{provider: "grok", args: workloadArgv["grok"], env: env, dir: cwd})
	runSim(t, bin, call{provider: "grok", args: []string{"models"}, stdin: strings.NewReader("ignored"), env: env})

	raw, err := os.ReadFile(simenv.LogPath(bin))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), secret, "no environment value reaches the log")

	invs := simenv.Invocations(t, bin)
	require.Len(t, invs, 3)
	c := invs[0]
	assert.Equal(t, "claude", c.Provider)
	assert.Equal(t, "claude", c.Binary)
	assert.Equal(t, append([]string{simenv.Binary(t, bin, "claude")}, workloadArgv["claude"]...), c.Argv)
	assert.Equal(t, []string{"ANTHROPIC_API_KEY", "HOME", "LANG", "PATH", "SIMCLI_PLANTED"}, c.Env, "sorted names")
	sum := sha256.Sum256([]byte(prompt))
	assert.Equal(t, hex.EncodeToString(sum[:]), c.StdinSHA256)
	assert.Equal(t, int64(len(prompt)), c.StdinBytes)
	assert.Equal(t, simlog.StdinPipe, c.StdinKind)
	assert.True(t, c.StdinRead)
	kept, err := os.ReadFile(c.StdinFile)
	require.NoError(t, err)
	assert.Equal(t, prompt, string(kept), "captured stdin copy")
	assert.Equal(t, cwd, c.Cwd)
	assert.Equal(t, simlog.KindWorkload, c.Kind)
	assert.Equal(t, "success", c.Scenario)
	assert.Equal(t, -1, c.Seq, "no queue")
	assert.Positive(t, c.Pid)
	assert.False(t, c.StartedAt.Before(before.Add(-time.Second)), "start time %s", c.StartedAt)

	g := invs[1]
	assert.Equal(t, simlog.StdinDevNull, g.StdinKind, "grok's workload got /dev/null")
	assert.False(t, g.StdinRead)
	assert.Empty(t, g.StdinSHA256)
	m := invs[2]
	assert.Equal(t, simlog.KindModels, m.Kind)
	assert.Equal(t, simlog.StdinPipe, m.StdinKind)
	assert.False(t, m.StdinRead, "preflights never read stdin")
}

func TestQueueAdvancesPerInvocation(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"grok": {Scenario: "success", Queue: []string{"unauthenticated"}},
	}})
	first := runSim(t, bin, call{provider: "grok", args: []string{"models"}})
	assert.Equal(t, 1, first.code, "first probe signed out")
	retry := runSim(t, bin, call{provider: "grok", args: []string{"models"}})
	assert.Equal(t, 0, retry.code, "the retry passes")
	work := runSim(t, bin, call{provider: "grok", args: workloadArgv["grok"]})
	assert.Equal(t, 0, work.code)
	other := runSim(t, bin, call{provider: "codex", args: []string{"login", "status"}})
	assert.Equal(t, 0, other.code, "queues are per provider")

	invs := simenv.Invocations(t, bin)
	require.Len(t, invs, 4)
	assert.Equal(t, []int{0, 1, 2, -1}, []int{invs[0].Seq, invs[1].Seq, invs[2].Seq, invs[3].Seq})
	assert.Equal(t, []string{"unauthenticated", "success", "success", "success"},
		[]string{invs[0].Scenario, invs[1].Scenario, invs[2].Scenario, invs[3].Scenario})

	// A new config restarts the queue.
	simenv.Configure(t, bin, simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"grok": {Queue: []string{"unauthenticated"}},
	}})
	again := runSim(t, bin, call{provider: "grok", args: []string{"models"}})
	assert.Equal(t, 1, again.code)
}

func TestDevinExportIsWritten(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	export := filepath.Join(t.TempDir(), "receipt.json.devin-export", "turn.json")
	args := append(append([]string{}, workloadArgv["devin"]...), "--export", export)
	got := runSim(t, bin, call{provider: "devin", args: args, dir: t.TempDir()})
	require.Equal(t, 0, got.code, got.stderr)
	raw, err := os.ReadFile(export)
	require.NoError(t, err)
	var doc struct {
		SchemaVersion string `json:"schema_version"`
		Agent         struct {
			ModelName string `json:"model_name"`
		} `json:"agent"`
		Steps []struct {
			Source    string            `json:"source"`
			Message   string            `json:"message"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "ATIF-v1.7", doc.SchemaVersion)
	assert.Equal(t, "swe-2-high", doc.Agent.ModelName, "templated model")
	last := doc.Steps[len(doc.Steps)-1]
	assert.Equal(t, "agent", last.Source)
	assert.Equal(t, strings.TrimSpace(got.stdout), last.Message, "stdout is the final answer")
	assert.Empty(t, last.ToolCalls)
	fi, err := os.Stat(filepath.Dir(export))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "export directory is private")

	// Without --export nothing is written and the run still succeeds.
	assert.Equal(t, 0, runSim(t, bin, call{provider: "devin", args: workloadArgv["devin"]}).code)
}

func TestOpenCodeDebugConfigEchoesThePrivateConfig(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	cfg := filepath.Join(t.TempDir(), "opencode.json")
	content := "{\n  \"model\": \"openai/gpt-6.1-sol\",\n  \"provider\": {}\n}\n"
	require.NoError(t, os.WriteFile(cfg, []byte(content), 0o600))
	env := append(minimalEnv(t, bin), "OPENCODE_CONFIG="+cfg)

	got := runSim(t, bin, call{provider: "opencode", args: []string{"--pure", "debug", "config"}, env: env})
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, "{\n  \"model\": \"openai/gpt-6.1-sol\",\n  \"provider\": {},\n  \"agent\": {},\n  \"mode\": {},\n  \"plugin\": [],\n"+
		"  \"command\": {},\n  \"username\": \"unknown\"\n}\n", got.stdout, "the file's effective configuration")

	unset := runSim(t, bin, call{provider: "opencode", args: []string{"--pure", "debug", "config"}})
	assert.Equal(t, 1, unset.code)
	assert.Contains(t, unset.stderr, "none of OPENCODE_CONFIG OPENCODE_CONFIG_DIR is set")

	simenv.Configure(t, bin, simenv.Scenarios(map[string]string{"opencode": "config-mismatch"}))
	other := runSim(t, bin, call{provider: "opencode", args: []string{"--pure", "debug", "config"}, env: env})
	require.Equal(t, 0, other.code)
	assert.NotEqual(t, content, other.stdout)
	assert.Contains(t, other.stdout, "anthropic/claude-sonnet-4-5")
}

// TestOpenCodeV1DebugConfigMatchesTheRealCLI: for the two configurations
// captured from opencode 1.18.33 (testdata/opencode-1.18.33: a minimal
// file, and the private file the runner renders for a read-only attempt),
// the simulated `--pure debug config` prints byte for byte what the real
// CLI printed, with the same OPENCODE_DISABLE_AUTOCOMPACT the capture had.
func TestOpenCodeV1DebugConfigMatchesTheRealCLI(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	for _, name := range []string{"minimal", "runner-v1"} {
		want, err := os.ReadFile(filepath.Join("testdata", "opencode-1.18.33", name+".debug-config"))
		require.NoError(t, err)
		cfg, err := filepath.Abs(filepath.Join("testdata", "opencode-1.18.33", name+".opencode.json"))
		require.NoError(t, err)
		env := append(minimalEnv(t, bin), "OPENCODE_CONFIG="+cfg, "OPENCODE_DISABLE_AUTOCOMPACT=1")
		got := runSim(t, bin, call{provider: "opencode", args: []string{"--pure", "debug", "config"}, env: env})
		require.Equal(t, 0, got.code, got.stderr)
		assert.Equal(t, string(want), got.stdout, name)
	}
}

// TestOpenCodeWritesItsGlobalConfigDirectory: as opencode 1.18.33 does,
// every simulated OpenCode command creates $XDG_CONFIG_HOME/opencode, and
// the commands that load configuration (debug config, models, run) write
// the captured .gitignore into it; --version and auth list write nothing
// in it.
func TestOpenCodeWritesItsGlobalConfigDirectory(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	want, err := os.ReadFile(filepath.Join("testdata", "opencode-1.18.33", "gitignore"))
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "opencode.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"model":"openai/gpt-6.1-sol"}`), 0o600))
	for _, tc := range []struct {
		args      []string
		gitignore bool
	}{
		{[]string{"--version"}, false},
		{[]string{"--pure", "auth", "list"}, false},
		{[]string{"--pure", "debug", "config"}, true},
		{[]string{"models"}, true},
		{[]string{"run", "--pure", "--format", "json", "--model", "openai/gpt-6.1-sol"}, true},
	} {
		home := t.TempDir()
		env := append(minimalEnv(t, bin), "XDG_CONFIG_HOME="+home, "OPENCODE_CONFIG="+cfg)
		got := runSim(t, bin, call{provider: "opencode", args: tc.args, env: env, stdin: strings.NewReader("Reply ready.\n")})
		require.Equal(t, 0, got.code, "%v: %s", tc.args, got.stderr)
		fi, err := os.Lstat(filepath.Join(home, "opencode"))
		require.NoError(t, err, "%v creates the global configuration directory", tc.args)
		require.True(t, fi.IsDir())
		entries, err := os.ReadDir(filepath.Join(home, "opencode"))
		require.NoError(t, err)
		if !tc.gitignore {
			assert.Empty(t, entries, "%v", tc.args)
			continue
		}
		require.Len(t, entries, 1, "%v", tc.args)
		b, err := os.ReadFile(filepath.Join(home, "opencode", ".gitignore"))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(b), "%v", tc.args)
	}
}

// TestOpenCodeV2DebugConfigListsSources: with OPENCODE_CONFIG_DIR (2.x)
// `debug config` prints the 2.x source list: the directory's opencode.json
// as a document source and the directory itself.
func TestOpenCodeV2DebugConfigListsSources(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(`{"model":{"providerID":"openai","model":"gpt-6.1-sol"}}`), 0o600))
	got := runSim(t, bin, call{provider: "opencode", args: []string{"debug", "config"}, env: append(minimalEnv(t, bin), "OPENCODE_CONFIG_DIR="+dir)})
	require.Equal(t, 0, got.code, got.stderr)
	var sources []map[string]any
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &sources))
	require.Len(t, sources, 2)
	assert.Equal(t, "document", sources[0]["type"])
	assert.Equal(t, filepath.Join(dir, "opencode.json"), sources[0]["path"])
	assert.Equal(t, map[string]any{"model": map[string]any{"providerID": "openai", "model": "gpt-6.1-sol"}}, sources[0]["info"])
	assert.Equal(t, map[string]any{"type": "directory", "path": dir}, sources[1])
}

// TestOpenCodeSessionExportReadsThePersistedSession: a 2.x workload
// persists its session (prompt, directory, agent, model) and `session
// export --standalone <id>` prints it back; an unknown session fails.
func TestOpenCodeSessionExportReadsThePersistedSession(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"opencode": "v2-success"}))
	cwd := t.TempDir()
	prompt := "Summarize \"README.md\".\n"
	work := runSim(t, bin, call{provider: "opencode", args: []string{"run", "--standalone", "--format", "json", "--model", "openai/gpt-6.1-sol", "--agent", "pstack-abc"},
		dir: cwd, stdin: strings.NewReader(prompt)})
	require.Equal(t, 0, work.code, work.stderr)
	exp := runSim(t, bin, call{provider: "opencode", args: []string{"session", "export", "--standalone", simconfig.DefaultSession}, dir: t.TempDir()})
	require.Equal(t, 0, exp.code, exp.stderr)
	var doc struct {
		Session  struct{ ID, Directory string }
		Messages []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(exp.stdout), &doc))
	assert.Equal(t, simconfig.DefaultSession, doc.Session.ID)
	assert.Equal(t, cwd, doc.Session.Directory, "the workload's directory, not the export's")
	assert.Equal(t, prompt, doc.Messages[0]["text"])
	assert.Equal(t, "pstack-abc", doc.Messages[1]["agent"])
	assert.Equal(t, map[string]any{"providerID": "openai", "id": "gpt-6.1-sol"}, doc.Messages[1]["model"])

	missing := runSim(t, bin, call{provider: "opencode", args: []string{"session", "export", "--standalone", "ses_unknown"}})
	assert.Equal(t, 1, missing.code)
	assert.Contains(t, missing.stderr, "Session not found")
}

func TestConfigIsFoundBesideArgv0WithoutFollowingSymlinks(t *testing.T) {
	t.Parallel()
	exe := simenv.Build(t)
	// Two bin directories whose claude links point at the same binary,
	// each with its own scenario.
	binA := t.TempDir()
	binB := t.TempDir()
	require.NoError(t, os.Symlink(exe, filepath.Join(binA, "claude")))
	require.NoError(t, os.Symlink(exe, filepath.Join(binB, "claude")))
	cfgB := simenv.Scenarios(map[string]string{"claude": "success"})
	cfgB.Transcripts = simenv.TranscriptsRoot()
	require.NoError(t, simconfig.Write(binB, cfgB))
	// binA's config is relative: it resolves against binA.
	rel, err := filepath.Rel(binA, simenv.TranscriptsRoot())
	require.NoError(t, err)
	cfgA := simenv.Scenarios(map[string]string{"claude": "old-version"})
	cfgA.Transcripts = rel
	require.NoError(t, simconfig.Write(binA, cfgA))

	a := runSim(t, binA, call{provider: "claude", args: []string{"--version"}})
	b := runSim(t, binB, call{provider: "claude", args: []string{"--version"}})
	assert.Equal(t, "2.1.240 (Claude Code)\n", a.stdout)
	assert.Equal(t, "2.1.332 (Claude Code)\n", b.stdout)
	assert.Len(t, simenv.Invocations(t, binA), 1)
	assert.Len(t, simenv.Invocations(t, binB), 1)

	// A bare name found on PATH resolves the same way.
	cmd := &exec.Cmd{Path: filepath.Join(binA, "claude"), Args: []string{"claude", "--version"}, Env: []string{"PATH=" + binA}}
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "2.1.240 (Claude Code)\n", string(out))
}

func TestMisconfigurationFailsLoudly(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"claude": "no-such-scenario"}))
	got := runSim(t, bin, call{provider: "claude", args: workloadArgv["claude"]})
	assert.Equal(t, 125, got.code)
	assert.Contains(t, got.stderr, `simcli: no scenario "no-such-scenario" for claude`)

	// A probe no transcript answers (a transcript root whose opencode
	// scenario has no models answer and no _preflight default).
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "opencode", "success"), 0o755))
	simenv.Configure(t, bin, simenv.Config{Transcripts: root})
	got = runSim(t, bin, call{provider: "opencode", args: []string{"models"}})
	assert.Equal(t, 125, got.code)
	assert.Contains(t, got.stderr, `simcli: no models transcript for opencode scenario "success"`)

	require.NoError(t, os.WriteFile(filepath.Join(bin, simconfig.ConfigFile), []byte(`{"transcripts":"x","providers":{"agent":{}}}`), 0o600))
	got = runSim(t, bin, call{provider: "codex", args: []string{"login", "status"}})
	assert.Equal(t, 125, got.code)
	assert.Contains(t, got.stderr, `unknown provider "agent"`)
}

func TestInstallSubcommand(t *testing.T) {
	t.Parallel()
	exe := simenv.Build(t)
	bin := filepath.Join(t.TempDir(), "bin")
	tool := filepath.Join(t.TempDir(), "simcli")
	require.NoError(t, os.Symlink(exe, tool))
	cmd := exec.Command(tool, "install", "-transcripts", simenv.TranscriptsRoot(), bin, "codex=usage-exhausted")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, p := range simconfig.Providers {
		fi, err := os.Lstat(filepath.Join(bin, p.Binary))
		require.NoError(t, err, p.Binary)
		assert.True(t, fi.Mode().IsRegular(), "%s is a real file (hard link or copy), not a symlink", p.Binary)
	}
	got := runSim(t, bin, call{provider: "codex", args: workloadArgv["codex"], stdin: strings.NewReader("p")})
	assert.Equal(t, 1, got.code)
	assert.Contains(t, got.stdout, "You've hit your usage limit")
}

func TestGrandchildCanHoldTheStdoutPipe(t *testing.T) {
	t.Parallel()
	sc := scenarioDir(t, "workload", map[string]string{"stdout": "done\n", "spawn_grandchild": "inherit"})
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"cursor": sc}))
	cmd := exec.Command(simenv.Binary(t, bin, "cursor"), workloadArgv["cursor"]...)
	cmd.Env = minimalEnv(t, bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "done\n", line)

	gc := simlog.Filter(simenv.Invocations(t, bin), "cursor", simlog.KindGrandchild)
	require.Len(t, gc, 1)
	// The grandchild's fd 1 is the very pipe this test reads.
	target, err := os.Readlink("/proc/" + strconv.Itoa(gc[0].Pid) + "/fd/1")
	require.NoError(t, err)
	fi, err := stdout.(*os.File).Stat()
	require.NoError(t, err)
	ino := fi.Sys().(*syscall.Stat_t).Ino
	assert.Equal(t, "pipe:["+strconv.FormatUint(ino, 10)+"]", target)

	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
	_, _ = io.Copy(io.Discard, stdout) // EOF once the grandchild is gone too
	_ = cmd.Wait()
	waitFor(t, "grandchild gone", func() bool { return !alive(gc[0].Pid) })
}
