package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestRunnerComplete proves a successful attempt end to end: one preflight
// probe and one invocation of a real child, the worker contract prepended
// to the prompt on stdin, the final text in a 0600 output file, a strict
// schema 2 receipt printed as one line on stdout with a pretty 0600 copy,
// and the private directory removed while pre-existing paths stay.
func TestRunnerComplete(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight = "ok"
	keep := filepath.Join(l.dir, "existing-dir")
	require.NoError(t, os.Mkdir(keep, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(keep, "user.txt"), []byte("mine"), 0o644))
	l.fake.Files = []providers.File{{Path: keep, Mode: 0o700, Dir: true}}

	code := l.run(nil, "--execution-id", "exec-1", "--api-spend", "approved")
	require.Equal(t, 0, code, "stderr: %s", l.stderr)
	require.Empty(t, l.stderr.String())

	printed := printedReceipt(t, l.stdout)
	rc := l.receiptFile()
	require.Equal(t, printed, rc, "the printed line and the file hold the same receipt")
	require.Equal(t, policy.StatusComplete, rc.Status)
	require.Equal(t, 2, rc.SchemaVersion)
	require.Equal(t, "exec-1", rc.ExecutionID)
	require.Equal(t, l.receipt, rc.ReceiptPath)
	require.Equal(t, policy.PreflightPassed, rc.Preflight.Status)
	require.Equal(t, []string{filepath.Join(binDir, fakeBinary), "preflight"}, rc.Preflight.Argv)
	require.Equal(t, []string{filepath.Join(binDir, fakeBinary), "exec", "--model", "gpt-5.5", "-"}, rc.Argv)
	require.True(t, *rc.ProcessStarted)
	require.Equal(t, 0, *rc.ExitCode)
	require.Nil(t, rc.Signal)
	require.Nil(t, rc.TimeoutMs)
	require.Equal(t, policy.APISpendApproved, rc.APISpend)
	require.Equal(t, policy.ContractLegacy, rc.Contract)
	require.Equal(t, filepath.Join(binDir, fakeBinary), *rc.Executable)

	raw, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(raw), "{\n  \"schemaVersion\": 2,"), "the file copy is indented")
	requireMode(t, l.receipt, 0o600)
	out, err := os.ReadFile(l.output)
	require.NoError(t, err)
	require.Equal(t, "final answer from the fake CLI", string(out))
	requireMode(t, l.output, 0o600)

	stdin, err := os.ReadFile(l.fake.stdinCopy())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(stdin), "## Worker contract\n"), "the preamble comes first")
	require.True(t, strings.HasSuffix(string(stdin), "\nAssigned task:\nSummarize the README.\n"), "then the task, verbatim")

	requireGone(t, l.receipt+".private")
	b, err := os.ReadFile(filepath.Join(keep, "user.txt"))
	require.NoError(t, err, "a pre-existing directory the spec reused is never removed")
	require.Equal(t, "mine", string(b))
	require.Equal(t, policy.OutcomeComplete, l.outcome(policy.APISpendApproved))
}

// TestRunnerChildEnvironment proves the child gets the constructed
// environment, not the runner's: a planted parent secret does not reach it.
func TestRunnerChildEnvironment(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	code := l.run(func(c *Config) {
		c.Env["UNRELATED_SECRET"] = "s3cr3t"
		c.Env["CLAUDECODE"] = "1"
	})
	require.Equal(t, 0, code, "stderr: %s", l.stderr)
	names, err := os.ReadFile(l.fake.envCopy())
	require.NoError(t, err)
	require.NotContains(t, string(names), "UNRELATED_SECRET")
	require.NotContains(t, string(names), "CLAUDECODE")
	require.Contains(t, string(names), "PATH")
}

// TestRunnerChildFailed proves a non-zero exit becomes a receipt on
// stderr, the empty output reservation is removed and so is the private
// directory.
func TestRunnerChildFailed(t *testing.T) {
	t.Parallel()
	l := newLane(t, "exit:3")
	code := l.run(nil)
	require.Equal(t, 70, code, "stderr: %s", l.stderr)
	require.Empty(t, l.stdout.String())
	rc := printedReceipt(t, l.stderr)
	require.Equal(t, policy.StatusChildFailed, rc.Status)
	require.Equal(t, 3, *rc.ExitCode)
	require.True(t, *rc.ProcessStarted)
	require.NotNil(t, rc.Error)
	requireGone(t, l.output)
	requireGone(t, l.receipt+".private")
	require.Equal(t, rc, l.receiptFile())
	require.Equal(t, policy.OutcomeTerminalFailure, l.outcome(policy.APISpendUnset))
}

