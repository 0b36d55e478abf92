package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseAntigravity(t *testing.T) {
	t.Parallel()
	const conversation = "conv-7f3a"
	const model = "gemini-3.1-pro-high"
	pinned := policy.EvidencePinnedArgv
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: "documents the CLI flags", session: conversation,
			reported: model, evidence: pinned,
			check: func(t *testing.T, p Parsed, c Classification) {
				require.False(t, c.ModelVerified, "the init echo never verifies the served model")
				require.Equal(t, int64(40), *p.Usage.ReasoningTokens)
				require.Equal(t, int64(300), *p.Usage.CachedInputTokens)
				require.Equal(t, int64(1320), *p.Usage.TotalTokens)
			}},
		{name: "writer tools are a superset", fixture: "success", mode: policy.IsolatedWrite, status: policy.StatusComplete, success: true,
			final: "documents the CLI flags", session: conversation, reported: model, evidence: pinned},
		{name: "quota-prose-success", status: policy.StatusComplete, success: true, final: "HTTP 429", session: conversation,
			reported: model, evidence: pinned},
		{name: "success with a failing exit", fixture: "success", exit: 1, status: policy.StatusChildFailed, success: true,
			final: "documents the CLI flags", session: conversation, reported: model,
			check: func(t *testing.T, _ Parsed, c Classification) { require.True(t, *c.TerminalSuccess) }},
		{name: "denied", status: policy.StatusChildFailed, session: conversation, reported: model, terminal: "denied actions",
			denial: antigravityDeniedActions,
			check: func(t *testing.T, p Parsed, c Classification) {
				require.Equal(t, policy.DenialUnknown, p.ToolDenial.Cause)
				require.Nil(t, p.ToolDenial.Tool)
				require.NotContains(t, c.Error.Evidence, "git commit", "denied actions are never copied")
			}},
		{name: "denied-malformed", status: policy.StatusChildFailed, session: conversation, reported: model, terminal: "denied actions"},
		{name: "error-429", exit: 1, status: policy.StatusChildFailed, session: conversation, reported: model, terminal: "ERROR",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Empty(t, c.QuotaCode, "antigravity never proves exhaustion")
			}},
		{name: "disallowed-tool", status: policy.StatusMalformedOutput, success: true, session: conversation, reported: model,
			protocol: `tool "run_command" outside the read-only allowlist`},
		{name: "model-mismatch", status: policy.StatusMalformedOutput, success: true, final: "documents", session: conversation,
			reported: "gemini-3.1-pro-low"},
		{name: "wrong-agent", status: policy.StatusMalformedOutput, success: true, session: conversation, reported: model,
			protocol: "this attempt's agent"},
		{name: "no-init", status: policy.StatusMalformedOutput, success: true, protocol: "does not begin with an init"},
		{name: "two-turns", status: policy.StatusMalformedOutput, success: true, session: conversation, reported: model, protocol: "exactly one turn"},
		{name: "conversation-changed", status: policy.StatusMalformedOutput, success: true, session: conversation, reported: model,
			protocol: "conversation id changed"},
		{name: "malformed", status: policy.StatusMalformedOutput, success: true, session: conversation, reported: model,
			protocol: "not a JSON object (line 2)"},
	}
	runParseCases(t, policy.Antigravity, model, parseAntigravity, rows)
}

func FuzzParseAntigravity(f *testing.F) {
	fuzzParser(f, policy.Antigravity, "gemini-3.1-pro-high", parseAntigravity)
}
