package conformance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// claudeNotLoggedIn is what claude 2.1.332 ends a signed-out -p run with.
const claudeNotLoggedIn = "Not logged in \u00b7 Please run /login"

// claudeRunBound bounds one signed-out claude run: it answers in about a
// second; CI shares two cores.
const claudeRunBound = 2 * time.Minute

// TestConformanceClaudeKnownVersion: the pinned claude is one of the
// spec's known versions, so bumping the pin without re-verifying fails,
// and the install is the pinned release.
func TestConformanceClaudeKnownVersion(t *testing.T) {
	pinned := realcli.Pinned(t, "claude")
	require.Contains(t, specOf(t, policy.Claude).KnownVersions, pinned,
		"claude %s is pinned in testdata/realcli/package.json but is not among the claude spec's KnownVersions: verify it, then add it", pinned)
	if !realcli.Trying(t, "claude") {
		require.Equal(t, pinned, realcli.Installed(t, "claude"), "the installed claude is not the pinned one: run make real-clis")
	}
	// The spec builds no model listing and no resume argv; a listing added
	// later needs its own check against the real CLI here.
	require.Empty(t, providers.ModelsProbeFor(policy.Claude).Argv, "the claude spec gained a models listing: check it against the real CLI")
}

// TestConformanceClaudeVersionBanner runs the writer's version probe, the
// exact argv the spec builds, and reads it with the spec: the banner
// parses, names the installed version and meets the writer floor.
func TestConformanceClaudeVersionBanner(t *testing.T) {
	h := newHost(t)
	spec := specOf(t, policy.Claude)
	req := h.specRequest(t, policy.Claude, policy.IsolatedWrite, policy.APISpendDeny)
	probes := spec.Preflight(req)
	require.Len(t, probes, 1, "the claude writer has one preflight probe")
	r := h.runUntil(t, h.Repo, nil, claudeRunBound, nil, probes[0]...)
	version := realcli.Installed(t, "claude")
	v := spec.ReadPreflight(req, 0, r.capture())
	require.Empty(t, v.Status, "%s: %q was judged %s (%s); stdout %q stderr %q", cli(t, "claude"), probes[0], v.Status, v.Evidence, r.Stdout, r.Stderr)
	require.Contains(t, v.Evidence, "claude "+version+" meets the writer floor", "%s: %q", cli(t, "claude"), probes[0])
	require.Empty(t, spec.Preflight(h.specRequest(t, policy.Claude, policy.ReadOnly, policy.APISpendDeny)),
		"read-only claude has no preflight: authentication is deferred to the task")
}

// claudeArgvCase is one argv the claude spec builds, and what the real
// CLI's init event must show it took.
type claudeArgvCase struct {
	name           string
	mode           policy.Access
	spend          policy.APISpend
	permissionMode string
	tools          []string // sorted, as init lists them
}

