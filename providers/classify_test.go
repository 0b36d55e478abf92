package providers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// parsers maps each provider to its output parser, for tests that run the
// parser and the classifier together without the spec registry.
var parsers = map[policy.Provider]func(Request, Capture) Parsed{
	policy.Claude:      parseClaude,
	policy.Codex:       parseCodex,
	policy.Grok:        parseGrok,
	policy.Devin:       parseDevin,
	policy.Cursor:      parseCursor,
	policy.Antigravity: parseAntigravity,
	policy.OpenCode:    parseOpenCode,
	policy.Gemini:      parseGemini,
}

func TestQuotaAdaptersAreTotal(t *testing.T) {
	t.Parallel()
	for _, p := range append(append([]policy.Provider{}, policy.Providers...), policy.Gemini) {
		require.NotNil(t, mustLookup(t, p).QuotaAdapter, "provider %s has no quota adapter", p)
		require.Contains(t, parsers, p)
	}
}

func TestClassifyUnknownProviderIsALauncherFailure(t *testing.T) {
	t.Parallel()
	code := 1
	c := Capture{Stdout: []byte("You've hit your usage limit\n"), ExitCode: &code}
	got := Classify(&Spec{Provider: "kimi"}, Request{Provider: "kimi"}, c, Parsed{})
	require.Equal(t, policy.StatusChildFailed, got.Status)
	require.Nil(t, got.TerminalSuccess, "no assessment was made, so nothing may authorize recovery")
	require.Empty(t, got.QuotaCode)
	require.Contains(t, got.Error.Message, "no failure classifier")
	require.Contains(t, got.Error.Evidence, "diagnostic: classifier_missing")
}

// jsonl joins JSON values as lines.
func jsonl(t *testing.T, values ...any) string {
	t.Helper()
	var b strings.Builder
	for _, v := range values {
		if s, ok := v.(string); ok {
			b.WriteString(s)
		} else {
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			b.Write(raw)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type quotaCase struct {
	name   string
	stdout string
	stderr string
	export string // Devin ATIF export
	exit   int
	want   string // quota code, "" for not exhausted
}

func runQuotaCases(t *testing.T, provider policy.Provider, model string, cases []quotaCase) {
	t.Helper()
	spec := &Spec{Provider: provider}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := testRequest(provider, model, policy.ReadOnly)
			c := Capture{Stdout: []byte(tc.stdout), Stderr: []byte(tc.stderr), Files: map[string][]byte{}}
			if tc.export != "" {
				c.Files[devinExportPath(req)] = []byte(tc.export)
			}
			if tc.exit == signalled {
				c.Signal = "SIGTERM"
			} else {
				code := tc.exit
				c.ExitCode = &code
			}
			p := parsers[provider](req, c)
			got := Classify(spec, req, c, p)
			requireClassificationShape(t, got)
			require.Equal(t, tc.want, got.QuotaCode, "status %s, error %+v", got.Status, got.Error)
			if tc.want != "" {
				require.Equal(t, policy.StatusUsageExhausted, got.Status)
				require.False(t, *got.TerminalSuccess)
				require.Contains(t, got.Error.Evidence, "diagnostic: "+tc.want)
			} else {
				require.NotEqual(t, policy.StatusUsageExhausted, got.Status)
			}
		})
	}
}

