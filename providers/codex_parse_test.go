package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseCodex(t *testing.T) {
	t.Parallel()
	const thread = "0199a213-81c0-7800-8aa1-bbab2a035a53"
	const final = "README.md"
	pinned := policy.EvidencePinnedArgv
	exhausted := func(name string) parseCase {
		return parseCase{name: name, exit: 1, status: policy.StatusUsageExhausted, quota: "codex_usage_limit_exceeded", session: thread,
			protocol: "", terminal: ""}
	}
	failed := func(name, terminal string) parseCase {
		return parseCase{name: name, exit: 1, status: policy.StatusChildFailed, session: thread, terminal: terminal}
	}
	rows := []parseCase{
		{name: "success", status: policy.StatusComplete, success: true, final: final, session: thread, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(24763), *p.Usage.InputTokens)
				require.Equal(t, int64(24448), *p.Usage.CachedInputTokens)
				require.Equal(t, int64(122), *p.Usage.OutputTokens)
				require.Nil(t, p.CostUSD)
			}},
		{name: "reconnect-then-success", status: policy.StatusComplete, success: true, final: final, session: thread, evidence: pinned,
			check: func(t *testing.T, p Parsed, _ Classification) {
				require.Equal(t, int64(4), *p.Usage.ReasoningTokens)
				require.Equal(t, int64(7), *p.Usage.CacheCreationInputTokens)
			}},
		{name: "legacy-item-type", status: policy.StatusComplete, success: true, final: "Legacy final answer.", session: thread, evidence: pinned},
		{name: "limit-then-success", status: policy.StatusComplete, success: true, final: final, session: thread, evidence: pinned},
		{name: "prose-limit-success", status: policy.StatusComplete, success: true, final: "admin notice", session: thread, evidence: pinned},
		withTerminal(exhausted("usage-exhausted"), "hit your usage"),
		withTerminal(exhausted("usage-exhausted-promo"), "free trial"),
		withTerminal(exhausted("usage-exhausted-bare"), "hit your usage"),
		withTerminal(exhausted("api-credit"), "Check your plan"),
		withTerminal(exhausted("workspace-credits"), "workspace"),
		withTerminal(exhausted("spend-cap"), "spend cap"),
		withTerminal(exhausted("retry-wrapped"), "stream disconnected"),
		failed("auth-wrapped", "Authentication required"),
		failed("upgrade-entitlement", "upgrade to Plus"),
		failed("plural-near-miss", "limits"),
		failed("comma-near-miss", "limit,"),
		failed("rate-429", "429"),
		failed("unauthenticated", "401 Unauthorized"),
		failed("bad-model", "404"),
		failed("rollout-budget", "rollout token budget"),
		{name: "usage limit at a clean exit", fixture: "usage-exhausted", status: policy.StatusUsageExhausted, quota: "codex_usage_limit_exceeded",
			session: thread, terminal: "hit your usage",
			check: func(t *testing.T, _ Parsed, c Classification) { require.Equal(t, policy.PhasePostprocess, c.Phase) }},
		{name: "failed turn at a clean exit", fixture: "bad-model", status: policy.StatusChildFailed, session: thread, terminal: "404"},
		{name: "malformed", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "not a JSON object (line 3)"},
		{name: "unfinished", status: policy.StatusMalformedOutput, session: thread, protocol: "final turn did not complete"},
		{name: "interrupted", exit: 1, status: policy.StatusChildFailed, session: thread, protocol: "final turn did not complete"},
		{name: "mixed-framing", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "mixed framed and unframed"},
		{name: "empty-message", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "no agent message"},
		{name: "item-outside-turn", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "outside an open turn"},
		{name: "earlier-text-later-turn", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "did not complete"},
		{name: "conflicting-threads", status: policy.StatusMalformedOutput, success: true, session: thread, protocol: "conflicting thread ids"},
		{name: "success with a failing exit", fixture: "success", exit: 1, status: policy.StatusChildFailed, success: true, final: final, session: thread,
			check: func(t *testing.T, _ Parsed, c Classification) { require.True(t, *c.TerminalSuccess) }},
	}
	runParseCases(t, policy.Codex, "gpt-5.6-sol", parseCodex, rows)
}

func withTerminal(c parseCase, terminal string) parseCase {
	c.terminal = terminal
	return c
}

func FuzzParseCodex(f *testing.F) { fuzzParser(f, policy.Codex, "gpt-5.6-sol", parseCodex) }
