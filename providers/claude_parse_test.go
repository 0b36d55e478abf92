package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestParseClaude(t *testing.T) {
	t.Parallel()
	const session = "22795ca6-8222-4620-91dd-3001deaf3378"
	const final = "Done. Added `logRoot`"
	complete := func(name string) parseCase {
		return parseCase{name: name, status: policy.StatusComplete, success: true, final: final, session: session,
			reported: "claude-opus-5", verified: true, evidence: policy.EvidenceProviderReport}
	}
	rows := []parseCase{
		withCheck(complete("success"), func(t *testing.T, p Parsed, _ Classification) {
			require.Equal(t, int64(18), *p.Usage.InputTokens)
			require.Equal(t, int64(169817), *p.Usage.CachedInputTokens)
			require.Equal(t, int64(14760), *p.Usage.CacheCreationInputTokens)
			require.Equal(t, int64(2577), *p.Usage.OutputTokens)
			require.InDelta(t, 0.2416735, *p.CostUSD, 1e-9)
			require.Equal(t, 8, p.Lines)
			require.Equal(t, 8, p.Events)
		}),
		withCheck(complete("key-order"), func(t *testing.T, p Parsed, _ Classification) {
			require.Equal(t, int64(311), *p.Usage.ReasoningTokens)
		}),
		complete("success-array"),
		{name: "error-then-success", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "exactly one result",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Empty(t, c.QuotaCode, "a later success supersedes the earlier limit result")
			}},
		{name: "prose-limit-success", status: policy.StatusComplete, success: true, final: "nothing to do", session: session,
			reported: "claude-opus-5", verified: true, evidence: policy.EvidenceProviderReport},
		{name: "usage-exhausted", exit: 1, status: policy.StatusUsageExhausted, quota: "claude_usage_limit_exceeded",
			session: "a703e098-1", terminal: "session limit"},
		{name: "usage-exhausted at a clean exit is postprocess", fixture: "usage-exhausted", status: policy.StatusUsageExhausted,
			quota: "claude_usage_limit_exceeded", session: "a703e098-1", terminal: "session limit",
			check: func(t *testing.T, _ Parsed, c Classification) { require.Equal(t, policy.PhasePostprocess, c.Phase) }},
		{name: "weekly-limit", exit: 1, status: policy.StatusUsageExhausted, quota: "claude_usage_limit_exceeded", session: "a703e098-1", terminal: "weekly"},
		// The fixture spells "You\u2019re" with the typographic apostrophe;
		// the canonical diagnostic is "You're" (U+0027) and matches exactly.
		{name: "out-of-credits", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "credits"},
		{name: "extra-usage", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "extra usage"},
		{name: "bare-429", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "rate_limit_error"},
		{name: "wrong-separator", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "session limit"},
		{name: "not-api-error", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "session limit"},
		{name: "status-401-limit-text", exit: 1, status: policy.StatusChildFailed, session: "a703e098-1", terminal: "session limit"},
		// Sign-in refusals: claude defers authentication to the workload,
		// so its own typed refusal is unauthenticated (exit 77), matched
		// whole. signed-out-2.1.332 is the real stdout of claude 2.1.332
		// run signed out with a fresh HOME (paths shortened).
		withCheck(unauthenticated("signed-out-2.1.332", "4df54964-3516-48eb-a382-f2307001bee6", "Not logged in \u00b7 Please run /login", "claude_not_logged_in"),
			func(t *testing.T, _ Parsed, c Classification) {
				require.Equal(t, policy.PhaseInvocation, c.Phase)
				require.Contains(t, c.Error.Evidence, "Not logged in \u00b7 Please run /login", "the CLI's own words are the evidence")
				require.Contains(t, c.Error.Evidence, "claude_not_logged_in")
			}),
		unauthenticated("unauthenticated", "eba86727-1", "Not logged in", "claude_not_logged_in"),
		withCheck(unauthenticated("unauthenticated", "eba86727-1", "Not logged in", "claude_not_logged_in"),
			func(t *testing.T, _ Parsed, c Classification) { require.Equal(t, policy.PhasePostprocess, c.Phase) }).at("refusal at a clean exit is postprocess", 0),
		unauthenticated("oauth-expired", "eba86727-1", "OAuth session expired", "claude_oauth_expired"),
		unauthenticated("invalid-key", "eba86727-1", "Invalid API key", "claude_invalid_api_key"),
		// Near misses stay child-failed: the texts and statuses are exact.
		{name: "not-logged-in-status-401", exit: 1, status: policy.StatusChildFailed, session: "eba86727-1", terminal: "Not logged in"},
		{name: "not-logged-in-no-status", exit: 1, status: policy.StatusChildFailed, session: "eba86727-1", terminal: "Not logged in"},
		{name: "not-logged-in-tail", exit: 1, status: policy.StatusChildFailed, session: "eba86727-1", terminal: "Not logged in"},
		{name: "not-logged-in-not-api-error", exit: 1, status: policy.StatusChildFailed, session: "eba86727-1", terminal: "Not logged in"},
		{name: "invalid-key-no-status", exit: 1, status: policy.StatusChildFailed, session: "eba86727-1", terminal: "Invalid API key"},
		{name: "max-turns", exit: 1, status: policy.StatusChildFailed, session: session, terminal: "error_max_turns"},
		{name: "error result at a clean exit", fixture: "max-turns", status: policy.StatusChildFailed, session: session, terminal: "error_max_turns",
			check: func(t *testing.T, _ Parsed, c Classification) { require.Equal(t, policy.PhasePostprocess, c.Phase) }},
		{name: "malformed", status: policy.StatusMalformedOutput, protocol: "not a JSON object (line 3)"},
		{name: "no-result", status: policy.StatusMalformedOutput, protocol: "did not emit a terminal result"},
		{name: "no-result exit 1", fixture: "no-result", exit: 1, status: policy.StatusChildFailed, protocol: "did not emit a terminal result"},
		{name: "killed", fixture: "success", exit: signalled, status: policy.StatusChildFailed, success: true, final: final, session: session,
			reported: "claude-opus-5",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.True(t, *c.TerminalSuccess, "a completed result vetoes replay even when the process died")
				require.Contains(t, c.Error.Message, "signal SIGKILL")
			}},
		{name: "two-results", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "exactly one result"},
		{name: "result-not-last", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "exactly one result"},
		{name: "json-object", status: policy.StatusMalformedOutput, success: true, final: final, session: session,
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Contains(t, c.Error.Message, "was not reported by claude", "modelUsage never proves the model")
			}},
		{name: "helper-only-model", status: policy.StatusMalformedOutput, success: true, final: final, session: session},
		{name: "multiple-primary", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "multiple primary models"},
		{name: "foreign-session", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "another session"},
		{name: "ownerless", status: policy.StatusMalformedOutput, success: true, session: session, protocol: "owner is unknown"},
		{name: "not-explicit-success", status: policy.StatusMalformedOutput, session: session, protocol: "explicit success"},
		{name: "wrong-family", status: policy.StatusMalformedOutput, success: true, final: final, session: session, reported: "claude-sonnet-5"},
		{name: "handoff", status: policy.StatusNeedsParentOperation, success: true, final: "checkpoint needs a commit", session: session,
			reported: "claude-opus-5", verified: true, evidence: policy.EvidenceProviderReport,
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.Equal(t, policy.OpCommitCheckpoint, c.Handoff.Operation)
				require.Equal(t, "cp-1", c.Handoff.Checkpoint)
			}},
		{name: "handoff-malformed", status: policy.StatusMalformedOutput, success: true, final: "done", session: session,
			reported: "claude-opus-5",
			check: func(t *testing.T, _ Parsed, c Classification) {
				require.True(t, c.HandoffMalformed)
				require.True(t, *c.TerminalSuccess)
			}},
		{name: "verbose-required", exit: 1, status: policy.StatusChildFailed, protocol: "did not emit a terminal result"},
	}
	runParseCases(t, policy.Claude, "opus", parseClaude, rows)
}

