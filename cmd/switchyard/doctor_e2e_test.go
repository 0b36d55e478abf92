package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// doctorSheet has one role per case: "bug-fix" (for parent codex, so
// claude is launched as an external CLI) has no attempt that can run
// (claude is missing), "hillclimb" has a blocked primary (codex, signed
// out) and a fine fallback (grok).
const doctorSheet = `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
bug-fix: claude:opus@max
hillclimb: codex:gpt-5.6-sol@high -> grok:grok-4.7@xhigh
`

// doctorSentinel is planted in a variable the grok billing guard names:
// only the name may ever appear in doctor's output.
const doctorSentinel = "doctor-SENTINEL-value-5f3a"

// newDoctorSandbox: claude missing from PATH, codex signed out, grok fine.
func newDoctorSandbox(t *testing.T) *engineSandbox {
	t.Helper()
	s := newEngineSandbox(t, map[string]string{"codex": "logged-out"}, doctorSheet)
	require.NoError(t, os.Remove(filepath.Join(s.bin, "claude")))
	// Round trips make their scratch checkout under the cache directory,
	// outside every temporary directory (a read-only Grok lane refuses
	// one under it).
	s.env = append(s.env, "XDG_CACHE_HOME="+simenv.Checkout(t))
	return s
}

func (s *engineSandbox) doctorJSON(t *testing.T, wantCode int, env []string, args ...string) doctorOutput {
	t.Helper()
	saved := s.env
	s.env = append(append([]string{}, s.env...), env...)
	r := s.run(t, 90*time.Second, append([]string{"doctor", "--json", "--data-dir", s.data}, args...)...)
	s.env = saved
	require.Equal(t, wantCode, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NotContains(t, r.stdout+r.stderr, doctorSentinel, "doctor printed an environment value")
	var out doctorOutput
	requireJSONDoc(t, "doctor --json", r.stdout)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	return out
}

func doctorOf(t *testing.T, out doctorOutput, p policy.Provider) doctorProvider {
	t.Helper()
	for _, d := range out.Providers {
		if d.Provider == p {
			return d
		}
	}
	t.Fatalf("doctor did not check %s", p)
	return doctorProvider{}
}

func problemCodes(d doctorProvider) map[string]doctorProblem {
	out := map[string]doctorProblem{}
	for _, p := range d.Problems {
		out[p.Code] = p
	}
	return out
}

// TestDoctorMissingSignedOutAndFine: with --probe, against real simulated
// CLIs and no server: the missing CLI, the signed-out one (its real
// preflight probe) and the fine one are told apart, each problem carries
// its fix, the guard names the variable but never its value, and nothing
// is created.
func TestDoctorMissingSignedOutAndFine(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	out := s.doctorJSON(t, 0, []string{"XAI_API_KEY=" + doctorSentinel}, "--provider", "claude,codex,grok", "--probe")
	require.Empty(t, out.Server)
	require.True(t, out.Probed)
	require.Len(t, out.Providers, 3)

	claude := doctorOf(t, out, policy.Claude)
	require.Empty(t, claude.Binary.Path)
	pr := problemCodes(claude)[problemBinaryNotFound]
	require.True(t, pr.Blocking)
	require.Contains(t, pr.Fix, "install the claude CLI")
	require.Equal(t, "skipped", claude.SignIn.State)

	codex := doctorOf(t, out, policy.Codex)
	require.Equal(t, filepath.Join(s.bin, "codex"), codex.Binary.Path)
	require.Equal(t, "signed_out", codex.SignIn.State, codex.SignIn.Evidence)
	pr = problemCodes(codex)[problemSignedOut]
	require.True(t, pr.Blocking)
	require.Contains(t, pr.Fix, "codex login")
	require.Empty(t, codex.Guard.Blocked)

	grok := doctorOf(t, out, policy.Grok)
	require.Equal(t, filepath.Join(s.bin, "grok"), grok.Binary.Path)
	require.Equal(t, "signed_in", grok.SignIn.State, grok.SignIn.Evidence)
	require.NotContains(t, problemCodes(grok), problemSignedOut)
	require.Equal(t, []string{"XAI_API_KEY"}, grok.Guard.Blocked)
	pr = problemCodes(grok)[problemBillingGuard]
	require.True(t, pr.Blocking)
	require.Contains(t, pr.Message, "XAI_API_KEY")
	require.Contains(t, pr.Fix, "unset XAI_API_KEY")

	for _, d := range out.Providers {
		require.Len(t, d.Containment, 2, d.Provider)
		require.NotEmpty(t, d.Quota.Source, d.Provider)
		require.Equal(t, defaultConcurrency, d.Concurrency.Cap, d.Provider)
		require.Nil(t, d.Workers, "no server: no workers listed")
		for _, p := range d.Problems {
			require.NotEmpty(t, p.Fix, "%s %s has no fix line", d.Provider, p.Code)
		}
	}
	require.NoDirExists(t, s.data, "doctor creates nothing")

	// The text form: every problem ends with its fix line; no value.
	saved := s.env
	s.env = append(append([]string{}, s.env...), "XAI_API_KEY="+doctorSentinel)
	r := s.run(t, 90*time.Second, "doctor", "--data-dir", s.data, "--provider", "grok,claude")
	s.env = saved
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout+r.stderr, doctorSentinel)
	require.Contains(t, r.stdout, "guard (deny): blocks XAI_API_KEY")
	require.Contains(t, r.stdout, "sign-in:      not probed (pass --probe)")
	lines := strings.Split(r.stdout, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  problem: ") || strings.HasPrefix(l, "  warning: ") {
			require.Less(t, i+1, len(lines))
			require.True(t, strings.HasPrefix(lines[i+1], "    fix: "), "problem without a fix line: %q", l)
		}
	}
}

