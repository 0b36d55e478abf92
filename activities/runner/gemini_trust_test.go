package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// geminiOutcome normalizes the lane's receipt as the gemini attempt it ran.
func geminiOutcome(t *testing.T, l *lane) policy.Outcome {
	t.Helper()
	b, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	att := policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Gemini, Model: "gemini-2.5-pro", Effort: policy.EffortHigh}
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent:      parentFor(policy.Gemini),
		Attempt:     policy.AttemptPolicy{Descriptor: att.String(), Attempt: att, ExhaustionGroup: policy.Gemini, APISpend: "unset", Route: policy.RouteExternal},
		Mode:        policy.ReadOnly,
		ReceiptPath: l.receipt,
		Receipt:     b,
	})
	require.NoError(t, err, "receipt:\n%s", b)
	return ev.Status
}

// TestRunnerGeminiModeOverrideFailsClosed: a simulated Gemini that prints
// the captured approval-mode override warning and then a successful
// stream (what a signed-in run in an untrusted folder prints) ends
// unsupported-capability (exit 79) with the CLI's words as evidence and no
// output delivered, and normalizes to failed: the read-only attempt never
// counts, and its recorded success keeps it from being replayed.
func TestRunnerGeminiModeOverrideFailsClosed(t *testing.T) {
	t.Parallel()
	cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"gemini": {Scenario: "untrusted-folder-success"}}}
	res, l, _, _ := simRunBin(t, cfg, policy.Gemini, "gemini-2.5-pro", 0)
	rc := res.Receipt
	require.Equal(t, policy.StatusUnsupportedCapability, rc.Status, "%s", res.Bytes)
	require.Equal(t, 79, res.ExitCode)
	require.True(t, *rc.ProcessStarted)
	require.Equal(t, policy.PhasePostprocess, *rc.FailurePhase)
	require.True(t, *rc.TerminalSuccess)
	require.Contains(t, rc.Error.Evidence, "diagnostic: gemini_approval_mode_overridden")
	require.Contains(t, rc.Error.Evidence, `Approval mode overridden to \"default\" because the current folder is not trusted.`)
	requireGone(t, l.output)
	require.Equal(t, policy.OutcomeFailed, geminiOutcome(t, l))
}

// TestRunnerGeminiSignedOut: the captured signed-out run ends
// unauthenticated (exit 77) with the CLI's sign-in error as evidence; the
// workload read the runner's private trusted-folders file, which trusted
// the lane's checkout and was removed after the attempt.
func TestRunnerGeminiSignedOut(t *testing.T) {
	t.Parallel()
	cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"gemini": {Scenario: "unauthenticated"}}}
	res, l, _, bin := simRunBin(t, cfg, policy.Gemini, "gemini-2.5-pro", 0)
	rc := res.Receipt
	require.Equal(t, policy.StatusUnauthenticated, rc.Status, "%s", res.Bytes)
	require.Equal(t, 77, res.ExitCode)
	require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
	require.False(t, *rc.TerminalSuccess)
	require.Contains(t, rc.Error.Evidence, "diagnostic: gemini_no_auth_method")
	require.Contains(t, rc.Error.Evidence, "Please set an Auth method in your /home/sim/.gemini/settings.json")
	// Started, so normalize cannot read it as route proof: failed, never
	// a fallback to another route.
	require.Equal(t, policy.OutcomeFailed, geminiOutcome(t, l))

	invs := simlog.Filter(simenv.Invocations(t, bin), "gemini", simlog.KindWorkload)
	require.Len(t, invs, 1)
	require.True(t, slices.Contains(invs[0].Env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH"), "env names: %v", invs[0].Env)
	requireGone(t, filepath.Join(l.receipt+".private", "trustedFolders.json"))
}
