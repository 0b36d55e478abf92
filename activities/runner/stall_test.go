package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

func TestStallTimeoutResolve(t *testing.T) {
	t.Parallel()
	require.EqualValues(t, 300000, events.DefaultStallTimeoutMs)
	require.Equal(t, 300*time.Second, DefaultStallTimeout)
	cases := []struct {
		in      int64
		want    int64
		wantErr string
	}{
		{0, 300000, ""},
		{1, 1, ""},
		{1500, 1500, ""},
		{MaxStallTimeoutMS, MaxStallTimeoutMS, ""},
		{-1, 0, "must not be negative"},
		{-300000, 0, "must not be negative"},
		{MaxStallTimeoutMS + 1, 0, "must be at most"},
		{1<<63 - 1, 0, "must be at most"},
	}
	for _, tc := range cases {
		got, err := ResolveStallTimeoutMS(tc.in)
		verr := ValidateStallTimeoutMS(tc.in)
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr, "%d", tc.in)
			require.ErrorContains(t, verr, tc.wantErr, "%d", tc.in)
			continue
		}
		require.NoError(t, err, "%d", tc.in)
		require.NoError(t, verr, "%d", tc.in)
		require.Equal(t, tc.want, got, "%d", tc.in)
		// Every accepted timeout is a positive Duration.
		require.Positive(t, time.Duration(got)*time.Millisecond)
	}
}

func TestStallTimeoutOptionRejected(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	for _, d := range []time.Duration{-time.Second, time.Microsecond, time.Duration(1<<63 - 1)} {
		_, err := l.runner(nil).Run(context.Background(), stallOptions(l, policy.Codex, "gpt-5.5", d))
		var ue *UsageError
		require.True(t, errors.As(err, &ue), "%v: %v", d, err)
		require.Contains(t, err.Error(), "--stall-timeout")
	}
}

// parentFor avoids a same-provider descriptor a native lane covers.
func parentFor(p policy.Provider) policy.Parent {
	if p == policy.Claude {
		return policy.ParentCodex
	}
	return policy.ParentClaude
}

// stallOptions is the lane's attempt on a real provider spec.
func stallOptions(l *lane, p policy.Provider, model string, stall time.Duration) Options {
	return Options{Parent: parentFor(p), Provider: p, Model: model, Effort: policy.EffortHigh,
		Mode: policy.ReadOnly, Prompt: l.prompt, Cwd: l.cwd, Output: l.output, Receipt: l.receipt,
		StallTimeout: stall}
}

// simRun runs one attempt against the simulated CLIs (real provider specs,
// real processes) and checks that no simulated process outlives it.
func simRun(t *testing.T, cfg simenv.Config, p policy.Provider, model string, stall time.Duration) (Result, *lane, time.Duration) {
	res, l, took, _ := simRunBin(t, cfg, p, model, stall)
	return res, l, took
}

// simRunBin is simRun that also returns the simulators' bin directory.
func simRunBin(t *testing.T, cfg simenv.Config, p policy.Provider, model string, stall time.Duration) (Result, *lane, time.Duration, string) {
	t.Helper()
	bin := simenv.Install(t, "", cfg)
	l := newLane(t, "")
	if p == policy.Grok {
		l.cwd = simenv.Checkout(t) // a read-only Grok lane refuses a temporary checkout (providers/grok_checkout.go)
	}
	r, err := New(Config{
		Env:       map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": l.dir, "LANG": "C.UTF-8"},
		Stdout:    l.stdout,
		Stderr:    l.stderr,
		KillGrace: 2 * time.Second,
	})
	require.NoError(t, err)
	began := time.Now()
	res, err := r.Run(context.Background(), stallOptions(l, p, model, stall))
	took := time.Since(began)
	require.NoError(t, err)
	for _, inv := range simenv.Invocations(t, bin) {
		require.ErrorIs(t, syscall.Kill(inv.Pid, 0), syscall.ESRCH, "simulated %s %s (pid %d) outlived the attempt", inv.Provider, inv.Kind, inv.Pid)
	}
	return res, l, took, bin
}

// normalizeStall proves the receipt passes `policy normalize` unchanged as
// a deadline-exceeded outcome.
func normalizeStall(t *testing.T, l *lane, p policy.Provider, model string) {
	t.Helper()
	b, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	att := policy.Attempt{Kind: policy.KindDescriptor, Provider: p, Model: model, Effort: policy.EffortHigh}
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent:      parentFor(p),
		Attempt:     policy.AttemptPolicy{Descriptor: att.String(), Attempt: att, ExhaustionGroup: p, APISpend: "unset", Route: policy.RouteExternal},
		Mode:        policy.ReadOnly,
		ReceiptPath: l.receipt,
		Receipt:     b,
	})
	require.NoError(t, err, "receipt:\n%s", b)
	require.Equal(t, policy.OutcomeDeadlineExceeded, ev.Status, "receipt:\n%s", b)
}

