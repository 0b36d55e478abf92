package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseGrok(t *testing.T) {
	t.Parallel()
	const session = "019f470d-5c2a-7000-8000-000000000001"
	const final = "accepts both key orders"
	report := policy.EvidenceProviderReport
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "grok-4.7-build", verified: true, evidence: report,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(30), *p.Usage.InputTokens)
				require.Equal(t, int64(6), *p.Usage.CachedInputTokens)
				require.Equal(t, int64(3), *p.Usage.ReasoningTokens)
				require.Equal(t, int64(43), *p.Usage.TotalTokens)
				require.InDelta(t, 0.02, *p.CostUSD, 1e-9)
			}},
		{name: "success-exact-model", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "grok-4.7", verified: true, evidence: report},
		{name: "two-models", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "grok-4.7-build", verified: true, evidence: report},
		{name: "model-on-end", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "grok-4.7-build", verified: true, evidence: report},
		{name: "error-then-success", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "grok-4.7-build", verified: true, evidence: report},
		{name: "two-models-tie", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "no single main model"},
		{name: "no-model", status: policy.StatusMalformedOutput, success: true, final: final, session: session,
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Contains(t, c.Error.Message, `requested model "grok-4.7" was not reported by grok`)
			}},
		{name: "other-model", status: policy.StatusMalformedOutput, success: true, final: final, session: session, reported: "grok-3"},
		{name: "usage-exhausted", exit: 1, status: policy.StatusUsageExhausted, quota: "grok_free_usage_exhausted", session: session, terminal: "SuperGrok"},
		// ASCII "You've": the canonical sentence has U+2019 and matches exactly.
		{name: "usage-exhausted-ascii", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "SuperGrok"},
		{name: "free-usage-prefix-only", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "free Grok Build"},
		{name: "free-usage-wrong-subtype", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "SuperGrok"},
		{name: "team-credits-403", exit: 1, status: policy.StatusChildFailed, terminal: "403 Forbidden"},
		{name: "unauthenticated", exit: 1, status: policy.StatusChildFailed, protocol: "did not emit a terminal result"},
		{name: "max-turns", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "maximum number of turns"},
		{name: "malformed", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "not a JSON object (line 2)"},
		{name: "missing-text", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "no final text"},
		{name: "not-explicit", status: policy.StatusMalformedOutput, session: session, protocol: "explicit success"},
	}
	runParseCases(t, policy.Grok, "grok-4.7", parseGrok, rows)
}

func FuzzParseGrok(f *testing.F) { fuzzParser(f, policy.Grok, "grok-4.7", parseGrok) }
