package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/golden"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// The end-to-end tests of `switchyard runner`: the real binary (built once
// by TestMain) runs as a child process with a constructed environment
// whose PATH starts with the simulated provider CLIs of testdata/simcli,
// for every provider and every outcome the runner issue names. Each
// receipt is compared field by field with
// testdata/runner/<provider>/<case>.golden after normalizing only the
// timestamps, elapsedMs, pids and temporary paths (runner_e2e_helpers_test.go).

// e2eCase is one lane outcome for one provider.
type e2eCase struct {
	provider policy.Provider
	name     string // golden file name
	scenario string // simulator scenario for the provider
	apiSpend string
	timeout  string // --timeout value, "" for none
	cancel   bool   // SIGTERM the runner once the workload is busy
	// status is the receipt status the runner must reach. The golden
	// records the rest of the receipt.
	status policy.ReceiptStatus
	// why explains a status that is not what the scenario's name says.
	why string
}

// e2eAPISpend is what each provider's lanes pass: deny wherever the
// provider can run under it; Grok is always billing-policy-blocked under
// deny (no subscription proof) and OpenCode runs only when approved.
var e2eAPISpend = map[policy.Provider]string{
	policy.Claude: "deny", policy.Codex: "deny", policy.Grok: "approved", policy.Devin: "deny",
	policy.Cursor: "deny", policy.Antigravity: "deny", policy.OpenCode: "approved", policy.Gemini: "deny",
}

// e2eTimeout is the --timeout of the timeout cases: long enough for the
// preflight, the workload's start and the simulator's own start-up record
// under -race on two cores at load 10 (2 s was not: the workload was
// signalled before the simulator logged itself), short enough to keep the
// file quick (the timeout lanes run concurrently).
const e2eTimeout = "20"

// e2eCases lists every provider × outcome. Fast cases run as parallel
// subtests; slow ones (deadline, cancellation, Grok's retried preflight)
// run concurrently from goroutines so their waits overlap.
func e2eCases() []e2eCase {
	quota := map[policy.Provider]policy.ReceiptStatus{}
	auth := map[policy.Provider]policy.ReceiptStatus{}
	quotaWhy, authWhy := map[policy.Provider]string{}, map[policy.Provider]string{}
	for _, p := range e2eProviders {
		quota[p], auth[p] = policy.StatusUsageExhausted, policy.StatusUnauthenticated
	}
	// Antigravity and OpenCode have no proven quota shape: their adapters
	// classify nothing as exhaustion, so the 429 stays a plain failure.
	quota[policy.Antigravity], quotaWhy[policy.Antigravity] = policy.StatusChildFailed, "antigravity has no quota classifier (UNKNOWN): a 429 error event is child-failed"
	quota[policy.OpenCode], quotaWhy[policy.OpenCode] = policy.StatusChildFailed, "opencode has no quota classifier (UNKNOWN): a provider.rate-limit error is child-failed"
	// Where authentication can only surface at invocation there is no
	// probe to say "unauthenticated": OpenCode's preflight checks version
	// and config only. The CLI's own failure is what really happens:
	// child-failed in the invocation. Claude (no preflight: authentication
	// is deferred to the task) and Gemini (a version probe only) are the
	// exceptions: claude's typed "Not logged in" result, and gemini's
	// sign-in stop (exit 41 and its exact sign-in error, before any model
	// request), are classified unauthenticated, as the real CLIs print them.
	for p, why := range map[policy.Provider]string{
		policy.OpenCode: "opencode's preflight checks version and config, not auth; the workload's 401 is child-failed",
	} {
		auth[p], authWhy[p] = policy.StatusChildFailed, why
	}
	authWhy[policy.Claude] = "claude read-only has no preflight; the workload's typed \"Not logged in\" result is unauthenticated"
	var cases []e2eCase
	for _, p := range e2eProviders {
		spend := e2eAPISpend[p]
		cases = append(cases,
			e2eCase{provider: p, name: "success", scenario: "success", apiSpend: spend, status: policy.StatusComplete},
			e2eCase{provider: p, name: "usage-exhausted", scenario: "usage-exhausted", apiSpend: spend, status: quota[p], why: quotaWhy[p]},
			e2eCase{provider: p, name: "unauthenticated", scenario: "unauthenticated", apiSpend: spend, status: auth[p], why: authWhy[p]},
			e2eCase{provider: p, name: "malformed", scenario: "malformed", apiSpend: spend, status: policy.StatusMalformedOutput},
			e2eCase{provider: p, name: "timeout", scenario: "long-running", apiSpend: spend, timeout: e2eTimeout, status: policy.StatusTimedOut},
			e2eCase{provider: p, name: "cancelled", scenario: "long-running", apiSpend: spend, cancel: true, status: policy.StatusCancelled},
		)
	}
	// Grok under deny is blocked after its preflight: its login banner
	// cannot prove subscription routing.
	cases = append(cases, e2eCase{provider: policy.Grok, name: "deny", scenario: "success", apiSpend: "deny",
		status: policy.StatusBillingPolicyBlocked, why: "grok under api-spend deny always ends billing-policy-blocked"})
	return cases
}