// TestDoctorRoleExitCode: with --sheet/--role doctor checks exactly the
// role's providers and exits 1 only when some lane cannot run at all.
func TestDoctorRoleExitCode(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	allow := []string{"--allow-unverified-containment", "claude,codex,grok"}

	out := s.doctorJSON(t, exitDoctorBlocked, nil, append([]string{"--sheet", s.sheetPath(), "--role", "bug-fix", "--parent", "codex", "--probe"}, allow...)...)
	require.Len(t, out.Providers, 1, "only the role's providers")
	require.Equal(t, policy.Claude, out.Providers[0].Provider)
	require.Len(t, out.Lanes, 1)
	require.False(t, out.Lanes[0].CanRun)
	require.Equal(t, 1, out.BlockedLanes)
	require.Equal(t, []string{problemBinaryNotFound}, out.Lanes[0].Attempts[0].Problems)

	out = s.doctorJSON(t, 0, nil, append([]string{"--sheet", s.sheetPath(), "--role", "hillclimb", "--probe"}, allow...)...)
	require.Len(t, out.Lanes, 1)
	require.Len(t, out.Providers, 2, "only the role's providers")
	require.True(t, out.Lanes[0].CanRun, "grok covers the signed-out codex")
	require.True(t, out.Lanes[0].Attempts[0].Blocked)
	require.Contains(t, out.Lanes[0].Attempts[0].Problems, problemSignedOut)
	require.False(t, out.Lanes[0].Attempts[1].Blocked)
	require.Zero(t, out.BlockedLanes)

	// The sheet approves API spend for grok: with its API key set, the
	// guard that would block grok under deny blocks nothing of this role,
	// and doctor says so rather than counting a blocking problem.
	out = s.doctorJSON(t, 0, []string{"XAI_API_KEY=" + doctorSentinel}, append([]string{"--sheet", s.sheetPath(), "--role", "hillclimb", "--probe"}, allow...)...)
	require.True(t, out.Lanes[0].CanRun)
	require.False(t, out.Lanes[0].Attempts[1].Blocked)
	grokOut := doctorOf(t, out, policy.Grok)
	require.Equal(t, []string{"XAI_API_KEY"}, grokOut.Guard.Blocked, "the guard's finding is still reported")
	pr := problemCodes(grokOut)[problemBillingGuard]
	require.False(t, pr.Blocking, "approved API spend: the guard blocks nothing of the role")
	require.Contains(t, pr.Message, "the sheet approves API spend for grok")
	require.True(t, strings.HasPrefix(pr.Fix, "none for this role"), pr.Fix)
	for _, p := range out.Providers {
		for _, pr := range p.Problems {
			require.False(t, pr.Code == problemBillingGuard && pr.Blocking, "%s: %s", p.Provider, pr.Message)
		}
	}

	// Read-only containment is required (issue 24): verified by the
	// kernel here, grok has no containment problem; on a host whose
	// sandbox is unverified (simulated by turning it off) the problem
	// blocks the lane and names the fix.
	out = s.doctorJSON(t, 0, nil, "--sheet", s.sheetPath(), "--role", "hillclimb", "--probe")
	require.True(t, out.Lanes[0].CanRun)
	for _, ce := range doctorOf(t, out, policy.Grok).Containment {
		require.NotEqual(t, "UNVERIFIED", ce.Class, "%+v", ce)
		require.Contains(t, ce.Reason, "verified by the kernel (Landlock ABI ")
	}
	for _, pr := range doctorOf(t, out, policy.Grok).Problems {
		require.NotEqual(t, problemContainment, pr.Code)
	}
	out = s.doctorJSON(t, exitDoctorBlocked, []string{"SWITCHYARD_SANDBOX=off"}, "--sheet", s.sheetPath(), "--role", "hillclimb", "--probe")
	require.False(t, out.Lanes[0].CanRun)
	var blocked bool
	for _, pr := range doctorOf(t, out, policy.Grok).Problems {
		if pr.Code == problemContainment {
			blocked = pr.Blocking
			require.Contains(t, pr.Message, "fix: unset SWITCHYARD_SANDBOX")
		}
	}
	require.True(t, blocked, "grok's UNVERIFIED read-only containment blocks")

	r := s.run(t, 30*time.Second, "doctor", "--data-dir", s.data, "--sheet", s.sheetPath(), "--role", "bug-fix", "--parent", "codex", "--probe", "--allow-unverified-containment", "claude,codex")
	require.Equal(t, exitDoctorBlocked, r.code)
	require.Contains(t, r.stdout, "lane 0 CANNOT RUN")
	require.NoDirExists(t, s.data, "doctor creates nothing")

	r = s.run(t, 30*time.Second, "doctor", "--data-dir", s.data, "--sheet", s.sheetPath())
	require.Equal(t, exitUsage, r.code, r.stderr)
	r = s.run(t, 30*time.Second, "doctor", "--data-dir", s.data, "--sheet", s.sheetPath(), "--role", "nope")
	require.Equal(t, exitPolicy, r.code, r.stderr)
}

