package quota

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// These tests run acquireCodex against the real simulated CLI
// (testdata/simcli) as `codex app-server`, one scenario each.

// codexAcquireTimeout is generous: CI shares two cores.
const codexAcquireTimeout = 60 * time.Second

// codexParentEnv is a worker's environment: the login's variables plus
// things that must never reach the app-server (an API key, a secret).
func codexParentEnv(t *testing.T, bin string) []string {
	home := t.TempDir()
	return []string{
		"PATH=" + bin + ":/usr/bin:/bin",
		"HOME=" + home,
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"LANG=C.UTF-8",
		"OPENAI_API_KEY=tok-SNTL-9c1e",
		"SWITCHYARD_SECRET=SNTL-4242",
		"CODEX_SANDBOX=seatbelt",
	}
}

// acquireScenario installs the simulator with codex on scenario and
// acquires with a bare binary name resolved on the environment's PATH.
func acquireScenario(t *testing.T, scenario string, timeout time.Duration) (policy.CapacityReport, string) {
	t.Helper()
	bin := simenv.Install(t, "", simenv.Config{
		Providers:      map[string]simenv.ProviderConfig{"codex": {Scenario: scenario}},
		HangCapSeconds: 120,
	})
	cfg := Config{Binary: "codex", Env: codexParentEnv(t, bin), Timeout: timeout, Now: func() time.Time { return codexObserved }}
	rep := acquireCodex(context.Background(), cfg)
	return rep, bin
}

// assertReaped proves every process the scenario started is gone: the
// app-server's pid (killed with its group, and reaped).
func assertReaped(t *testing.T, bin string) {
	t.Helper()
	invs := simenv.Invocations(t, bin)
	require.NotEmpty(t, invs)
	for _, inv := range invs {
		// A killed grandchild is reaped by whoever adopted it: wait for
		// that (a zombie counts as gone).
		deadline := time.Now().Add(codexAcquireTimeout)
		for !processGone(inv.Pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.True(t, processGone(inv.Pid), "pid %d (%s) still runs", inv.Pid, inv.Kind)
	}
}

// processGone reports whether pid no longer runs: no such process, or a
// zombie awaiting its reaper.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func assertNoSentinelJSON(t *testing.T, rep policy.CapacityReport) {
	t.Helper()
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	assertNoCodexSentinel(t, string(b))
}

func TestAcquireCodexEligible(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	before := time.Now()
	rep, bin := acquireScenario(t, "success", codexAcquireTimeout)

	assert.Equal(t, policy.CapacityMeasured, rep.Snapshot.State, "reason %q", rep.Snapshot.Reason)
	assert.Equal(t, policy.QuotaLiveRPC, rep.Snapshot.Source)
	assert.Equal(t, ptr(true), rep.Snapshot.SignedIn)
	assert.Equal(t, codexObserved, rep.Snapshot.AcquiredAt, "the acquisition time is cfg.Now")
	require.Len(t, rep.Snapshot.Windows, 2)
	w5, w7 := rep.Snapshot.Windows[0], rep.Snapshot.Windows[1]
	assert.Equal(t, "5h", w5.Name)
	assert.Equal(t, ptr(23.0), w5.UsedPercent)
	require.NotNil(t, w5.ResetsAt)
	assert.WithinDuration(t, before.Add(5*time.Hour), *w5.ResetsAt, 5*time.Minute)
	assert.Equal(t, "7d", w7.Name)
	assert.Equal(t, ptr(41.0), w7.UsedPercent)
	require.NotNil(t, rep.Eligibility)
	assert.Equal(t, policy.EligibilityEligible, rep.Eligibility.State)
	assert.Empty(t, rep.Eligibility.Reasons)
	assertNoSentinelJSON(t, rep)
	assertReaped(t, bin)

	// One app-server process with a constructed environment: the login's
	// variables only, never the API key or anything else of the parent.
	invs := simenv.Invocations(t, bin)
	require.Len(t, invs, 1)
	inv := invs[0]
	assert.Equal(t, simlog.KindAppServer, inv.Kind)
	assert.Equal(t, []string{"app-server"}, inv.Argv[1:])
	assert.Equal(t, filepath.Join(bin, "codex"), inv.Argv[0], "resolved on the environment's PATH")
	assert.Equal(t, []string{"CODEX_HOME", "HOME", "LANG", "PATH"}, inv.Env)
	assert.Equal(t, inv.Pid, inv.Pgid, "the app-server leads its own process group")
	assert.Equal(t, "/", inv.Cwd)

	// The session on the wire: the handshake, account/read with a params
	// object, account/rateLimits/read with params omitted; nothing else.
	rpcs, err := simlog.ReadRPC(filepath.Join(bin, simconfig.RPCLog))
	require.NoError(t, err)
	var got []string
	for _, r := range rpcs {
		got = append(got, r.Method+"|"+r.Answer)
	}
	assert.Equal(t, []string{"initialize|result", "initialized|", "account/read|result", "account/rateLimits/read|result"}, got)
	require.Len(t, rpcs, 4)
	assert.True(t, rpcs[2].HasParams)
	assert.False(t, rpcs[3].HasParams, "rate limits are read with params omitted")
}

