package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseCursor(t *testing.T) {
	t.Parallel()
	const session = "17e650d2-1c02-439a-bfc7-989b3de62988"
	const final = "the tests pass"
	pinned := policy.EvidencePinnedArgv
	noEnvelope := func(name string) parseCase {
		return parseCase{name: name, exit: 1, status: policy.StatusChildFailed, protocol: "did not emit a result envelope"}
	}
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: final, session: session, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(27341), *p.Usage.InputTokens)
				require.Equal(t, int64(22400), *p.Usage.CachedInputTokens)
				require.Equal(t, int64(0), *p.Usage.CacheCreationInputTokens)
				require.Equal(t, int64(482), *p.Usage.OutputTokens)
				require.Nil(t, p.CostUSD)
			}},
		{name: "success-with-model", status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "composer-2.5", verified: true, evidence: policy.EvidenceProviderReport},
		{name: "wrong-model", status: policy.StatusMalformedOutput, success: true, final: final, session: session, reported: "composer-2"},
		{name: "stream-success", status: policy.StatusComplete, success: true, final: final, session: session, evidence: pinned},
		{name: "usage-exhausted", exit: 1, status: policy.StatusUsageExhausted, quota: "cursor_usage_limit_exceeded", protocol: "did not emit a result envelope"},
		{name: "usage-exhausted-period", exit: 1, status: policy.StatusUsageExhausted, quota: "cursor_usage_limit_exceeded", protocol: "did not emit a result envelope"},
		noEnvelope("forum-form"),
		noEnvelope("two-frames"),
		noEnvelope("rate-limit-class"),
		noEnvelope("plural-near-miss"),
		noEnvelope("bad-model"),
		{name: "retry-no-result", exit: 1, status: policy.StatusChildFailed, protocol: "did not emit a result envelope"},
		{name: "usage frame at a clean exit", fixture: "usage-exhausted", status: policy.StatusMalformedOutput, protocol: "did not emit a result envelope"},
		{name: "usage frame killed by a signal", fixture: "usage-exhausted", exit: signalled, status: policy.StatusChildFailed, protocol: "did not emit a result envelope"},
		{name: "success-veto", exit: 1, status: policy.StatusChildFailed, success: true, final: final, session: session,
			check: func(t *testing.T, _ Parsed, c Classification) { require.True(t, *c.TerminalSuccess) }},
		{name: "malformed", status: policy.StatusMalformedOutput, protocol: "not a JSON object (line 1)"},
		{name: "error-envelope", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "model stream failed"},
		{name: "empty-text", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "no final text"},
	}
	runParseCases(t, policy.Cursor, "composer-2.5", parseCursor, rows)
}

func FuzzParseCursor(f *testing.F) { fuzzParser(f, policy.Cursor, "composer-2.5", parseCursor) }
