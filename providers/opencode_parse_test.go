package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseOpenCode(t *testing.T) {
	t.Parallel()
	const session = "ses_00ffa44f"
	pinned := policy.EvidencePinnedArgv
	rejected := func(name, protocol string) parseCase {
		return parseCase{name: name, status: policy.StatusMalformedOutput, session: session, protocol: protocol}
	}
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: "PONG", session: session, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(121702), *p.Usage.InputTokens)
				require.Equal(t, int64(121705), *p.Usage.TotalTokens)
				require.Equal(t, int64(0), *p.Usage.CachedInputTokens)
				require.InDelta(t, 0.00851956, *p.CostUSD, 1e-12)
			}},
		{name: "duplicates", status: policy.StatusComplete, success: true, final: "PONG", session: session, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(121702), *p.Usage.InputTokens, "a repeated step_finish counts once")
				require.InDelta(t, 0.00851956, *p.CostUSD, 1e-12)
			}},
		{name: "multi-step", status: policy.StatusComplete, success: true, final: "DONE", session: session, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, "DONE", p.FinalText, "only the final step's text")
				require.Equal(t, int64(17), *p.Usage.InputTokens)
				require.Equal(t, int64(2), *p.Usage.CachedInputTokens)
				require.InDelta(t, 0.03, *p.CostUSD, 1e-12)
			}},
		rejected("progress-only", "did not finish"),
		rejected("stop-with-tool", "used tools"),
		rejected("later-work", "did not finish"),
		rejected("later-text", "outside a step"),
		rejected("length", `reason "length"`),
		rejected("mixed-session", "mixes sessions"),
		rejected("wrong-part-session", "another session"),
		rejected("no-start", "outside a step"),
		rejected("empty-text", "no text"),
		rejected("conflicting-part", "different content"),
		rejected("malformed", "not a JSON object (line 4)"),
		{name: "insufficient-balance", exit: 1, status: policy.StatusChildFailed, session: session,
			terminal: "APIError: Insufficient balance"},
		{name: "rate-limit-429", exit: 1, status: policy.StatusChildFailed, session: session,
			terminal: "provider.rate-limit: Error 429"},
		{name: "provider-402", exit: 1, status: policy.StatusChildFailed, terminal: "more credits"},
		{name: "success-then-error", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "quota exhausted",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Empty(t, c.QuotaCode, "opencode never proves exhaustion")
				require.False(t, *c.TerminalSuccess)
			}},
		{name: "error event at a clean exit", fixture: "unknown-error", status: policy.StatusChildFailed, session: session, terminal: "UnknownError"},
	}
	runParseCases(t, policy.OpenCode, "openai/gpt-6.1-sol", parseOpenCode, rows)
}

func FuzzParseOpenCode(f *testing.F) {
	fuzzParser(f, policy.OpenCode, "openai/gpt-6.1-sol", parseOpenCode)
}