// TestRunnerCaptureTruncation proves each stream is captured only up to
// the limit and a failure's evidence records the truncation.
func TestRunnerCaptureTruncation(t *testing.T) {
	t.Parallel()
	l := newLane(t, "flood:300000")
	code := l.run(func(c *Config) { c.CaptureLimit = 4096 })
	require.Equal(t, 70, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.Contains(t, rc.Error.Evidence, "capture kept 4096 of 300000 stdout")
	require.LessOrEqual(t, len([]rune(rc.Error.Evidence)), providers.EvidenceCap)
	require.NotContains(t, rc.Error.Evidence, "xxxxxxxx", "no raw transcript in evidence")
}

// TestRunnerStrictContract proves --contract strict stops with exit 79
// before any CLI runs, even a preflight.
func TestRunnerStrictContract(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight = "ok"
	code := l.run(nil, "--contract", "strict", "--api-spend", "deny")
	require.Equal(t, 79, code, "stderr: %s", l.stderr)
	rc := printedReceipt(t, l.stderr)
	require.Equal(t, policy.StatusUnsupportedCapability, rc.Status)
	require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
	require.False(t, *rc.ProcessStarted)
	require.Equal(t, policy.ContractStrict, rc.Contract)
	require.Equal(t, policy.PreflightNotRun, rc.Preflight.Status)
	require.Empty(t, rc.Argv)
	require.Nil(t, rc.Executable)
	_, err := os.Stat(l.fake.counter())
	require.True(t, os.IsNotExist(err))
	_, err = os.Stat(l.fake.started())
	require.True(t, os.IsNotExist(err))
	requireGone(t, l.output)
	requireGone(t, l.receipt+".private")
	require.Equal(t, policy.OutcomeFailed, l.outcome(policy.APISpendDeny))
}

// TestRunnerBillingGuard proves --api-spend deny with a planted API key
// blocks with exit 78 before any process starts, and that the receipt and
// every output name the variable but never its value.
func TestRunnerBillingGuard(t *testing.T) {
	t.Parallel()
	const secret = "sk-planted-value-9f31"
	l := newLane(t, "ok")
	l.fake.Preflight = "ok"
	code := l.run(func(c *Config) { c.Env["OPENAI_API_KEY"] = secret }, "--api-spend", "deny")
	require.Equal(t, 78, code, "stderr: %s", l.stderr)
	rc := printedReceipt(t, l.stderr)
	require.Equal(t, policy.StatusBillingPolicyBlocked, rc.Status)
	require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
	require.False(t, *rc.ProcessStarted)
	require.Equal(t, policy.APISpendDeny, rc.APISpend)
	require.Contains(t, rc.Error.Evidence, "OPENAI_API_KEY")
	raw, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	for _, text := range []string{string(raw), l.stderr.String(), l.stdout.String()} {
		require.NotContains(t, text, secret)
	}
	_, err = os.Stat(l.fake.counter())
	require.True(t, os.IsNotExist(err), "no preflight ran")
	requireGone(t, l.receipt+".private")
	require.Equal(t, policy.OutcomeFailed, l.outcome(policy.APISpendDeny))
}

// TestRunnerOpenCodeNeedsApprovedSpend: OpenCode's native authentication
// may route to API-billed providers, so with the real OpenCode spec the
// billing guard blocks it under --api-spend deny and under an omitted
// (legacy) policy, exit 78, before the binary is even looked up.
func TestRunnerOpenCodeNeedsApprovedSpend(t *testing.T) {
	t.Parallel()
	for _, spend := range []policy.APISpend{policy.APISpendDeny, policy.APISpendLegacy} {
		t.Run(string(spend), func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "ok")
			args := []string{"--parent", "claude", "--provider", "opencode", "--model", "openai/gpt-6.1-sol",
				"--effort", "default", "--mode", "read-only", "--prompt", l.prompt, "--cwd", l.cwd,
				"--output", l.output, "--receipt", l.receipt}
			if spend != policy.APISpendLegacy {
				args = append(args, "--api-spend", string(spend))
			}
			code := l.runner(func(c *Config) { c.Lookup = providers.Lookup }).Main(context.Background(), args)
			require.Equal(t, 78, code, "stderr: %s", l.stderr)
			rc := l.receiptFile()
			require.Equal(t, policy.StatusBillingPolicyBlocked, rc.Status)
			require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
			require.False(t, *rc.ProcessStarted)
			require.Nil(t, rc.Executable, "blocked before the binary was looked up")
			require.Equal(t, spend, rc.APISpend)
			require.Equal(t, "api-spend "+string(spend)+" blocks known billing routes: opencode native authentication (requires api-spend approved)", rc.Error.Evidence)
			require.Equal(t, "the billing guard blocked the launch: "+rc.Error.Evidence, rc.Error.Message)
			requireGone(t, l.receipt+".private")
		})
	}
}