// slow reports whether a case waits on purpose: a deadline, a cancellation
// (the progress snapshot's 5 s activity flush) or Grok's 5 s preflight retry.
func (c e2eCase) slow() bool {
	return c.timeout != "" || c.cancel || (c.provider == policy.Grok && c.scenario == "unauthenticated")
}

func (c e2eCase) lane(t *testing.T) *e2eLane {
	t.Helper()
	var extra []string
	if c.timeout != "" {
		extra = append(extra, "--timeout", c.timeout)
	}
	return newE2ELane(t, c.provider, c.scenario, c.apiSpend, nil, extra...)
}

func (c e2eCase) execute(l *e2eLane) (e2eRun, error) {
	if c.cancel {
		return l.runWith(l.cancelWhenBusy)
	}
	return l.run()
}

// TestRunnerE2E runs the fast cases, one parallel subtest each.
func TestRunnerE2E(t *testing.T) {
	t.Parallel()
	for _, c := range e2eCases() {
		if c.slow() {
			continue
		}
		t.Run(string(c.provider)+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			l := c.lane(t)
			r, err := c.execute(l)
			require.NoError(t, err)
			c.verify(t, l, r)
		})
	}
}

// TestRunnerE2ESlow starts every slow lane at once (their waits are
// sleeps, not work), then checks each in its own subtest.
func TestRunnerE2ESlow(t *testing.T) {
	t.Parallel()
	type pending struct {
		c   e2eCase
		l   *e2eLane
		r   e2eRun
		err error
	}
	var all []*pending
	for _, c := range e2eCases() {
		if c.slow() {
			all = append(all, &pending{c: c, l: c.lane(t)})
		}
	}
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.r, p.err = p.c.execute(p.l)
		}()
	}
	wg.Wait()
	for _, p := range all {
		t.Run(string(p.c.provider)+"/"+p.c.name, func(t *testing.T) {
			require.NoError(t, p.err)
			p.c.verify(t, p.l, p.r)
		})
	}
}