// requireStall checks the one response_stalled terminal.
func requireStall(t *testing.T, res Result, stall time.Duration, health, liveness, probe string) {
	t.Helper()
	rc := res.Receipt
	require.Equal(t, policy.StatusTimedOut, rc.Status)
	require.Equal(t, 124, res.ExitCode)
	require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
	require.True(t, *rc.ProcessStarted)
	require.NotNil(t, rc.Error)
	require.True(t, strings.HasPrefix(rc.Error.Message, "response_stalled: "), rc.Error.Message)
	require.NotNil(t, res.Stall)
	st := *res.Stall
	require.Equal(t, "response_stalled", st.Failure)
	require.Equal(t, stall.Milliseconds(), st.TimeoutMs)
	require.GreaterOrEqual(t, st.IdleMs, stall.Milliseconds())
	require.Equal(t, health, st.ProviderHealth)
	require.Equal(t, liveness, st.Liveness)
	require.Equal(t, probe, st.Probe)
	// The exact identity the probe was checked against; an attempt run
	// outside a worker is bound to no connection and has no observation
	// sequence.
	require.Equal(t, string(rc.Provider), st.Adapter)
	require.Equal(t, rc.Model, st.Target, "the model the argv pins (these models map to themselves)")
	require.Nil(t, st.HealthObservationSeq)
	require.NoError(t, st.Validate())
	require.True(t, st.FenceClosed, "the simulated CLI exits on SIGTERM within the grace")
	require.Equal(t, "SIGTERM", *rc.Signal)
	require.Equal(t, stall.Milliseconds(), *rc.TimeoutMs, "the stall timeout is the receipt's explicit deadline")
	// The evidence is the allowlisted metadata only: no provider output.
	for _, line := range strings.Split(rc.Error.Evidence, "\n") {
		key, _, ok := strings.Cut(line, ": ")
		require.True(t, ok, "evidence line %q", line)
		require.Contains(t, []string{"diagnostic", "idleMs", "timeoutMs", "providerHealth", "liveness", "probe", "fenceClosed"}, key)
	}
	require.NotContains(t, string(res.Bytes), "thread.started")
	require.NotContains(t, string(res.Bytes), "session_id")
}