// TestRunnerMissingBinary proves a CLI absent from PATH is unavailable-cli
// in preflight with nothing started.
func TestRunnerMissingBinary(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	code := l.run(func(c *Config) { c.Env["PATH"] = l.dir })
	require.Equal(t, 69, code)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusUnavailableCLI, rc.Status)
	require.False(t, *rc.ProcessStarted)
	require.Nil(t, rc.Executable)
	requireGone(t, l.output)
	require.Equal(t, policy.OutcomeRouteUnavailable, l.outcome(policy.APISpendUnset))
}

// TestRunnerPreflightFailure proves a failing probe stops before the
// workload with the spec's verdict.
func TestRunnerPreflightFailure(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight = "unauth"
	code := l.run(nil)
	require.Equal(t, 77, code)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusUnauthenticated, rc.Status)
	require.Equal(t, policy.PreflightFailed, rc.Preflight.Status)
	require.False(t, *rc.ProcessStarted)
	_, err := os.Stat(l.fake.started())
	require.True(t, os.IsNotExist(err), "the workload never started")
	requireGone(t, l.receipt+".private")
	require.Equal(t, policy.OutcomeRouteUnavailable, l.outcome(policy.APISpendUnset))
}

// TestRunnerPreflightRetry proves the one bounded retry: a probe that
// asks for it runs again after the delay, and evidence of both is kept.
func TestRunnerPreflightRetry(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight, l.fake.Retry = "unauth-once", true
	code := l.run(nil)
	require.Equal(t, 0, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.Equal(t, policy.PreflightPassed, rc.Preflight.Status)
	require.Equal(t, "fake CLI reported no login; fake CLI reported a login", rc.Preflight.Evidence)
	n, _ := os.ReadFile(l.fake.counter())
	require.Equal(t, "2", string(n))

	// A second failure is terminal.
	l2 := newLane(t, "ok")
	l2.fake.Preflight, l2.fake.Retry = "unauth", true
	require.Equal(t, 77, l2.run(nil))
	require.Equal(t, "fake CLI reported no login; fake CLI reported no login", l2.receiptFile().Preflight.Evidence)
}

// TestRunnerRetryWaitHonoursDeadline proves the retry delay shares the
// absolute deadline: a 60 s wait under a 3 s timeout ends at the deadline,
// after the first probe and before the second. The bound is far from both
// (3 s deadline, 60 s wait) so a loaded machine cannot decide the outcome.
func TestRunnerRetryWaitHonoursDeadline(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight, l.fake.Retry = "unauth", true
	start := time.Now()
	code := l.run(func(c *Config) { c.RetryDelay = 60 * time.Second }, "--timeout", "3")
	require.Equal(t, 124, code)
	require.Less(t, time.Since(start), 30*time.Second, "the 60 s retry wait was cut short")
	rc := l.receiptFile()
	require.Equal(t, policy.StatusTimedOut, rc.Status)
	require.Equal(t, "fake CLI reported no login", rc.Preflight.Evidence, "one probe ran, the retry never did")
	require.Equal(t, policy.PreflightTimedOut, rc.Preflight.Status)
	require.False(t, *rc.ProcessStarted)
	require.Equal(t, int64(3000), *rc.TimeoutMs)
	require.Nil(t, rc.Signal, "no child was running while the runner waited")
	require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome(policy.APISpendUnset))
}