func TestAcquireCodexScenarios(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rows := []struct {
		scenario string
		state    policy.CapacityState
		reason   policy.CapacityReason
		signedIn *bool
		elig     policy.EligibilityState
		reasons  []policy.EligibilityReason
	}{
		{"credits-present", policy.CapacityMeasured, "", ptr(true), policy.EligibilityPolicyBlocked, []policy.EligibilityReason{policy.EligibilityReasonCreditsPresent}},
		{"quota-exhausted", policy.CapacityMeasured, "", ptr(true), policy.EligibilityAllowanceUnavailable,
			[]policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageNotAllowed, policy.EligibilityReasonRateLimitReached, policy.EligibilityReasonWindowExhausted}},
		{"usage-exhausted", policy.CapacityMeasured, "", ptr(true), policy.EligibilityEligible, nil},                                                                    // exhaustion shows at run time
		{"unverified", policy.CapacityMeasured, "", ptr(true), policy.EligibilityUnknown, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnsupported}}, // the v0.145 shape
		{"logged-out", policy.CapacityUnknown, policy.CapacityReasonNotSignedIn, ptr(false), policy.EligibilityUnknown, []policy.EligibilityReason{policy.EligibilityReasonNotSignedIn}},
		{"unauthenticated", policy.CapacityUnknown, policy.CapacityReasonNotSignedIn, ptr(false), policy.EligibilityUnknown, []policy.EligibilityReason{policy.EligibilityReasonNotSignedIn}},
		{"api-key-login", policy.CapacityUnknown, policy.CapacityReasonNoPlanQuota, ptr(true), policy.EligibilityUnknown, []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}},
		{"backend-error", policy.CapacityUnknown, policy.CapacityReasonBackendError, ptr(true), policy.EligibilityUnknown, []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}},
	}
	for _, r := range rows {
		t.Run(r.scenario, func(t *testing.T) {
			rep, bin := acquireScenario(t, r.scenario, codexAcquireTimeout)
			assert.Equal(t, r.state, rep.Snapshot.State)
			assert.Equal(t, r.reason, rep.Snapshot.Reason)
			assert.Equal(t, r.signedIn, rep.Snapshot.SignedIn)
			require.NotNil(t, rep.Eligibility)
			assert.Equal(t, r.elig, rep.Eligibility.State)
			assert.Equal(t, r.reasons, rep.Eligibility.Reasons)
			assertNoSentinelJSON(t, rep)
			assertReaped(t, bin)
		})
	}
}

// TestAcquireCodexHangTimesOut: a server that answers nothing is an
// unknown snapshot (timeout) within the bound, and it is killed.
func TestAcquireCodexHangTimesOut(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const bound = 1500 * time.Millisecond
	start := time.Now()
	rep, bin := acquireScenario(t, "app-server-hang", bound)
	elapsed := time.Since(start)
	assert.Equal(t, policy.CapacityUnknown, rep.Snapshot.State)
	assert.Equal(t, policy.CapacityReasonTimeout, rep.Snapshot.Reason)
	assert.Nil(t, rep.Snapshot.SignedIn)
	assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State)
	assert.Equal(t, []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}, rep.Eligibility.Reasons)
	assert.GreaterOrEqual(t, elapsed, bound, "waited for the bound")
	assert.Less(t, elapsed, bound+20*time.Second, "returned soon after the bound (install included)")
	assertReaped(t, bin)
}

// TestAcquireCodexKillsTheGroup: an app-server whose grandchild holds its
// stdout open answers, and the acquisition still ends within the exit
// grace, killing the grandchild with the group.
func TestAcquireCodexKillsTheGroup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	start := time.Now()
	rep, bin := acquireScenario(t, "app-server-grandchild", codexAcquireTimeout)
	assert.Less(t, time.Since(start), codexAcquireTimeout/2)
	assert.Equal(t, policy.EligibilityEligible, rep.Eligibility.State)
	invs := simenv.Invocations(t, bin)
	require.Len(t, simlog.Filter(invs, "codex", simlog.KindGrandchild), 1)
	assertReaped(t, bin)
}