// verify checks one finished lane: the exit code and status, the receipt
// line on the right stream (and equal to the file), the file's mode, the
// output file delivered or its reservation removed, no private file left
// behind, `runner status` calling the lane terminal, what the simulator
// saw, and the golden.
func (c e2eCase) verify(t *testing.T, l *e2eLane, r e2eRun) {
	t.Helper()
	wantCode := policy.ExitCodeForStatus(c.status)
	require.Equal(t, wantCode, r.code, "exit code; stdout %q stderr %q", r.stdout, r.stderr)

	// The one-line receipt: stdout on exit 0, stderr otherwise; the other
	// stream stays empty.
	line, other, stream := r.stdout, r.stderr, "stdout"
	if wantCode != 0 {
		line, other, stream = r.stderr, r.stdout, "stderr"
	}
	require.Empty(t, other, "the other stream must be empty")
	require.True(t, strings.HasSuffix(line, "\n") && strings.Count(line, "\n") == 1, "one receipt line on %s: %q", stream, line)

	raw, err := os.ReadFile(l.path("receipt.json"))
	require.NoError(t, err)
	fi, err := os.Lstat(l.path("receipt.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "receipt file mode")
	rc, err := policy.DecodeReceipt(raw)
	require.NoError(t, err, "the receipt file decodes as a schema-2 receipt")
	require.Equal(t, c.status, rc.Status, "status (%s)", c.why)
	require.Equal(t, 2, rc.SchemaVersion)

	fileNorm, err := normalizedReceipt(l, raw, r.wall)
	require.NoError(t, err)
	lineNorm, err := normalizedReceipt(l, []byte(line), r.wall)
	require.NoError(t, err)
	require.Equal(t, fileNorm, lineNorm, "the printed line and the receipt file are the same receipt")

	// The output file holds the final response when one was delivered;
	// otherwise the empty reservation is gone.
	output := "(absent)\n"
	out, err := os.ReadFile(l.path("out.md"))
	if c.status == policy.StatusComplete || c.status == policy.StatusNeedsParentOperation {
		require.NoError(t, err)
		require.NotEmpty(t, out)
		output = string(out) + "\n"
	} else {
		require.True(t, os.IsNotExist(err), "the empty output reservation is removed (err %v)", err)
	}

	// Private per-attempt files (<receipt>.private, .cursor-config,
	// .devin-config.json, .contract-prompt.md, .antigravity, …) are gone
	// after every outcome; only the lane's own files remain.
	entries, err := os.ReadDir(l.work)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"checkout", "home", "progress.json", "prompt.md", "receipt.json"}
	if output != "(absent)\n" {
		want = append(want, "out.md")
	}
	sort.Strings(want)
	require.Equal(t, want, names, "work directory after the attempt")
	checkouts, err := os.ReadDir(l.path("checkout"))
	require.NoError(t, err)
	require.Empty(t, checkouts, "nothing is left in the checkout")

	// `runner status` sees the lane as terminal with the receipt's status.
	st := exec.Command(binPath, "runner", "status", "--progress", l.path("progress.json"), "--receipt", l.path("receipt.json"), "--json")
	st.Env = l.env
	stOut, err := st.Output()
	require.NoError(t, err)
	var doc struct {
		Lanes []struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal(stOut, &doc), "status output %s", stOut)
	require.Len(t, doc.Lanes, 1)
	require.Equal(t, "terminal", doc.Lanes[0].Kind)
	require.Equal(t, string(c.status), doc.Lanes[0].Status)

	c.verifySimulator(t, l, rc)
	checkRunnerGolden(t, c.provider, c.name, renderRunnerGolden(l, r, c.why, stream, output, fileNorm))
}

// verifySimulator checks what the simulated CLI recorded: exactly one
// workload when the receipt says a process started (no retry of model
// execution, ever) and none otherwise, and for deadline and cancellation
// the SIGTERM the workload received from the runner.
func (c e2eCase) verifySimulator(t *testing.T, l *e2eLane, rc *policy.Receipt) {
	t.Helper()
	invs := simenv.Invocations(t, l.bin)
	workloads := simlog.Filter(invs, string(c.provider), simlog.KindWorkload)
	started := rc.ProcessStarted != nil && *rc.ProcessStarted
	if started {
		require.Len(t, workloads, 1, "exactly one model invocation")
	} else {
		require.Empty(t, workloads, "no model invocation")
	}
	sigs := simenv.Signals(t, l.bin)
	if !c.cancel && c.timeout == "" {
		require.Empty(t, sigs, "no signal reached a simulator")
		return
	}
	require.NotNil(t, rc.Signal, "signal is set: the runner signalled a live child")
	require.Equal(t, "SIGTERM", *rc.Signal)
	require.Len(t, workloads, 1)
	require.Len(t, sigs, 1, "signals %+v", sigs)
	require.Equal(t, workloads[0].Pid, sigs[0].Pid, "the workload itself received the signal")
	require.Equal(t, "SIGTERM", sigs[0].Signal)
	require.False(t, sigs[0].Ignored)
	require.Equal(t, workloads[0].Pid, workloads[0].Pgid, "the workload leads its own process group")
}

// TestRunnerGoldenFilesHaveCases fails on golden files no case writes.
func TestRunnerGoldenFilesHaveCases(t *testing.T) {
	t.Parallel()
	want := map[string]bool{}
	for _, c := range e2eCases() {
		want[filepath.Join(runnerGoldenDir, string(c.provider), c.name+".golden")] = true
	}
	files, err := filepath.Glob(filepath.Join(runnerGoldenDir, "*", "*.golden"))
	require.NoError(t, err)
	for _, f := range files {
		require.True(t, want[f], "golden file %s has no test case", f)
	}
	if !golden.Updating() {
		require.Len(t, files, len(want), "every case has a golden file")
	}
}

// --- the billing and environment guard -------------------------------------

// plantedSecrets are API keys and route overrides of every provider, plus
// unrelated secrets, each with a distinctive value that must never appear
// in any output.
var plantedSecrets = []string{
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "XAI_API_KEY", "GROK_CODE_XAI_API_KEY",
	"DEVIN_API_KEY", "DEVIN_API_URL", "CURSOR_API_KEY", "CURSOR_API_ENDPOINT",
	"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL",
	"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
}

// plantedSwitches are truthy route switches; "1" is not distinctive, so
// their values are not searched for.
var plantedSwitches = []string{"AGY_GATEWAY_URL", "CLAUDE_CODE_USE_BEDROCK"}

// plantedMarkers are host session markers the contract removes from every
// child. OPENCODE_CONFIG names a file that does not exist: were it passed
// through instead of replaced, OpenCode's config preflight would fail.
var plantedMarkers = map[string]string{
	"CLAUDECODE":                           "1",
	"CLAUDE_CODE_CHILD_SESSION":            "1",
	"CLAUDE_CODE_SESSION_ID":               "planted-session",
	"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
	"CODEX_THREAD_ID":                      "planted-thread",
	"CODEX_SESSION_ID":                     "planted-session",
	"CODEX_CI":                             "1",
	"CODEX_SHELL":                          "1",
	"CODEX_SANDBOX":                        "seatbelt",
	"CODEX_SANDBOX_NETWORK_DISABLED":       "1",
	"CODEX_INTERNAL_ORIGINATOR_OVERRIDE":   "planted",
	"DEVIN_REFUSAL_FALLBACK":               "1",
	"OPENCODE_CONFIG":                      "/nonexistent/planted-opencode.json",
	"OPENCODE_SERVER_PASSWORD":             "planted-opencode",
}

// plantedValue is the distinctive value of a planted secret.
func plantedValue(name string) string { return "sy-planted-" + strings.ToLower(name) + "-7c1e55e" }

// plantedEnv is the runner's extra parent environment for the billing
// tests: every planted secret, switch and marker, plus base-allowlist
// variables every child keeps.
func plantedEnv(tmpdir string) []string {
	var env []string
	for _, n := range plantedSecrets {
		env = append(env, n+"="+plantedValue(n))
	}
	for _, n := range plantedSwitches {
		env = append(env, n+"=1")
	}
	for n, v := range plantedMarkers {
		env = append(env, n+"="+v)
	}
	return append(env, "TERM=dumb", "USER=switchyard", "LC_ALL=C.UTF-8", "TMPDIR="+tmpdir,
		"HTTPS_PROXY=http://proxy.example.test:3128", "NO_PROXY=localhost,.internal", "NODE_EXTRA_CA_CERTS=/etc/ssl/corp-ca.pem")
}

// ownRoutes is, per provider, which planted billing variables are its own
// (its spec's OwnEnv): the names its deny guard blocks on, and the only
// planted names its child may see under approved. The spec is the source
// of truth; this table is the test's independent statement of it.
var ownRoutes = map[policy.Provider][]string{
	policy.Claude:      {"ANTHROPIC_API_KEY", "CLAUDE_CODE_USE_BEDROCK"},
	policy.Codex:       {"OPENAI_API_KEY"},
	policy.Grok:        {"GROK_CODE_XAI_API_KEY", "XAI_API_KEY"},
	policy.Devin:       {"DEVIN_API_KEY", "DEVIN_API_URL"},
	policy.Cursor:      {"CURSOR_API_ENDPOINT", "CURSOR_API_KEY"},
	policy.Antigravity: {"AGY_GATEWAY_URL", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"},
	policy.OpenCode:    {}, // native login only: no inherited key reaches it
	policy.Gemini:      {"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"},
}

// assertNoPlantedValue fails when any planted secret's value appears in b.
func assertNoPlantedValue(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, n := range plantedSecrets {
		require.NotContains(t, string(b), plantedValue(n), "%s leaks the value of %s", what, n)
	}
	require.NotContains(t, string(b), "7c1e55e", "%s leaks a planted value", what)
}

// TestRunnerBillingGuardDeny plants keys and route overrides in the
// runner's parent environment and proves that under --api-spend deny
// every provider is blocked before any CLI starts (exit 78,
// billing-policy-blocked, preflight phase, processStarted false) with the
// blocking variable names, never a value, and that the simulator was
// never invoked at all.
func TestRunnerBillingGuardDeny(t *testing.T) {
	t.Parallel()
	for _, p := range e2eProviders {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			l := newE2ELane(t, p, "success", "deny", plantedEnv(tmp))
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 78, r.code, "stderr %s", r.stderr)
			require.Empty(t, r.stdout)

			raw, err := os.ReadFile(l.path("receipt.json"))
			require.NoError(t, err)
			for what, b := range map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr), "receipt": raw} {
				assertNoPlantedValue(t, what, b)
			}
			if prog, err := os.ReadFile(l.path("progress.json")); err == nil {
				assertNoPlantedValue(t, "progress", prog)
			}
			rc, err := policy.DecodeReceipt(raw)
			require.NoError(t, err)
			require.Equal(t, policy.StatusBillingPolicyBlocked, rc.Status)
			require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
			require.False(t, *rc.ProcessStarted)
			require.Nil(t, rc.ExitCode)
			require.Empty(t, rc.Argv)
			require.Equal(t, policy.APISpendDeny, rc.APISpend)

			const prefix = "api-spend deny blocks known billing routes: "
			require.NotNil(t, rc.Error)
			require.True(t, strings.HasPrefix(rc.Error.Evidence, prefix), "evidence %q", rc.Error.Evidence)
			names := strings.Split(strings.TrimPrefix(rc.Error.Evidence, prefix), ", ")
			if p == policy.OpenCode {
				// OpenCode's block is its spending rule, not a variable.
				require.Equal(t, []string{"opencode native authentication (requires api-spend approved)"}, names)
			} else {
				require.Equal(t, ownRoutes[p], names, "the receipt names exactly the provider's planted routes")
			}
			require.Contains(t, rc.Error.Message, strings.Join(names, ", "))

			require.Empty(t, simenv.Invocations(t, l.bin), "no simulated CLI ran, not even a preflight probe")
			_, err = os.Lstat(l.path("out.md"))
			require.True(t, os.IsNotExist(err))
		})
	}
}