// TestRunnerTimeout proves --timeout is one absolute deadline from entry:
// a preflight and a workload that each fit alone do not fit together; the
// live child is signalled and the receipt is timed-out.
func TestRunnerTimeout(t *testing.T) {
	t.Parallel()
	t.Run("workload hangs", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "hang")
		code := l.run(nil, "--timeout", "2")
		require.Equal(t, 124, code, "stderr: %s", l.stderr)
		rc := l.receiptFile()
		require.Equal(t, policy.StatusTimedOut, rc.Status)
		require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
		require.Equal(t, int64(2000), *rc.TimeoutMs)
		require.Equal(t, "SIGTERM", *rc.Signal)
		require.Equal(t, 128+int(syscall.SIGTERM), *rc.ExitCode)
		require.NotNil(t, rc.TerminalSuccess)
		require.False(t, *rc.TerminalSuccess)
		requireGone(t, l.output)
		requireGone(t, l.receipt+".private")
		require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome(policy.APISpendUnset))
	})
	t.Run("preflight and workload share one deadline", func(t *testing.T) {
		t.Parallel()
		// The probe takes at least 3 s, so a fresh allowance per child
		// would end no sooner than 3 s + 8 s = 11 s; the shared deadline
		// ends at 8 s. The bound sits between them with room for a loaded
		// machine on both sides.
		l := newLane(t, "hang")
		l.fake.Preflight = "sleep:3s"
		start := time.Now()
		code := l.run(nil, "--timeout", "8")
		require.Equal(t, 124, code, "stderr: %s", l.stderr)
		require.Less(t, time.Since(start), 10500*time.Millisecond, "the deadline is absolute, not per child")
		rc := l.receiptFile()
		require.Equal(t, policy.PreflightPassed, rc.Preflight.Status)
		require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
		require.True(t, *rc.ProcessStarted)
	})
	t.Run("preflight hangs", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "hang"
		code := l.run(nil, "--timeout", "1.5")
		require.Equal(t, 124, code)
		rc := l.receiptFile()
		require.Equal(t, policy.PreflightTimedOut, rc.Preflight.Status)
		require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
		require.False(t, *rc.ProcessStarted)
		require.Equal(t, "SIGTERM", *rc.Signal)
		requireGone(t, l.receipt+".private")
		require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome(policy.APISpendUnset))
	})
	t.Run("stubborn child gets SIGKILL after the grace", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ignore-term")
		ctx, send := signalled()
		r := l.runner(func(c *Config) { c.KillGrace = 200 * time.Millisecond })
		done := make(chan int, 1)
		go func() { done <- r.Main(ctx, l.args()) }()
		waitFile(t, l.fake.started()+".ready")
		send(syscall.SIGTERM)
		require.Equal(t, 130, <-done)
		rc := l.receiptFile()
		require.Equal(t, "SIGTERM", *rc.Signal, "the forwarded signal is recorded, not the SIGKILL that followed")
		require.Equal(t, 128+int(syscall.SIGKILL), *rc.ExitCode)
	})
}

