package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseDevin(t *testing.T) {
	t.Parallel()
	const final = "The parser handles both forms; no changes needed."
	pinned := policy.EvidencePinnedArgv
	notQuota := func(name string) parseCase {
		return parseCase{name: name, exit: 1, status: policy.StatusChildFailed, protocol: "did not write its conversation export"}
	}
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: final, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, final, p.FinalText, "only the trimmed final message")
				require.Nil(t, p.SessionID)
				require.Nil(t, p.Usage)
				require.Nil(t, p.CostUSD)
				require.Equal(t, 1, p.Lines)
			}},
		{name: "final-no-tool-calls-key", status: policy.StatusComplete, success: true, final: "Done.", evidence: pinned},
		{name: "denied-then-delivered", status: policy.StatusComplete, success: true, final: final, evidence: pinned},
		{name: "incomplete", status: policy.StatusMalformedOutput, protocol: "pending tool calls"},
		{name: "wrong-schema", status: policy.StatusMalformedOutput, protocol: "not ATIF-v1.7"},
		{name: "write-denied", status: policy.StatusMalformedOutput, protocol: "pending tool calls", denial: devinWriteDenied,
			check: func(t *testing.T, p Parsed, c Classification) {
				require.True(t, p.ToolDenial.Verified, "the final direct write with its matching denial is verified")
				require.Equal(t, policy.DenialPermission, p.ToolDenial.Cause)
				require.Equal(t, "write", *p.ToolDenial.Tool)
				require.Nil(t, p.ToolDenial.RequestedAction)
				require.Contains(t, c.Error.Evidence, "diagnostic: "+devinWriteDenied)
				require.NotContains(t, c.Error.Evidence, "recovery.txt", "denied arguments are never kept")
			}},
		{name: "write-denied-other-text", status: policy.StatusMalformedOutput, protocol: "pending tool calls"},
		{name: "confirmation-rejected", status: policy.StatusMalformedOutput, protocol: "pending tool calls", denial: devinConfirmationDenied,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.False(t, p.ToolDenial.Verified, "the stderr notice is no verified permission denial")
				require.Equal(t, policy.DenialUnknown, p.ToolDenial.Cause)
				require.Nil(t, p.ToolDenial.Tool)
				require.Nil(t, p.ToolDenial.RequestedAction)
			}},
		{name: "usage-exhausted", exit: 1, status: policy.StatusUsageExhausted, quota: "devin_quota_exhausted", protocol: "did not write"},
		{name: "org-limit", exit: 1, status: policy.StatusUsageExhausted, quota: "devin_quota_exhausted", protocol: "did not write"},
		{name: "bare-sentence", exit: 1, status: policy.StatusUsageExhausted, quota: "devin_quota_exhausted", protocol: "did not write"},
		notQuota("two-frames"),
		notQuota("unproven-detail"),
		notQuota("nested"),
		notQuota("rate-limited"),
		notQuota("unknown-model"),
		{name: "quota frame at a clean exit", fixture: "usage-exhausted", status: policy.StatusMalformedOutput, protocol: "did not write"},
		{name: "delivered-with-quota", exit: 1, status: policy.StatusChildFailed, success: true, final: final,
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.True(t, *c.TerminalSuccess, "the delivered export vetoes the stderr diagnostic")
			}},
		{name: "prose", exit: 1, status: policy.StatusChildFailed, protocol: "did not write"},
		// The upgrade-required answer (wording modelled on Devin's Display
		// templates, not captured) is unavailable-model, never
		// child-failed; anything less than the one exact frame is not.
		{name: "upgrade-required", exit: 1, status: policy.StatusUnavailableModel, protocol: "did not write",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Equal(t, policy.PhaseInvocation, c.Phase)
				require.False(t, *c.TerminalSuccess)
				require.Contains(t, c.Error.Evidence, "diagnostic: "+devinUpgradeCode)
				require.Contains(t, c.Error.Message, "no other model is substituted")
			}},
		{name: "upgrade-required at a clean exit", fixture: "upgrade-required", status: policy.StatusMalformedOutput, protocol: "did not write"},
		notQuota("upgrade-required-no-detail"),
		notQuota("upgrade-required-two-frames"),
	}
	runParseCases(t, policy.Devin, "swe-2", parseDevin, rows)
}

func FuzzParseDevin(f *testing.F) { fuzzParser(f, policy.Devin, "swe-2", parseDevin) }