// TestDoctorServedAsksTheWorkers: against a serve, doctor lists each
// provider's live workers with their answer to the capabilities worker
// command (the CLI on the worker's PATH, its --concurrency), and says
// which provider has no worker, with the command that starts one.
func TestDoctorServedAsksTheWorkers(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)
	s.start(t, "worker", "--data-dir", s.data, "--provider", "grok", "--concurrency", "3")

	var out doctorOutput
	require.NoError(t, waitFor(30*time.Second, "the grok worker in doctor", func() (bool, error) {
		out = s.doctorJSON(t, 0, nil, "--provider", "grok,codex")
		return len(doctorOf(t, out, policy.Grok).Workers) == 1, nil
	}))
	require.NotEmpty(t, out.Server)
	grok := doctorOf(t, out, policy.Grok)
	w := grok.Workers[0]
	require.Empty(t, w.Error)
	require.NotNil(t, w.Capabilities)
	require.Equal(t, filepath.Join(s.bin, "grok"), w.Capabilities.BinaryPath)
	require.Equal(t, 3, w.Capabilities.Concurrency)
	require.Len(t, w.Capabilities.Containment, 2)
	require.Equal(t, policy.QuotaUnsupported, w.Capabilities.QuotaSource)
	require.Equal(t, "server", grok.Quota.Where)
	require.NotNil(t, w.Transport)
	require.True(t, w.Transport.Connected)
	require.Equal(t, w.WorkerID, w.Transport.WorkerID)
	require.Empty(t, w.Transport.Running)

	codex := doctorOf(t, out, policy.Codex)
	require.Empty(t, codex.Workers)
	pr := problemCodes(codex)[problemNoWorker]
	require.False(t, pr.Blocking, "a worker may still start")
	require.Contains(t, pr.Fix, "switchyard worker --provider codex --data-dir "+s.data)

	text := s.run(t, 30*time.Second, "doctor", "--data-dir", s.data, "--provider", "grok")
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, "  worker:       "+w.WorkerID)
	require.Contains(t, text.stdout, filepath.Join(s.bin, "grok")+", concurrency 3, 0 running")
}

// TestRunPrecheckListsProblems: run prints what will not work, with fix
// lines, before it submits, and still runs (the fallback covers it).
func TestRunPrecheckListsProblems(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	args := []string{"run", "--data-dir", s.data, "--sheet", s.sheetPath(), "--role", "bug-fix",
		"--parent", "codex", "--prompt", s.prompt, "--cwd", s.checkout, "--timeout", "60s"}
	r := s.run(t, 120*time.Second, args...)
	start, submitted := strings.Index(r.stdout, "pre-check: "), strings.Index(r.stdout, "\nrun ")
	require.GreaterOrEqual(t, start, 0, r.stdout)
	require.Greater(t, submitted, start, "the check comes before the submission, which still happens:\n%s", r.stdout)
	pre := r.stdout[start:submitted]
	require.Contains(t, pre, "1 lane cannot run at all (the run goes on")
	require.Contains(t, pre, "claude: no claude CLI on this host's PATH: tried claude\n    fix: install the claude CLI so that claude is on PATH")
	require.NotContains(t, pre, "sign-in", "run does not probe")
}

// TestDoctorUsageErrors: bad flags exit 64 naming the input and the fix;
// --help shows the examples.
func TestDoctorUsageErrors(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "nope"}, `--provider "nope": unknown provider`},
		{[]string{"--mode", "write"}, `--mode "write": want read-only or isolated-write`},
		{[]string{"--role", "bug-fix"}, "--sheet and --role go together"},
		{[]string{"--sheet", s.sheetPath(), "--role", "bug-fix", "--provider", "codex"}, "--provider and --sheet/--role exclude each other"},
		{[]string{"--allow-unverified-containment", "nope"}, `--allow-unverified-containment "nope": unknown provider`},
		{[]string{"--sheet", s.sheetPath(), "--role", "bug-fix", "--parent", "gemini"}, `--parent "gemini"`},
	} {
		r := s.run(t, 30*time.Second, append([]string{"doctor", "--data-dir", s.data}, tc.args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
	r := s.run(t, 30*time.Second, "doctor", "--help")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "switchyard doctor --provider codex --probe")
	require.Contains(t, r.stdout, "Exit codes:")
	require.NoDirExists(t, s.data)
}