// e2eChildEnv is the complete set of variable names each provider's child
// sees under approved with the planted parent environment: the base
// allowlist (PATH, HOME, TERM, LANG, LC_*, TMPDIR, USER), the provider's
// own routes, and what its spec sets itself (Cursor's private config dir,
// OpenCode's private config and switches).
var e2eChildEnv = map[policy.Provider][]string{
	policy.Cursor: {"CURSOR_CONFIG_DIR"},
	// The private trusted-folders file that keeps gemini's plan mode.
	policy.Gemini: {"GEMINI_CLI_TRUSTED_FOLDERS_PATH"},
	policy.OpenCode: {"OPENCODE_CONFIG", "OPENCODE_DISABLE_AUTOCOMPACT", "OPENCODE_DISABLE_AUTOUPDATE",
		"OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_EXTERNAL_SKILLS", "OPENCODE_DISABLE_LSP_DOWNLOAD",
		"OPENCODE_DISABLE_PROJECT_CONFIG", "XDG_CONFIG_HOME"},
}

// e2eProbeEnv overrides e2eChildEnv for one invocation kind: OpenCode's
// version probe runs before the banner selects a contract, with private
// configuration discovery and no contract-specific pointer.
var e2eProbeEnv = map[policy.Provider]map[string][]string{
	policy.OpenCode: {simlog.KindVersion: {"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_PROJECT_CONFIG", "XDG_CONFIG_HOME"}},
}