func claudeResultLine(result string, status any, extra map[string]any) map[string]any {
	m := map[string]any{"type": "result", "subtype": "success", "is_error": true, "terminal_reason": "api_error",
		"api_error_status": status, "result": result, "session_id": "s1"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestClaudeQuota(t *testing.T) {
	t.Parallel()
	var rows []quotaCase
	for _, d := range []string{
		"You've hit your session limit", "You've hit your weekly limit", "You've hit your Opus limit",
		"You've hit your Sonnet limit", "You've hit your Fable limit", "You've hit your usage credit limit",
		"You've hit your usage limit", "You've hit your limit", "You've hit your team's shared budget",
		"You've hit your monthly spend limit", "You've hit your org's monthly spend limit",
		"You've hit your org's monthly usage limit", "You're out of usage credits",
	} {
		rows = append(rows,
			quotaCase{name: d + " alone", stdout: jsonl(t, claudeResultLine(d, 429, nil)), exit: 1, want: "claude_usage_limit_exceeded"},
			quotaCase{name: d + " with reset tail", stdout: jsonl(t, claudeResultLine(d+" · resets 4pm (America/New_York)", 429, nil)), exit: 1, want: "claude_usage_limit_exceeded"},
		)
	}
	success := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "ok", "session_id": "s1"}
	rows = append(rows,
		// Exact canonical text only: another apostrophe or case fails closed.
		quotaCase{name: "typographic apostrophe", stdout: jsonl(t, claudeResultLine("You\u2019ve hit your weekly limit · resets Jul 31, 2am (UTC)", 429, nil)), exit: 1},
		quotaCase{name: "lower-cased", stdout: jsonl(t, claudeResultLine("you've hit your weekly limit · resets Jul 31, 2am (UTC)", 429, nil)), exit: 1},
		quotaCase{name: "model name lower-cased", stdout: jsonl(t, claudeResultLine("You've hit your opus limit", 429, nil)), exit: 1},
		quotaCase{name: "array form", stdout: "[" + strings.TrimSpace(jsonl(t, claudeResultLine("You've hit your limit", 429, nil))) + "]", exit: 1, want: "claude_usage_limit_exceeded"},
		quotaCase{name: "behind a malformed line", stdout: jsonl(t, "not json", claudeResultLine("You've hit your limit", 429, nil)), exit: 1, want: "claude_usage_limit_exceeded"},
		quotaCase{name: "bare 429", stdout: jsonl(t, claudeResultLine("API Error: 429 rate_limit_error", 429, nil)), exit: 1},
		quotaCase{name: "429 as a string", stdout: jsonl(t, claudeResultLine("You've hit your limit", "429", nil)), exit: 1},
		quotaCase{name: "other status", stdout: jsonl(t, claudeResultLine("You've hit your limit", 403, nil)), exit: 1},
		quotaCase{name: "null status", stdout: jsonl(t, claudeResultLine("You've hit your limit", nil, nil)), exit: 1},
		quotaCase{name: "not api_error", stdout: jsonl(t, claudeResultLine("You've hit your limit", 429, map[string]any{"terminal_reason": "completed"})), exit: 1},
		quotaCase{name: "not an error", stdout: jsonl(t, claudeResultLine("You've hit your limit", 429, map[string]any{"is_error": false})), exit: 1},
		quotaCase{name: "dash separator", stdout: jsonl(t, claudeResultLine("You've hit your session limit - resets 4pm", 429, nil)), exit: 1},
		quotaCase{name: "colon separator", stdout: jsonl(t, claudeResultLine("You've hit your session limit: resets 4pm", 429, nil)), exit: 1},
		quotaCase{name: "unproven name", stdout: jsonl(t, claudeResultLine("You've hit your Haiku limit", 429, nil)), exit: 1},
		quotaCase{name: "extra usage", stdout: jsonl(t, claudeResultLine("You're out of extra usage · resets 1pm", 429, nil)), exit: 1},
		quotaCase{name: "legacy pipe format", stdout: jsonl(t, claudeResultLine("Claude AI usage limit reached|1760000400", 429, nil)), exit: 1},
		quotaCase{name: "diagnostic not at the start", stdout: jsonl(t, claudeResultLine("Error: You've hit your limit", 429, nil)), exit: 1},
		quotaCase{name: "only in assistant prose", stdout: jsonl(t,
			map[string]any{"type": "assistant", "parent_tool_use_id": nil, "session_id": "s1",
				"message": map[string]any{"model": "claude-opus-5", "content": []any{map[string]any{"type": "text", "text": "You've hit your limit"}}}},
			success), exit: 1},
		quotaCase{name: "later success supersedes", stdout: jsonl(t, claudeResultLine("You've hit your limit", 429, nil), success), exit: 1},
		quotaCase{name: "only on stderr", stderr: "You've hit your session limit · resets 4pm\n", exit: 1},
	)
	runQuotaCases(t, policy.Claude, "opus", rows)
}

func TestCodexQuota(t *testing.T) {
	t.Parallel()
	failed := func(m string) map[string]any {
		return map[string]any{"type": "turn.failed", "error": map[string]any{"message": m}}
	}
	errEvent := func(m string) map[string]any { return map[string]any{"type": "error", "message": m} }
	start := []any{map[string]any{"type": "thread.started", "thread_id": "t"}, map[string]any{"type": "turn.started"}}
	stream := func(events ...any) string { return jsonl(t, append(append([]any{}, start...), events...)...) }
	msg := map[string]any{"type": "item.completed", "item": map[string]any{"type": "agent_message", "text": "You've hit your usage limit."}}
	done := map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 1}}
	rows := []quotaCase{
		{name: "usage limit", stdout: stream(failed("You've hit your usage limit. Try again later.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "usage limit ends the message", stdout: stream(errEvent("You've hit your usage limit")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "usage limit for a named model", stdout: stream(failed("You've hit your usage limit for GPT-5.3-Codex-Spark. Switch to another model now, or try again later.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "workspace credits", stdout: stream(failed("Your workspace is out of credits. Ask your workspace owner to refill in order to continue.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "spend cap", stdout: stream(failed("You hit your spend cap set by the owner of your workspace. Ask an owner to increase your spend cap to continue.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "api quota", stdout: stream(failed("Quota exceeded. Check your plan and billing details.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "retry wrapper", stdout: stream(failed("stream disconnected after retries: You've hit your usage limit. Try again at 3:04 PM.")), exit: 1, want: "codex_usage_limit_exceeded"},
		{name: "at a clean exit", stdout: stream(failed("You've hit your usage limit.")), exit: 0, want: "codex_usage_limit_exceeded"},
		{name: "typographic apostrophe", stdout: stream(failed("You\u2019ve hit your usage limit. Try again later.")), exit: 1},
		{name: "lower-cased", stdout: stream(failed("you've hit your usage limit. Try again later.")), exit: 1},
		{name: "api quota upper-cased", stdout: stream(failed("QUOTA EXCEEDED. CHECK YOUR PLAN AND BILLING DETAILS.")), exit: 1},
		{name: "unproven wrapper", stdout: stream(failed("Authentication required: You've hit your usage limit.")), exit: 1},
		{name: "rate limit wrapper", stdout: stream(failed("rate limit: You've hit your usage limit.")), exit: 1},
		{name: "entitlement", stdout: stream(failed("To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.")), exit: 1},
		{name: "plural", stdout: stream(failed("You've hit your usage limits.")), exit: 1},
		{name: "comma", stdout: stream(failed("You've hit your usage limit, sorry")), exit: 1},
		{name: "bare 429", stdout: stream(failed("unexpected status 429 Too Many Requests")), exit: 1},
		{name: "backend usage_limit_reached", stdout: stream(failed("The usage limit has been reached")), exit: 1},
		{name: "quota in assistant prose", stdout: stream(msg, done), exit: 1},
		{name: "interim limit then completion", stdout: stream(errEvent("You've hit your usage limit."), msg, done), exit: 1},
		{name: "non-fatal error item", stdout: stream(map[string]any{"type": "item.completed", "item": map[string]any{"type": "error", "message": "You've hit your usage limit."}}), exit: 1},
		{name: "stderr only", stderr: "You've hit your usage limit.\n", exit: 1},
	}
	runQuotaCases(t, policy.Codex, "gpt-5.6-sol", rows)
}

func TestGrokQuota(t *testing.T) {
	t.Parallel()
	canonical := "You\u2019ve reached your free Grok Build usage limit for now. Get SuperGrok for much higher limits, or try again later: https://grok.com/supergrok?referrer=grok-build"
	result := func(subtype string, isError bool, errs ...string) map[string]any {
		return map[string]any{"type": "result", "subtype": subtype, "is_error": isError, "errors": errs, "session_id": "g"}
	}
	success := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "ok", "session_id": "g"}
	rows := []quotaCase{
		{name: "canonical", stdout: jsonl(t, result("error_during_execution", true, canonical)), exit: 1, want: "grok_free_usage_exhausted"},
		{name: "among other errors", stdout: jsonl(t, result("error_during_execution", true, "retrying", canonical)), exit: 1, want: "grok_free_usage_exhausted"},
		{name: "at a clean exit", stdout: jsonl(t, result("error_during_execution", true, canonical)), want: "grok_free_usage_exhausted"},
		{name: "truncated sentence", stdout: jsonl(t, result("error_during_execution", true, "You\u2019ve reached your free Grok Build usage limit for now.")), exit: 1},
		{name: "ascii apostrophe", stdout: jsonl(t, result("error_during_execution", true, strings.Replace(canonical, "\u2019", "'", 1))), exit: 1},
		{name: "lower-cased", stdout: jsonl(t, result("error_during_execution", true, strings.ToLower(canonical))), exit: 1},
		{name: "extra text", stdout: jsonl(t, result("error_during_execution", true, canonical+" (429)")), exit: 1},
		{name: "other subtype", stdout: jsonl(t, result("error_max_turns", true, canonical)), exit: 1},
		{name: "not an error", stdout: jsonl(t, result("error_during_execution", false, canonical)), exit: 1},
		{name: "later success supersedes", stdout: jsonl(t, result("error_during_execution", true, canonical), success), exit: 1},
		{name: "credits 403", stdout: jsonl(t, map[string]any{"type": "error", "message": "API error (status 403 Forbidden): used all available credits or reached its monthly spending limit"}), exit: 1},
		{name: "stderr only", stderr: "Error: " + canonical + "\n", exit: 1},
	}
	runQuotaCases(t, policy.Grok, "grok-4.7", rows)
}

func TestDevinQuota(t *testing.T) {
	t.Parallel()
	const monthly = "You've reached your monthly usage limit. Wait for the limit to reset next month."
	const org = "Your organization has reached its monthly usage limit. Ask an account admin to raise it, or wait for the limit to reset next month."
	delivered := `{"schema_version":"ATIF-v1.7","steps":[{"source":"agent","message":"Done.","tool_calls":[]}]}`
	pending := `{"schema_version":"ATIF-v1.7","steps":[{"source":"agent","message":"Working","tool_calls":[{"function_name":"exec"}]}]}`
	rows := []quotaCase{
		{name: "prefixed monthly", stderr: "Error: Quota exhausted: " + monthly + "\n", exit: 1, want: "devin_quota_exhausted"},
		{name: "bare monthly", stderr: "Error: " + monthly + "\n", exit: 1, want: "devin_quota_exhausted"},
		{name: "bare organization", stderr: "Error: " + org + "\n", exit: 1, want: "devin_quota_exhausted"},
		{name: "prefixed exhausted", stderr: "Error: Quota exhausted: usage quota has been exhausted\n", exit: 1, want: "devin_quota_exhausted"},
		{name: "styled CRLF frame among warnings", stderr: "warning: slow network\n\x1b[31mError: " + monthly + "\x1b[0m\r\n", exit: 2, want: "devin_quota_exhausted"},
		{name: "pending export does not veto", stderr: "Error: " + monthly + "\n", export: pending, exit: 1, want: "devin_quota_exhausted"},
		{name: "clean exit", stderr: "Error: " + monthly + "\n"},
		{name: "signal", stderr: "Error: " + monthly + "\n", exit: signalled},
		{name: "two frames", stderr: "Error: " + monthly + "\nError: " + monthly + "\n", exit: 1},
		{name: "unproven detail", stderr: "Error: Quota exhausted: daily seat limit\n", exit: 1},
		{name: "lower-cased prefix", stderr: "Error: quota exhausted: " + monthly + "\n", exit: 1},
		{name: "upper-cased sentence", stderr: "Error: " + strings.ToUpper(org) + "\n", exit: 1},
		{name: "nested in authentication", stderr: "Error: Authentication required: " + monthly + "\n", exit: 1},
		{name: "rate limited", stderr: "Error: Rate limited: usage quota has been exhausted\n", exit: 1},
		{name: "admin paused", stderr: "Error: An admin paused usage on your account\n", exit: 1},
		{name: "sentence with extra text", stderr: "Error: " + monthly + " (429)\n", exit: 1},
		{name: "not a frame", stderr: monthly + "\n", exit: 1},
		{name: "stdout prose", stdout: "Error: " + monthly + "\n", exit: 1},
		{name: "delivered export vetoes", stderr: "Error: " + monthly + "\n", export: delivered, exit: 1},
	}
	runQuotaCases(t, policy.Devin, "swe-2", rows)
}

func TestCursorQuota(t *testing.T) {
	t.Parallel()
	success := `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"c"}` + "\n"
	errored := `{"type":"result","subtype":"error","is_error":true,"result":"You've hit your usage limit","session_id":"c"}` + "\n"
	rows := []quotaCase{
		{name: "frame alone", stderr: "ActionRequiredError: You've hit your usage limit\n", exit: 1, want: "cursor_usage_limit_exceeded"},
		{name: "frame with period", stderr: "ActionRequiredError: You've hit your usage limit. Upgrade to Pro.\n", exit: 1, want: "cursor_usage_limit_exceeded"},
		{name: "frame with details", stderr: "ActionRequiredError: You've hit your usage limit Get Cursor Pro\nspendLimitHit: false\n", exit: 1, want: "cursor_usage_limit_exceeded"},
		{name: "styled CRLF", stderr: "\x1b[1;31mActionRequiredError: You've hit your usage limit\x1b[0m\r\n", exit: 1, want: "cursor_usage_limit_exceeded"},
		{name: "errored envelope is no channel", stdout: errored, stderr: "ActionRequiredError: You've hit your usage limit\n", exit: 1, want: "cursor_usage_limit_exceeded"},
		{name: "plain Error class", stderr: "Error: You've hit your usage limit\n", exit: 1},
		{name: "other class", stderr: "RetriableError: You've hit your usage limit\n", exit: 1},
		{name: "two frames", stderr: "ActionRequiredError: You've hit your usage limit\nConnectError: reset\n", exit: 1},
		{name: "rate limit under the same class", stderr: "ActionRequiredError: You've hit the rate limit\n", exit: 1},
		{name: "login under the same class", stderr: "ActionRequiredError: Please log in\n", exit: 1},
		{name: "plural", stderr: "ActionRequiredError: You've hit your usage limits\n", exit: 1},
		{name: "lower-cased", stderr: "ActionRequiredError: you've hit your usage limit\n", exit: 1},
		{name: "comma", stderr: "ActionRequiredError: You've hit your usage limit, upgrade\n", exit: 1},
		{name: "clean exit", stderr: "ActionRequiredError: You've hit your usage limit\n"},
		{name: "signal", stderr: "ActionRequiredError: You've hit your usage limit\n", exit: signalled},
		{name: "success envelope vetoes", stdout: success, stderr: "ActionRequiredError: You've hit your usage limit\n", exit: 1},
		{name: "bare 429", stderr: "ConnectError: [resource_exhausted] 429 Too Many Requests\n", exit: 1},
	}
	runQuotaCases(t, policy.Cursor, "composer-2.5", rows)
}

func TestGeminiQuota(t *testing.T) {
	t.Parallel()
	init := map[string]any{"type": "init", "session_id": "s", "model": "gemini-2.5-pro"}
	result := func(kind, message string) string {
		return jsonl(t, init, map[string]any{"type": "result", "status": "error", "error": map[string]any{"type": kind, "message": message}})
	}
	stderrObject := func(kind, message string) string {
		raw, err := json.MarshalIndent(map[string]any{"session_id": "s", "error": map[string]any{"type": kind, "message": message, "code": 429}}, "", "  ")
		require.NoError(t, err)
		return string(raw) + "\n"
	}
	rows := []quotaCase{
		{name: "daily quota", stdout: result("TerminalQuotaError", "You have exhausted your daily quota on this model."), exit: 1, want: "gemini_terminal_quota_exhausted"},
		{name: "wrapped daily quota", stdout: result("TerminalQuotaError", "[API Error: You have exhausted your daily quota on this model.]"), exit: 1, want: "gemini_terminal_quota_exhausted"},
		{name: "plan quota on stderr", stderr: stderrObject("TerminalQuotaError", "You exceeded your current quota, please check your plan and billing details. More at https://ai.google.dev."), exit: 173, want: "gemini_terminal_quota_exhausted"},
		{name: "lower-cased", stdout: result("TerminalQuotaError", "you have exhausted your daily quota on this model."), exit: 1},
		{name: "lower-cased wrapper", stdout: result("TerminalQuotaError", "[api error: You have exhausted your daily quota on this model.]"), exit: 1},
		{name: "capacity is not account quota", stdout: result("TerminalQuotaError", "You have exhausted your capacity on this model."), exit: 1},
		{name: "quota metric text", stdout: result("TerminalQuotaError", "Quota exceeded for quota metric 'Generate Content API requests per day'"), exit: 1},
		{name: "retryable class", stdout: result("RetryableQuotaError", "You exceeded your current quota, please check your plan and billing details."), exit: 1},
		{name: "untyped 429", stdout: result("", "[API Error: 429 RESOURCE_EXHAUSTED]"), exit: 1},
		{name: "dialog text", stdout: result("TerminalQuotaError", "Usage limit reached for gemini-2.5-pro."), exit: 1},
		{name: "stderr not a single object", stderr: "warning\n" + stderrObject("TerminalQuotaError", "You have exhausted your daily quota on this model."), exit: 1},
	}
	runQuotaCases(t, policy.Gemini, "gemini-2.5-pro", rows)
}

func TestNoProvenQuota(t *testing.T) {
	t.Parallel()
	agy := jsonl(t, map[string]any{"event": "init", "conversation_id": "c", "init": map[string]any{"model": "m"}},
		map[string]any{"event": "error", "message": "HTTP 429 RESOURCE_EXHAUSTED: You've hit your usage limit, quota exceeded"},
		map[string]any{"event": "result", "conversation_id": "c", "result": map[string]any{"status": "ERROR", "response": ""}})
	runQuotaCases(t, policy.Antigravity, "m", []quotaCase{
		{name: "429 and quota prose", stdout: agy, stderr: "Error: quota exceeded (429)\n", exit: 1},
	})
	oc := jsonl(t, map[string]any{"type": "error", "sessionID": "s", "error": map[string]any{"type": "provider.quota", "message": "You've hit your usage limit", "status": 429}})
	runQuotaCases(t, policy.OpenCode, "p/m", []quotaCase{
		{name: "typed provider quota", stdout: oc, stderr: "quota exhausted\n", exit: 1},
	})
}

// TestClassifySuccessVetoesEveryAdapter runs each provider's proven
// exhaustion capture with a parser verdict of terminal success.
func TestClassifySuccessVetoesEveryAdapter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider policy.Provider
		fixture  string
	}{
		{policy.Claude, "usage-exhausted"}, {policy.Codex, "usage-exhausted"}, {policy.Grok, "usage-exhausted"},
		{policy.Devin, "usage-exhausted"}, {policy.Cursor, "usage-exhausted"}, {policy.Gemini, "stream-daily"},
	} {
		t.Run(string(tc.provider), func(t *testing.T) {
			t.Parallel()
			req := testRequest(tc.provider, "m", policy.ReadOnly)
			c := fixtureCapture(t, tc.provider, req, tc.fixture, 1)
			spec := &Spec{Provider: tc.provider}
			require.NotEmpty(t, Classify(spec, req, c, Parsed{}).QuotaCode, "the fixture proves exhaustion on its own")
			got := Classify(spec, req, c, Parsed{TerminalSuccess: true, FinalText: "done"})
			require.Equal(t, policy.StatusChildFailed, got.Status)
			require.Empty(t, got.QuotaCode)
			require.True(t, *got.TerminalSuccess)
		})
	}
}

func TestClassifyOutcomes(t *testing.T) {
	t.Parallel()
	model := "claude-opus-5"
	zero, one := 0, 1
	long := strings.Repeat("é", 3*FieldCap)
	spec := &Spec{Provider: policy.Claude}
	req := testRequest(policy.Claude, "opus", policy.ReadOnly)
	delivered := Parsed{TerminalSuccess: true, FinalText: "done", ReportedModel: &model}
	tests := []struct {
		name    string
		c       Capture
		p       Parsed
		status  policy.ReceiptStatus
		phase   policy.FailurePhase
		code    string
		message string
	}{
		{name: "complete", c: Capture{ExitCode: &zero}, p: delivered, status: policy.StatusComplete},
		{name: "non-zero exit", c: Capture{ExitCode: &one}, p: Parsed{TerminalError: "boom"}, status: policy.StatusChildFailed,
			phase: policy.PhaseInvocation, code: "child_exit", message: "claude exited with status 1: boom"},
		{name: "signal", c: Capture{Signal: "SIGKILL"}, p: Parsed{}, status: policy.StatusChildFailed,
			phase: policy.PhaseInvocation, code: "child_exit", message: "claude was ended by signal SIGKILL"},
		{name: "no exit status", c: Capture{}, p: Parsed{}, status: policy.StatusChildFailed,
			phase: policy.PhaseInvocation, code: "child_exit", message: "did not exit normally"},
		{name: "typed failure after a clean exit", c: Capture{ExitCode: &zero}, p: Parsed{TerminalError: "boom", ProtocolError: errString("x")},
			status: policy.StatusChildFailed, phase: policy.PhasePostprocess, code: "provider_error_result", message: "claude reported a failed result: boom"},
		{name: "protocol violation", c: Capture{ExitCode: &zero}, p: Parsed{ProtocolError: errString("bad frame")},
			status: policy.StatusMalformedOutput, phase: policy.PhasePostprocess, code: "protocol_violation", message: "bad frame"},
		{name: "no terminal success", c: Capture{ExitCode: &zero}, p: Parsed{FinalText: "x"},
			status: policy.StatusMalformedOutput, phase: policy.PhasePostprocess, code: "no_terminal_success"},
		{name: "empty final response", c: Capture{ExitCode: &zero}, p: Parsed{TerminalSuccess: true, FinalText: " \n", ReportedModel: &model},
			status: policy.StatusMalformedOutput, phase: policy.PhasePostprocess, code: "empty_final_response"},
		{name: "model mismatch", c: Capture{ExitCode: &zero}, p: Parsed{TerminalSuccess: true, FinalText: "x", ReportedModel: ptr("claude-sonnet-5")},
			status: policy.StatusMalformedOutput, phase: policy.PhasePostprocess, code: "model_unverified", message: "model proof failed"},
		{name: "long provider text is capped", c: Capture{ExitCode: &one}, p: Parsed{TerminalError: long},
			status: policy.StatusChildFailed, phase: policy.PhaseInvocation, code: "child_exit"},
		{name: "denial code names the diagnostic", c: Capture{ExitCode: &zero},
			p:      Parsed{ProtocolError: errString("pending"), ToolDenial: &policy.ToolDenial{Verified: true, Evidence: devinWriteDenied}},
			status: policy.StatusMalformedOutput, phase: policy.PhasePostprocess, code: devinWriteDenied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Classify(spec, req, tc.c, tc.p)
			requireClassificationShape(t, got)
			require.Equal(t, tc.status, got.Status)
			require.Equal(t, tc.phase, got.Phase)
			if tc.code != "" {
				require.Contains(t, got.Error.Evidence, "diagnostic: "+tc.code+"\n")
			}
			if tc.message != "" {
				require.Contains(t, got.Error.Message, tc.message)
			}
			if got.Error != nil {
				require.Equal(t, tc.p.TerminalSuccess, *got.TerminalSuccess)
			}
		})
	}
}

// TestClassifyKeepsNoTranscript plants a sentinel in assistant prose and
// stderr and proves no failure receipt field carries it.
func TestClassifyKeepsNoTranscript(t *testing.T) {
	t.Parallel()
	const sentinel = "SECRET_SENTINEL_7731"
	stdout := jsonl(t,
		map[string]any{"type": "assistant", "parent_tool_use_id": nil, "session_id": "s1",
			"message": map[string]any{"model": "claude-opus-5", "content": []any{map[string]any{"type": "text", "text": sentinel}}}},
		map[string]any{"type": "user", "message": map[string]any{"content": []any{map[string]any{"type": "tool_result", "content": sentinel}}}},
		map[string]any{"type": "result", "subtype": "error_max_turns", "is_error": true, "session_id": "s1", "num_turns": 41},
	)
	one := 1
	c := Capture{Stdout: []byte(stdout), Stderr: []byte(sentinel + "\n"), ExitCode: &one}
	req := testRequest(policy.Claude, "opus", policy.ReadOnly)
	spec := &Spec{Provider: policy.Claude}
	got := Classify(spec, req, c, parseClaude(req, c))
	require.Equal(t, policy.StatusChildFailed, got.Status)
	require.NotContains(t, got.Error.Message, sentinel)
	require.NotContains(t, got.Error.Evidence, sentinel)
	require.Contains(t, got.Error.Evidence, `terminal: {"subtype":"error_max_turns","is_error":true}`)
	require.Contains(t, got.Error.Evidence, "stdout: 3 line(s), 3 JSON event(s); stderr: 1 line(s), 0 JSON event(s)")
}

type errString string

func (e errString) Error() string { return string(e) }

func ptr(s string) *string { return &s }