var claudeArgvCases = []claudeArgvCase{
	{"read-only deny", policy.ReadOnly, policy.APISpendDeny, "plan", []string{"Bash", "Glob", "Grep", "Read"}},
	{"read-only approved", policy.ReadOnly, policy.APISpendApproved, "plan", []string{"Bash", "Glob", "Grep", "Read"}},
	{"isolated-write deny", policy.IsolatedWrite, policy.APISpendDeny, "acceptEdits", []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write"}},
}

// sandboxReady reports whether the host has what claude's writer sandbox
// needs on Linux (bubblewrap and socat on PATH).
func sandboxReady(h *host) bool {
	for _, bin := range []string{"bwrap", "socat"} {
		found := false
		for _, dir := range filepath.SplitList(h.Env["PATH"]) {
			if st, err := os.Stat(filepath.Join(dir, bin)); err == nil && !st.IsDir() {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestConformanceClaudeArgvAccepted runs every workload argv the claude
// spec builds against the real CLI, signed out, with the prompt on stdin
// as the runner sends it. Accepted means: no usage or unknown-option
// error, a JSON stream on stdout, the init event showing the permission
// mode and tool set the flags asked for, and the stream ending at the
// sign-in check ("Not logged in"), which the classifier reads as
// unauthenticated. A misspelled flag makes claude print "error: unknown
// option" and no stream, so every check here fails on it.
//
// The writer's sandbox (failIfUnavailable) refuses to start before the
// sign-in check on a host without bubblewrap and socat; there the check is
// that claude read the --settings sandbox and refused for exactly that.
func TestConformanceClaudeArgvAccepted(t *testing.T) {
	spec := specOf(t, policy.Claude)
	for _, tc := range claudeArgvCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t)
			req := h.specRequest(t, policy.Claude, tc.mode, tc.spend)
			cmd, err := spec.Invocation(req)
			require.NoError(t, err)
			require.Equal(t, providers.StdinPrompt, cmd.Stdin, "claude reads its prompt on stdin")
			r := h.runUntil(t, cmd.Dir, req.Prompt, claudeRunBound, nil, cmd.Argv...)
			who := cli(t, "claude")
			argv := argvString(cmd.Argv)
			for _, usage := range []string{"error: unknown option", "error: option", "error: too many arguments", "Usage: claude"} {
				require.NotContains(t, r.Stdout+r.Stderr, usage, "%s rejected the argv: %s\nstderr: %s", who, argv, r.Stderr)
			}
			evs := jsonEvents(t, who+": "+argv, r.Stdout)
			require.NotEmpty(t, evs, "%s printed no stream for: %s\nstderr: %s", who, argv, r.Stderr)
			last := evs[len(evs)-1]
			require.Equal(t, "result", last["type"], "%s: the stream does not end with a result: %s", who, argv)
			p := spec.Parse(req, r.capture())
			class := providers.Classify(spec, req, r.capture(), p)

			if tc.mode == policy.IsolatedWrite && !sandboxReady(h) {
				require.Equal(t, "sandbox_required_unavailable", last["startup_failure_reason"],
					"%s: without bubblewrap and socat the writer sandbox must refuse to start: %s\nresult: %v", who, argv, last)
				require.Contains(t, strings.Join(stringList(last["errors"]), " "), "Sandbox required but unavailable", "%s: %s", who, argv)
				require.Equal(t, policy.StatusChildFailed, class.Status, "%s: a sandbox refusal is a plain failure", who)
				t.Logf("%s: the writer sandbox refused to start (no bubblewrap/socat on this host); argv accepted up to the sandbox check", who)
				return
			}
			init := firstEvent(evs, "system", "init")
			require.NotNil(t, init, "%s: no init event for: %s", who, argv)
			assert.Equal(t, realcli.Installed(t, "claude"), init["claude_code_version"], "%s: init version", who)
			assert.Equal(t, tc.permissionMode, init["permissionMode"], "%s: --permission-mode not taken: %s", who, argv)
			tools := stringList(init["tools"])
			slices.Sort(tools)
			assert.Equal(t, tc.tools, tools, "%s: --tools/--disallowed-tools not taken: %s", who, argv)
			assert.Empty(t, stringList(init["mcp_servers"]), "%s: --strict-mcp-config left MCP servers: %s", who, argv)
			assert.Empty(t, stringList(init["slash_commands"]), "%s: --disable-slash-commands left commands: %s", who, argv)
			assert.Equal(t, "none", init["apiKeySource"], "%s: the fresh host has no API key", who)
			if tc.mode == policy.IsolatedWrite {
				assert.Equal(t, true, init["sandbox_enabled"], "%s: the writer's --settings sandbox is off: %s", who, argv)
			}
			require.Equal(t, claudeNotLoggedIn, last["result"], "%s did not reach its sign-in check with: %s", who, argv)
			require.Equal(t, policy.StatusUnauthenticated, class.Status, "%s: the signed-out stream classifies as %s (%v)", who, class.Status, class.Error)
			require.Equal(t, 1, r.Exit, "%s: a signed-out -p run exits 1", who)
		})
	}
}

// TestConformanceClaudeSignedOutAttempt runs a read-only attempt through
// the runner's typed core: signed out, claude ends unauthenticated (exit
// 77) with the CLI's own words as evidence, not child-failed.
func TestConformanceClaudeSignedOutAttempt(t *testing.T) {
	h := newHost(t)
	res := h.attempt(t, runner.Options{Provider: policy.Claude, Model: "sonnet", Effort: policy.EffortHigh,
		Mode: policy.ReadOnly, APISpend: policy.APISpendDeny})
	rc := res.Receipt
	who := cli(t, "claude")
	require.Equal(t, policy.StatusUnauthenticated, rc.Status, "%s: signed-out attempt with %s: %s", who, argvString(rc.Argv), res.Line)
	require.Equal(t, 77, res.ExitCode, "%s: %s", who, argvString(rc.Argv))
	require.NotNil(t, rc.Error)
	require.Contains(t, rc.Error.Message, claudeNotLoggedIn, "%s: the receipt message carries the CLI's words", who)
	require.Contains(t, rc.Error.Evidence, claudeNotLoggedIn, "%s: the receipt evidence carries the CLI's words", who)
	require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
	require.NotNil(t, rc.TerminalSuccess)
	require.False(t, *rc.TerminalSuccess)
	require.Empty(t, rc.Preflight.Argv, "read-only claude runs no preflight")
}

// TestConformanceClaudeSignedOutWriterAttempt runs a writer attempt through
// the runner: the version probe passes the floor, then the workload ends
// unauthenticated (exit 77) where the writer sandbox can start, and
// child-failed with claude's own sandbox refusal where bubblewrap and socat
// are missing (the sandbox check comes before the sign-in check).
func TestConformanceClaudeSignedOutWriterAttempt(t *testing.T) {
	h := newHost(t)
	res := h.attempt(t, runner.Options{Provider: policy.Claude, Model: "sonnet", Effort: policy.EffortHigh,
		Mode: policy.IsolatedWrite, APISpend: policy.APISpendDeny})
	rc := res.Receipt
	who := cli(t, "claude")
	require.Equal(t, policy.PreflightPassed, rc.Preflight.Status, "%s: %s: %s", who, argvString(rc.Preflight.Argv), rc.Preflight.Evidence)
	require.NotNil(t, rc.Error, "%s: %s", who, res.Line)
	if !sandboxReady(h) {
		require.Equal(t, policy.StatusChildFailed, rc.Status, "%s: %s: %s", who, argvString(rc.Argv), res.Line)
		require.Equal(t, 70, res.ExitCode)
		require.Contains(t, rc.Error.Evidence, "Sandbox required but unavailable", "%s: the evidence carries the CLI's refusal", who)
		return
	}
	require.Equal(t, policy.StatusUnauthenticated, rc.Status, "%s: %s: %s", who, argvString(rc.Argv), res.Line)
	require.Equal(t, 77, res.ExitCode)
	require.Contains(t, rc.Error.Evidence, claudeNotLoggedIn)
}

// TestConformanceClaudeQuotaSignedOut: after the real claude ran signed out
// (and wrote its own ~/.claude state), the OAuth usage acquirer finds no
// credentials file and says no_credentials without touching the network.
func TestConformanceClaudeQuotaSignedOut(t *testing.T) {
	h := newHost(t)
	req := h.specRequest(t, policy.Claude, policy.ReadOnly, policy.APISpendDeny)
	cmd, err := specOf(t, policy.Claude).Invocation(req)
	require.NoError(t, err)
	h.runUntil(t, cmd.Dir, req.Prompt, claudeRunBound, nil, cmd.Argv...)
	_, err = os.Stat(filepath.Join(h.Home, ".claude"))
	require.NoError(t, err, "%s wrote no ~/.claude state, so this check proves nothing", cli(t, "claude"))
	_, err = os.Stat(filepath.Join(h.Home, ".claude", ".credentials.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "%s signed out wrote a credentials file", cli(t, "claude"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report := quota.Acquire(ctx, policy.Claude, quota.Config{Env: h.environ(), Timeout: 30 * time.Second})
	require.Equal(t, policy.CapacityUnknown, report.Snapshot.State)
	require.Equal(t, policy.CapacityReasonNoCredentials, report.Snapshot.Reason, "%s signed out", cli(t, "claude"))
}