// TestRunnerBillingEnvApproved plants the same environment and runs every
// provider under --api-spend approved: each child (preflight probes and
// the workload) sees its own routes only, never another provider's, never
// the unrelated secrets, and none of the host markers; and no value shows
// up in any output.
func TestRunnerBillingEnvApproved(t *testing.T) {
	t.Parallel()
	// The base allowlist, and the proxy and certificate variables every
	// child keeps so the CLIs work behind a corporate proxy.
	base := []string{"HOME", "HTTPS_PROXY", "LANG", "LC_ALL", "NODE_EXTRA_CA_CERTS", "NO_PROXY", "PATH", "TERM", "TMPDIR", "USER",
		// The sandbox's egress proxy and private temporary directory
		// (activities/sandbox): the proxy values replace the planted ones.
		"ALL_PROXY", "HTTP_PROXY", "TEMP", "TMP", "all_proxy", "http_proxy", "https_proxy", "no_proxy"}
	for _, p := range e2eProviders {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			l := newE2ELane(t, p, "success", "approved", plantedEnv(tmp))
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 0, r.code, "stderr %s", r.stderr)

			raw, err := os.ReadFile(l.path("receipt.json"))
			require.NoError(t, err)
			out, err := os.ReadFile(l.path("out.md"))
			require.NoError(t, err)
			prog, err := os.ReadFile(l.path("progress.json"))
			require.NoError(t, err)
			logged, err := os.ReadFile(simenv.LogPath(l.bin))
			require.NoError(t, err)
			for what, b := range map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr),
				"receipt": raw, "output": out, "progress": prog, "invocation log": logged} {
				assertNoPlantedValue(t, what, b)
			}
			rc, err := policy.DecodeReceipt(raw)
			require.NoError(t, err)
			require.Equal(t, policy.StatusComplete, rc.Status)

			wantFor := func(kind string) []string {
				own := e2eChildEnv[p]
				if k, ok := e2eProbeEnv[p][kind]; ok {
					own = k
				}
				want := append(append(append([]string{}, base...), ownRoutes[p]...), own...)
				sort.Strings(want)
				return want
			}
			invs := simenv.Invocations(t, l.bin)
			require.NotEmpty(t, simlog.Filter(invs, string(p), simlog.KindWorkload))
			for _, inv := range invs {
				require.Equal(t, string(p), inv.Provider, "only the lane's provider ran")
				for _, n := range inv.Env {
					_, marker := plantedMarkers[n]
					require.False(t, marker && !contains(e2eChildEnv[p], n), "marker %s reached the %s child", n, inv.Kind)
					require.False(t, n == "AWS_SECRET_ACCESS_KEY" || n == "GITHUB_TOKEN", "unrelated secret %s reached the child", n)
					if isPlantedRoute(n) {
						require.Contains(t, ownRoutes[p], n, "another provider's route %s reached the %s child", n, p)
					}
				}
				// And nothing else: the exact set of names the child saw.
				require.Equal(t, wantFor(inv.Kind), inv.Env, "%s %s child environment names", p, inv.Kind)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func isPlantedRoute(n string) bool {
	return contains(plantedSecrets, n) || contains(plantedSwitches, n)
}

// TestOwnRoutesMatchSpecs ties ownRoutes to the specs: each provider's own
// routes among the planted variables are exactly what its OwnEnv admits.
func TestOwnRoutesMatchSpecs(t *testing.T) {
	t.Parallel()
	planted := append(append([]string{}, plantedSecrets...), plantedSwitches...)
	for _, p := range e2eProviders {
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		var got []string
		for _, n := range planted {
			for _, pat := range spec.OwnEnv {
				if pre, ok := strings.CutSuffix(pat, "*"); (ok && strings.HasPrefix(n, pre)) || pat == n {
					got = append(got, n)
					break
				}
			}
		}
		sort.Strings(got)
		want := append([]string{}, ownRoutes[p]...)
		sort.Strings(want)
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, got, "%s: planted names its spec's OwnEnv admits", p)
	}
}
