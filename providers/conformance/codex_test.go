package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// codexRunBound bounds one codex run: a probe answers in well under a
// second, and an exec run is stopped at its first turn.started.
const codexRunBound = 2 * time.Minute

// TestConformanceCodexKnownVersion: the pinned codex is one of the spec's
// known versions, and the install is the pinned release.
func TestConformanceCodexKnownVersion(t *testing.T) {
	pinned := realcli.Pinned(t, "codex")
	require.Contains(t, specOf(t, policy.Codex).KnownVersions, pinned,
		"codex %s is pinned in testdata/realcli/package.json but is not among the codex spec's KnownVersions: verify it, then add it", pinned)
	if !realcli.Trying(t, "codex") {
		require.Equal(t, pinned, realcli.Installed(t, "codex"), "the installed codex is not the pinned one: run make real-clis")
	}
	// The spec builds no model listing and no resume argv; a listing added
	// later needs its own check against the real CLI here.
	require.Empty(t, providers.ModelsProbeFor(policy.Codex).Argv, "the codex spec gained a models listing: check it against the real CLI")
}

// TestConformanceCodexVersionBanner parses the real `codex --version`
// banner with the package's parser: it names the installed version.
func TestConformanceCodexVersionBanner(t *testing.T) {
	h := newHost(t)
	argv := []string{realcli.Bin(t, "codex"), "--version"}
	r := h.runUntil(t, h.Repo, nil, codexRunBound, nil, argv...)
	require.Equal(t, 0, r.Exit, "%s: %q: %s", cli(t, "codex"), argv, r.Stderr)
	v, err := providers.ParseCodexBanner(r.Stdout)
	require.NoError(t, err, "%s: %q printed %q", cli(t, "codex"), argv, r.Stdout)
	require.Equal(t, realcli.Installed(t, "codex"), v.String())
}

// TestConformanceCodexLoginStatus runs the preflight the spec builds
// (`codex login status`) in both spending modes and reads it with the
// spec: signed out it is unauthenticated, from the CLI's own "Not logged
// in" on stderr and exit 1. A misspelled subcommand or flag is a clap usage
// error (exit 2), which the exact-output check rejects.
func TestConformanceCodexLoginStatus(t *testing.T) {
	spec := specOf(t, policy.Codex)
	for _, spend := range []policy.APISpend{policy.APISpendDeny, policy.APISpendApproved} {
		t.Run(string(spend), func(t *testing.T) {
			h := newHost(t)
			req := h.specRequest(t, policy.Codex, policy.ReadOnly, spend)
			probes := spec.Preflight(req)
			require.Len(t, probes, 1, "codex has one preflight probe")
			r := h.runUntil(t, h.Repo, nil, codexRunBound, nil, probes[0]...)
			who, argv := cli(t, "codex"), argvString(probes[0])
			require.Equal(t, "Not logged in\n", r.Stderr, "%s: %s did not reach its sign-in check (stdout %q)", who, argv, r.Stdout)
			require.Empty(t, r.Stdout, "%s: %s", who, argv)
			require.Equal(t, 1, r.Exit, "%s: %s", who, argv)
			v := spec.ReadPreflight(req, 0, r.capture())
			require.Equal(t, policy.StatusUnauthenticated, v.Status, "%s: %s judged %q", who, argv, v.Evidence)
		})
	}
}

// codexRefusals are what codex 0.171.0 prints when it does not take an
// argument: clap usage errors, an unknown --disable feature, a --config
// value of the wrong type, and (as a JSON item) a --config key it ignores.
var codexRefusals = []string{
	"error: unexpected argument", "error: invalid value", "Usage: codex",
	"Unknown feature flag", "Error loading config", "unrecognized configuration setting",
}

