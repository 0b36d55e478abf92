package runner

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// TestRunnerDevinUpgradeRequired (issue 26): a simulated Devin that answers
// the swe-2@high attempt with its upgrade-required frame (the transcript
// testdata/transcripts/devin/upgrade-required, modelled on Devin's
// documented Display templates, not captured) ends unavailable-model
// (exit 69), never child-failed, with the CLI's words as evidence and no
// output. The workload started, so normalize reads it as failed: the lane
// stops there and never substitutes another model.
func TestRunnerDevinUpgradeRequired(t *testing.T) {
	t.Parallel()
	cfg := simenv.Config{Providers: map[string]simenv.ProviderConfig{"devin": {Scenario: "upgrade-required"}}}
	res, l, _, _ := simRunBin(t, cfg, policy.Devin, "swe-2", 0)
	rc := res.Receipt
	require.Equal(t, policy.StatusUnavailableModel, rc.Status, "%s", res.Bytes)
	require.Equal(t, 69, res.ExitCode)
	require.True(t, *rc.ProcessStarted)
	require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase)
	require.False(t, *rc.TerminalSuccess)
	require.Contains(t, rc.Error.Evidence, "diagnostic: devin_upgrade_required")
	require.Contains(t, rc.Error.Evidence, "Error: Upgrade required: swe-2-high is not included in your current plan.")
	requireGone(t, l.output)

	b, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	att := policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Devin, Model: "swe-2", Effort: policy.EffortHigh}
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent:      parentFor(policy.Devin),
		Attempt:     policy.AttemptPolicy{Descriptor: att.String(), Attempt: att, ExhaustionGroup: policy.Devin, APISpend: "unset", Route: policy.RouteExternal},
		Mode:        policy.ReadOnly,
		ReceiptPath: l.receipt,
		Receipt:     b,
	})
	require.NoError(t, err, "receipt:\n%s", b)
	require.Equal(t, policy.OutcomeFailed, ev.Status, "a started route failure never advances to another model")
}