// TestRunnerCancelInProcess proves SIGINT delivered as a Signalled cause
// signals the live child and writes a cancelled receipt with exit 130.
func TestRunnerCancelInProcess(t *testing.T) {
	t.Parallel()
	l := newLane(t, "hang")
	ctx, send := signalled()
	r := l.runner(nil)
	done := make(chan int, 1)
	go func() { done <- r.Main(ctx, l.args("--progress", l.prg)) }()
	waitFile(t, l.fake.started())
	send(syscall.SIGINT)
	code := <-done
	require.Equal(t, 130, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Equal(t, "SIGINT", *rc.Signal)
	require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
	requireGone(t, l.output)
	requireGone(t, l.receipt+".private")

	s, why := readSnapshot(l.prg)
	require.Empty(t, why)
	require.Equal(t, phaseTerminal, s.Phase)
	require.Equal(t, "SIGINT", s.Cancellation.Requested.Signal)
	require.Equal(t, settledSignalled, s.ChildSettled.Outcome)
	require.Equal(t, "cancel", s.ChildSettled.Cause)
	require.Equal(t, policy.OutcomeFailed, l.outcome(policy.APISpendUnset))
}

// TestRunnerCancelDuringPreflight proves a cancellation while a probe
// runs signals the probe and ends in preflight with nothing started.
func TestRunnerCancelDuringPreflight(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	l.fake.Preflight = "hang"
	ctx, send := signalled()
	r := l.runner(nil)
	done := make(chan int, 1)
	go func() { done <- r.Main(ctx, l.args("--progress", l.prg)) }()
	require.Eventually(t, func() bool {
		s, _ := readSnapshot(l.prg)
		return s != nil && s.Phase == phasePreflight
	}, 10*time.Second, 5*time.Millisecond)
	send(syscall.SIGTERM)
	require.Equal(t, 130, <-done)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Equal(t, policy.PreflightCancelled, rc.Preflight.Status)
	require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
	require.False(t, *rc.ProcessStarted)
	require.Equal(t, "SIGTERM", *rc.Signal)
	require.Nil(t, rc.ExitCode, "exitCode belongs to the workload, which never ran")
	requireGone(t, l.output)
	requireGone(t, l.receipt+".private")
	require.Equal(t, policy.OutcomeFailed, l.outcome(policy.APISpendUnset))
}

// TestRunnerCancelAfterChildExited proves signal stays null when the
// direct child had already exited and only a descendant kept the output
// pipe open: the runner stops waiting on the pipe and signals nobody.
func TestRunnerCancelAfterChildExited(t *testing.T) {
	t.Parallel()
	l := newLane(t, "grandchild")
	t.Cleanup(func() {
		if b, err := os.ReadFile(l.fake.grandPid()); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	ctx, send := signalled()
	r := l.runner(nil)
	done := make(chan int, 1)
	go func() { done <- r.Main(ctx, l.args("--progress", l.prg)) }()
	waitFile(t, l.fake.grandPid())
	require.Eventually(t, func() bool {
		s, _ := readSnapshot(l.prg)
		return s != nil && s.Phase == phaseWorkloadDrain
	}, 10*time.Second, 5*time.Millisecond, "the direct child exits while the pipe stays open")
	send(syscall.SIGTERM)
	code := <-done
	require.Equal(t, 130, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Nil(t, rc.Signal, "no live child was signalled")
	require.Equal(t, 0, *rc.ExitCode)
	requireGone(t, l.output)
	s, _ := readSnapshot(l.prg)
	require.Equal(t, settledAlreadyExits, s.ChildSettled.Outcome)
}

// TestRunnerSIGTERMProcess proves cancellation of a real runner process:
// SIGTERM to the runner signals the child's process group, and the runner
// exits 130 with a cancelled receipt on stderr whose signal is SIGTERM.
func TestRunnerSIGTERMProcess(t *testing.T) {
	t.Parallel()
	l := newLane(t, "hang")
	cfg, err := json.Marshal(l.fake)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, l.args("--progress", l.prg, "--timeout", "60")...)
	cmd.Env = append(os.Environ(), envRunner+"=1", envRunnerCfg+"="+string(cfg), "SY_FAKE_PATH="+binDir, "HOME="+l.dir,
		"GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = l.stdout, l.stderr
	require.NoError(t, cmd.Start())
	waitFile(t, l.fake.started())
	b, err := os.ReadFile(l.fake.started())
	require.NoError(t, err)
	childPid, err := strconv.Atoi(string(b))
	require.NoError(t, err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", l.stderr)
	require.Equal(t, 130, ee.ExitCode())
	require.Empty(t, l.stdout.String())
	rc := printedReceipt(t, l.stderr)
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Equal(t, "SIGTERM", *rc.Signal)
	require.Equal(t, int64(60000), *rc.TimeoutMs)
	require.Equal(t, rc, l.receiptFile())
	requireGone(t, l.output)
	requireGone(t, l.receipt+".private")
	require.Equal(t, syscall.ESRCH, syscall.Kill(childPid, 0), "the direct child is gone")

	var out, errb strings.Builder
	r, err := New(Config{Stdout: &out, Stderr: &errb})
	require.NoError(t, err)
	require.Equal(t, 0, r.Status([]string{"--progress", l.prg, "--receipt", l.receipt, "--json"}))
	var st struct {
		Lanes []map[string]any `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.String()), &st))
	require.Equal(t, "terminal", st.Lanes[0]["kind"])
	require.Equal(t, "cancelled", st.Lanes[0]["status"])
	require.Equal(t, map[string]any{"requested": "SIGTERM", "childSettled": settledSignalled, "confirmed": true}, st.Lanes[0]["cancellation"])
}

// TestConfigValidate proves negative limits are refused.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, Config{}.Validate())
	_, err := New(Config{CaptureLimit: -1, KillGrace: -1})
	require.ErrorContains(t, err, "CaptureLimit")
	require.ErrorContains(t, err, "KillGrace")
}