// TestConformanceCodexExecArgvAccepted runs every exec argv the codex spec
// builds (read-only and isolated-write), signed out and offline, with the
// prompt on stdin. codex has no sign-in check before its model call (a
// signed-out request is refused by the server, which the closed network
// never reaches), so accepted means: no usage, feature or configuration
// error, and a thread started a turn (`thread.started` then
// `turn.started` on stdout), the point where every argument was parsed
// and the configuration loaded; the run is stopped there. A misspelled
// flag (exit 2), an unknown --disable name or an ignored --config key
// fails this check.
func TestConformanceCodexExecArgvAccepted(t *testing.T) {
	spec := specOf(t, policy.Codex)
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHost(t)
			req := h.specRequest(t, policy.Codex, mode, policy.APISpendDeny)
			cmd, err := spec.Invocation(req)
			require.NoError(t, err)
			require.Equal(t, providers.StdinPrompt, cmd.Stdin, "codex reads its prompt on stdin (-)")
			r := h.runUntil(t, cmd.Dir, req.Prompt, codexRunBound, func(line string) bool {
				return strings.Contains(line, `"type":"turn.started"`)
			}, cmd.Argv...)
			who, argv := cli(t, "codex"), argvString(cmd.Argv)
			for _, refusal := range codexRefusals {
				require.NotContains(t, r.Stdout+r.Stderr, refusal, "%s did not take the argv: %s\nstdout:\n%s\nstderr:\n%s", who, argv, r.Stdout, r.Stderr)
			}
			require.True(t, r.Stopped, "%s exited %d before starting a turn: %s\nstdout:\n%s\nstderr:\n%s", who, r.Exit, argv, r.Stdout, r.Stderr)
			evs := jsonEvents(t, who+": "+argv, r.Stdout)
			require.NotNil(t, firstEvent(evs, "thread.started", ""), "%s: no thread.started: %s", who, argv)
			require.NotNil(t, firstEvent(evs, "turn.started", ""), "%s: no turn.started: %s", who, argv)
		})
	}
}

// TestConformanceCodexSignedOutAttempt runs an attempt through the
// runner's typed core: the login preflight ends it unauthenticated (exit
// 77) before the workload starts.
func TestConformanceCodexSignedOutAttempt(t *testing.T) {
	h := newHost(t)
	res := h.attempt(t, runner.Options{Provider: policy.Codex, Model: "gpt-5.5", Effort: policy.EffortHigh,
		Mode: policy.ReadOnly, APISpend: policy.APISpendDeny})
	rc := res.Receipt
	who := cli(t, "codex")
	require.Equal(t, policy.StatusUnauthenticated, rc.Status, "%s: preflight %s: %s", who, argvString(rc.Preflight.Argv), res.Line)
	require.Equal(t, 77, res.ExitCode, "%s: %s", who, argvString(rc.Preflight.Argv))
	require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
	require.Empty(t, rc.Argv, "%s: the workload must not start", who)
	require.NotNil(t, rc.ProcessStarted)
	require.False(t, *rc.ProcessStarted)
	require.NotNil(t, rc.Error)
	require.Contains(t, rc.Error.Evidence, `"Not logged in"`, "%s: the evidence carries the CLI's own words", who)
}

// TestConformanceCodexQuotaSignedOut: the quota acquirer speaks to the
// real `codex app-server` and reads its signed-out answers (account null,
// rate limits refused) as not_signed_in.
func TestConformanceCodexQuotaSignedOut(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report := quota.Acquire(ctx, policy.Codex, quota.Config{Binary: realcli.Bin(t, "codex"), Env: h.environ(), Timeout: 45 * time.Second})
	raw, _ := json.Marshal(report)
	require.Equal(t, policy.CapacityUnknown, report.Snapshot.State, "%s app-server: %s", cli(t, "codex"), raw)
	require.Equal(t, policy.CapacityReasonNotSignedIn, report.Snapshot.Reason, "%s app-server: %s", cli(t, "codex"), raw)
	require.NotNil(t, report.Snapshot.SignedIn, "%s app-server: %s", cli(t, "codex"), raw)
	require.False(t, *report.Snapshot.SignedIn)
}