// unauthenticated is a sign-in refusal row: exit 1, status
// unauthenticated with the refusal's evidence code and the CLI's text.
func unauthenticated(fixture, session, terminal, code string) parseCase {
	return parseCase{name: fixture, exit: 1, status: policy.StatusUnauthenticated, session: session, terminal: terminal,
		check: func(t *testing.T, _ Parsed, c Classification) {
			require.Contains(t, c.Error.Evidence, code)
			require.Contains(t, c.Error.Message, terminal)
			require.Empty(t, c.QuotaCode)
			require.False(t, *c.TerminalSuccess)
		}}
}

// at renames a row and replays its fixture with another exit code.
func (c parseCase) at(name string, exit int) parseCase {
	if c.fixture == "" {
		c.fixture = c.name
	}
	c.name, c.exit = name, exit
	return c
}

// withCheck adds check to the row's checks (run after any it had).
func withCheck(c parseCase, check func(t *testing.T, p Parsed, c Classification)) parseCase {
	if prior := c.check; prior != nil {
		c.check = func(t *testing.T, p Parsed, cl Classification) {
			prior(t, p, cl)
			check(t, p, cl)
		}
		return c
	}
	c.check = check
	return c
}

func FuzzParseClaude(f *testing.F) { fuzzParser(f, policy.Claude, "opus", parseClaude) }