// TestStallWatchdogSimulatedCLIs: a CLI that prints one event and hangs
// ends timed-out/response_stalled after the stall timeout, with the
// health probe's verdict joined in.
func TestStallWatchdogSimulatedCLIs(t *testing.T) {
	// Long enough that a simulated CLI on a loaded machine (CI shares two
	// cores) has started and logged itself before the watchdog can fire.
	const stall = 1500 * time.Millisecond
	codex := func(pc simenv.ProviderConfig) simenv.Config {
		return simenv.Config{Providers: map[string]simenv.ProviderConfig{"codex": pc}}
	}
	t.Run("codex/signed-in", func(t *testing.T) {
		res, l, _ := simRun(t, codex(simenv.ProviderConfig{Scenario: "stall-after-one"}), policy.Codex, "gpt-5.5", stall)
		requireStall(t, res, stall, "request_stalled", "available", "available")
		normalizeStall(t, l, policy.Codex, "gpt-5.5")
	})
	t.Run("grok/signed-in", func(t *testing.T) {
		cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"grok": {Scenario: "stall-after-one"}}}
		res, l, _ := simRun(t, cfg, policy.Grok, "grok-4.7", stall)
		requireStall(t, res, stall, "request_stalled", "available", "available")
		normalizeStall(t, l, policy.Grok, "grok-4.7")
	})
	t.Run("codex/signed-out-during-stall", func(t *testing.T) {
		// Preflight and workload as stall-after-one; the third invocation,
		// the stall's status probe, answers "Not logged in".
		pc := simenv.ProviderConfig{Queue: []string{"stall-after-one", "stall-after-one"}, Scenario: "unauthenticated"}
		cfg := codex(pc)
		res, l, _ := simRun(t, cfg, policy.Codex, "gpt-5.5", stall)
		requireStall(t, res, stall, "provider_unhealthy", "unavailable", "unavailable")
		normalizeStall(t, l, policy.Codex, "gpt-5.5")
	})
	t.Run("codex/probe-hangs", func(t *testing.T) {
		old := StallProbeBound
		StallProbeBound = 700 * time.Millisecond
		t.Cleanup(func() { StallProbeBound = old })
		pc := simenv.ProviderConfig{Queue: []string{"stall-after-one", "stall-after-one"}, Scenario: "status-hang"}
		res, l, took := simRun(t, codex(pc), policy.Codex, "gpt-5.5", stall)
		requireStall(t, res, stall, "health_unknown", "unknown", "timeout")
		normalizeStall(t, l, policy.Codex, "gpt-5.5")
		// Bounded: the shortened probe bound, not the default five seconds
		// (stall + bound + the probe's own kill grace, with slack).
		require.Less(t, took, stall+StallProbeBound+2*time.Second+1500*time.Millisecond)
	})
	t.Run("claude/no-probe", func(t *testing.T) {
		// Claude read-only has no preflight probe: health_unknown without
		// running anything after the workload.
		cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"claude": {Scenario: "long-running"}}}
		res, l, _ := simRun(t, cfg, policy.Claude, "opus", stall)
		requireStall(t, res, stall, "health_unknown", "unknown", "unsupported")
		normalizeStall(t, l, policy.Claude, "opus")
	})
	t.Run("gemini/version-probe-only", func(t *testing.T) {
		// Gemini's preflight checks only its version, which proves nothing
		// about sign-in: health_unknown, and no probe runs after the stall.
		cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"gemini": {Scenario: "long-running"}}}
		res, l, _, bin := simRunBin(t, cfg, policy.Gemini, "gemini-3.1-pro", stall)
		requireStall(t, res, stall, "health_unknown", "unknown", "unsupported")
		normalizeStall(t, l, policy.Gemini, "gemini-3.1-pro")
		invs := simenv.Invocations(t, bin)
		require.Len(t, simlog.Filter(invs, "gemini", simlog.KindVersion), 1, "only the launch preflight ran")
		require.Len(t, simlog.Filter(invs, "gemini", simlog.KindWorkload), 1)
	})
}

// TestStallWatchdogProgressResets: a slow but steady stream (a line every
// 400 ms, 2.4 s in all) under a 1.2 s stall timeout completes.
func TestStallWatchdogProgressResets(t *testing.T) {
	cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"codex": {Scenario: "slow-steady"}}}
	const stall = 1200 * time.Millisecond
	res, _, took := simRun(t, cfg, policy.Codex, "gpt-5.5", stall)
	require.Equal(t, policy.StatusComplete, res.Receipt.Status, "%s", res.Bytes)
	require.Nil(t, res.Stall)
	require.Greater(t, took, stall, "the stream outlasted one stall timeout, so only resets kept it alive")
}

// TestStallWatchdogOffWithoutTimeout: StallTimeout 0 arms nothing.
func TestStallWatchdogOffWithoutTimeout(t *testing.T) {
	cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"codex": {Scenario: "slow-steady"}}}
	res, _, _ := simRun(t, cfg, policy.Codex, "gpt-5.5", 0)
	require.Equal(t, policy.StatusComplete, res.Receipt.Status)
	require.Nil(t, res.Stall)
}