// TestAcquireCodexHonoursCancellation: the caller's context ends a hung
// session long before cfg.Timeout.
func TestAcquireCodexHonoursCancellation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	bin := simenv.Install(t, "", simenv.Config{
		Providers:      map[string]simenv.ProviderConfig{"codex": {Scenario: "app-server-hang"}},
		HangCapSeconds: 120,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan policy.CapacityReport, 1)
	go func() {
		done <- acquireCodex(ctx, Config{Binary: simenv.Binary(t, bin, "codex"), Env: codexParentEnv(t, bin), Timeout: 10 * time.Minute})
	}()
	deadline := time.Now().Add(codexAcquireTimeout)
	for len(simenv.Invocations(t, bin)) == 0 {
		require.True(t, time.Now().Before(deadline), "the app-server never started")
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case rep := <-done:
		assert.Equal(t, policy.CapacityReasonTimeout, rep.Snapshot.Reason)
		assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State)
	case <-time.After(codexAcquireTimeout):
		t.Fatal("acquireCodex ignored the cancelled context")
	}
	assertReaped(t, bin)
}

func TestAcquireCodexBinaryMissing(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "codex")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	for name, cfg := range map[string]Config{
		"absent path":        {Binary: filepath.Join(dir, "missing", "codex")},
		"not executable":     {Binary: notExec},
		"a directory":        {Binary: dir},
		"not on PATH":        {Binary: "codex", Env: []string{"PATH=" + dir + ":" + t.TempDir()}},
		"default not found":  {Env: []string{"PATH=" + t.TempDir()}},
		"relative PATH only": {Binary: "codex", Env: []string{"PATH=."}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Now = func() time.Time { return codexObserved }
			rep := acquireCodex(context.Background(), cfg)
			assert.Equal(t, policy.CapacityUnknown, rep.Snapshot.State)
			assert.Equal(t, policy.CapacityReasonBinaryMissing, rep.Snapshot.Reason)
			assert.Equal(t, codexObserved, rep.Snapshot.AcquiredAt)
			require.NotNil(t, rep.Eligibility)
			assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State)
			assert.Equal(t, []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}, rep.Eligibility.Reasons)
		})
	}
}

// TestAcquireCodexForeignBinaries: real programs that are not an
// app-server: one that exits at once (stdout ends: backend_error), one
// that prints a non-JSON line (unparseable), one that prints an oversized
// line (unparseable, bounded).
func TestAcquireCodexForeignBinaries(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return p
	}
	rows := map[string]struct {
		bin    string
		reason policy.CapacityReason
	}{
		"exits at once":    {script("exits", "exit 0"), policy.CapacityReasonBackendError},
		"prints text":      {script("text", "read line; echo 'error: unknown subcommand app-server acct-SNTL-7f3a'; sleep 60"), policy.CapacityReasonUnparseable},
		"oversized line":   {script("big", "read line; head -c 2100000 /dev/zero | tr '\\0' 'x'; echo; sleep 60"), policy.CapacityReasonUnparseable},
		"refuses init":     {script("refuse", `read line; echo '{"id":0,"error":{"code":-32600,"message":"Not initialized"}}'; sleep 60`), policy.CapacityReasonBackendError},
		"dies mid-session": {script("dies", `read line; echo '{"id":0,"result":{}}'; read line; exit 3`), policy.CapacityReasonBackendError},
	}
	for name, r := range rows {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			rep := acquireCodex(context.Background(), Config{Binary: r.bin, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: codexAcquireTimeout})
			assert.Equal(t, policy.CapacityUnknown, rep.Snapshot.State)
			assert.Equal(t, r.reason, rep.Snapshot.Reason)
			assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State)
			assert.Less(t, time.Since(start), codexAcquireTimeout/2, "did not wait for the deadline")
			assertNoSentinelJSON(t, rep)
		})
	}
}

// TestCodexChildEnvIsConstructed: only the login's variables reach the
// app-server, whatever the parent holds.
func TestCodexChildEnvIsConstructed(t *testing.T) {
	env, err := codexChildEnv(codexEnvMap([]string{
		"PATH=/bin", "HOME=/h", "CODEX_HOME=/h/.codex", "LC_ALL=C", "OPENAI_API_KEY=tok-SNTL-9c1e",
		"AWS_SECRET_ACCESS_KEY=x", "CLAUDECODE=1", "SWITCHYARD_CODEX_USAGE_API=1",
	}))
	require.NoError(t, err)
	var names []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	assert.Equal(t, []string{"CODEX_HOME", "HOME", "LC_ALL", "PATH"}, names)
	assert.False(t, slices.ContainsFunc(env, func(kv string) bool { return strings.Contains(kv, "SNTL") }))
}
