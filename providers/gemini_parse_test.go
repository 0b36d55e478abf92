package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseGemini(t *testing.T) {
	t.Parallel()
	report := policy.EvidenceProviderReport
	rows := []parseCase{
		{name: "stream-success", status: policy.StatusComplete, success: true, final: "Hello, the parser is fine.", session: "gem-s1",
			reported: "gemini-2.5-pro", verified: true, evidence: report,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(1100), *p.Usage.InputTokens)
				require.Equal(t, int64(800), *p.Usage.CachedInputTokens)
				require.Equal(t, int64(1234), *p.Usage.TotalTokens)
			}},
		{name: "json-success", status: policy.StatusComplete, success: true, final: "4", session: "gem-j1",
			reported: "gemini-2.5-pro", verified: true, evidence: report,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(7173), *p.Usage.InputTokens)
				require.Equal(t, int64(17), *p.Usage.ReasoningTokens)
			}},
		{name: "stream-no-models", status: policy.StatusMalformedOutput, success: true, final: "Hello", session: "gem-s1"},
		{name: "stream-other-model", status: policy.StatusMalformedOutput, success: true, final: "Hello", session: "gem-s1",
			reported: "gemini-2.5-flash"},
		{name: "stream-daily", exit: 1, status: policy.StatusUsageExhausted, quota: "gemini_terminal_quota_exhausted", session: "gem-s1",
			terminal: "TerminalQuotaError: [API Error: You have exhausted your daily"},
		{name: "json-quota", exit: 173, status: policy.StatusUsageExhausted, quota: "gemini_terminal_quota_exhausted", terminal: "current quota"},
		{name: "stream-capacity", exit: 1, status: policy.StatusChildFailed, session: "gem-s1", terminal: "capacity"},
		{name: "stream-retryable", exit: 1, status: policy.StatusChildFailed, session: "gem-s1", terminal: "RetryableQuotaError"},
		{name: "stream-turn-limit", exit: 53, status: policy.StatusChildFailed, session: "gem-s1", terminal: "FatalTurnLimitedError"},
		{name: "json-invalid-stream", status: policy.StatusChildFailed, session: "gem-j2", terminal: "INVALID_STREAM"},
		{name: "json-auth", exit: 41, status: policy.StatusChildFailed, terminal: "Auth method"},
		{name: "stream-malformed", status: policy.StatusMalformedOutput, success: true, session: "gem-s1", protocol: "not a JSON object (line 2)"},
		{name: "stream-no-text", status: policy.StatusMalformedOutput, success: true, session: "gem-s1", protocol: "no assistant text"},
	}
	runParseCases(t, policy.Gemini, "gemini-2.5-pro", parseGemini, rows)
}

func FuzzParseGemini(f *testing.F) { fuzzParser(f, policy.Gemini, "gemini-2.5-pro", parseGemini) }