// TestStallNeverRetries: the signed-out run probed exactly once after
// the stall (no retry of the workload).
func TestStallNeverRetries(t *testing.T) {
	pc := simenv.ProviderConfig{Queue: []string{"stall-after-one", "stall-after-one"}, Scenario: "unauthenticated"}
	bin := simenv.Install(t, "", simenv.Config{Providers: map[string]simenv.ProviderConfig{"codex": pc}})
	l := newLane(t, "")
	r, err := New(Config{Env: map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": l.dir}, Stdout: l.stdout, Stderr: l.stderr})
	require.NoError(t, err)
	res, err := r.Run(context.Background(), stallOptions(l, policy.Codex, "gpt-5.5", 1500*time.Millisecond)) // a loaded machine still starts the CLI first
	require.NoError(t, err)
	require.NotNil(t, res.Stall)
	invs := simenv.Invocations(t, bin)
	require.Len(t, simlog.Filter(invs, "codex", simlog.KindWorkload), 1, "the workload ran once")
	require.Len(t, simlog.Filter(invs, "codex", simlog.KindStatus), 2, "one preflight and one stall probe")
}

// TestRunnerStallTimeoutFlag: --stall-timeout parses durations and
// seconds, refuses zero, negative, garbage and overflow with exit 64, and
// is off when absent.
func TestRunnerStallTimeoutFlag(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	good := map[string]time.Duration{"90s": 90 * time.Second, "5m": 5 * time.Minute, "300": 300 * time.Second, "0.25": 250 * time.Millisecond, "1ms": time.Millisecond}
	for v, want := range good {
		o, err := parseRunnerFlags(l.args("--stall-timeout", v))
		require.NoError(t, err, v)
		require.Equal(t, want, o.StallTimeout, v)
	}
	o, err := parseRunnerFlags(l.args())
	require.NoError(t, err)
	require.Zero(t, o.StallTimeout, "no implicit watchdog in the drop-in")
	for _, v := range []string{"0", "0s", "-5s", "-1", "soon", "NaN", "Inf", "1e30", "0x10", "1_0", "999999999h"} {
		_, err := parseRunnerFlags(l.args("--stall-timeout", v))
		var ue *UsageError
		require.True(t, errors.As(err, &ue), "%q: %v", v, err)
		require.Contains(t, err.Error(), "--stall-timeout", v)
	}
	require.Contains(t, RunnerUsage, "--stall-timeout D")
}

// TestRunnerMainStallTimeout: the command line arms the watchdog.
func TestRunnerMainStallTimeout(t *testing.T) {
	bin := simenv.Install(t, "", simenv.Config{Providers: map[string]simenv.ProviderConfig{"codex": {Scenario: "stall-after-one"}}})
	l := newLane(t, "")
	r, err := New(Config{Env: map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": l.dir}, Stdout: l.stdout, Stderr: l.stderr})
	require.NoError(t, err)
	code := r.Main(context.Background(), l.args("--stall-timeout", "300ms"))
	require.Equal(t, 124, code, l.stderr.String())
	require.Contains(t, l.stderr.String(), `"status":"timed-out"`)
	require.Contains(t, l.stderr.String(), "response_stalled")
	require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome("unset"))
}

// TestStallLateOutputFenced: a CLI that answers in full only when the
// stall's SIGTERM arrives still ends response_stalled; the late answer is
// neither delivered nor read as a terminal success.
func TestStallLateOutputFenced(t *testing.T) {
	t.Parallel()
	l := newLane(t, "late-answer")
	r := l.runner(nil)
	// Long enough for the child to have installed its SIGTERM handler on a
	// busy machine (a signal before that ends it 143, not 0).
	o := stallOptions(l, policy.Codex, "gpt-5.5", 2*time.Second)
	res, err := r.Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, policy.StatusTimedOut, res.Receipt.Status, "%s", res.Bytes)
	require.NotNil(t, res.Stall)
	require.Equal(t, "health_unknown", res.Stall.ProviderHealth, "the fake spec has no sign-in probe")
	require.False(t, *res.Receipt.TerminalSuccess, "the late turn.completed is fenced")
	require.Equal(t, 0, *res.Receipt.ExitCode, "the child exited 0 after its late answer")
	require.NoFileExists(t, l.output)
	require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome("unset"))
}

// TestStallProbeErrorIsUnknown: a health probe that cannot start is an
// error, never a verified unavailable.
func TestStallProbeErrorIsUnknown(t *testing.T) {
	t.Parallel()
	l := newLane(t, "hang")
	l.fake.Preflight = "ok"
	var calls atomic.Int32
	r := l.runner(func(c *Config) {
		c.Lookup = func(policy.Provider) (*providers.Spec, error) {
			s, err := l.fake.spec()
			if err != nil {
				return nil, err
			}
			launch := s.Preflight
			s.Preflight = func(req providers.Request) [][]string {
				if calls.Add(1) == 1 {
					return launch(req) // the launch preflight passes
				}
				return [][]string{{filepath.Join(l.dir, "no-such-cli"), "login", "status"}}
			}
			return s, nil
		}
	})
	res, err := r.Run(context.Background(), stallOptions(l, policy.Codex, "gpt-5.5", 300*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, policy.StatusTimedOut, res.Receipt.Status, "%s", res.Bytes)
	require.NotNil(t, res.Stall)
	require.Equal(t, events.Stall{Failure: "response_stalled", IdleMs: res.Stall.IdleMs, TimeoutMs: 300,
		ProviderHealth: "health_unknown", Liveness: "unknown", Probe: "error", FenceClosed: true,
		Adapter: "codex", Target: "gpt-5.5"}, *res.Stall)
	require.Equal(t, policy.OutcomeDeadlineExceeded, l.outcome("unset"))
}
