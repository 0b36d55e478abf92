package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// claudeRateLimitEvent is a stream-json rate_limit_event
// (PROVIDER-PROTOCOLS.md §1, claude-agent-sdk-python types.py RateLimitInfo).
func claudeRateLimitEvent(status, kind string) map[string]any {
	return map[string]any{"type": "rate_limit_event", "session_id": "s1", "uuid": "u1",
		"rate_limit_info": map[string]any{"status": status, "resetsAt": 1760000400, "rateLimitType": kind,
			"utilization": 1.0, "isUsingOverage": false}}
}

func claudeMain(text string) map[string]any {
	return map[string]any{"type": "assistant", "parent_tool_use_id": nil, "session_id": "s1",
		"message": map[string]any{"role": "assistant", "model": "claude-opus-5-20260901",
			"content": []any{map[string]any{"type": "text", "text": text}}}}
}

var claudeSuccess = map[string]any{"type": "result", "subtype": "success", "is_error": false,
	"result": "done", "session_id": "s1"}

// The seed's only Claude exhaustion proof is the complete errored
// api_error 429 result whose text begins with a canonical diagnostic. A
// rate_limit_event, whatever its status, is advisory telemetry: it neither
// proves exhaustion alone nor vetoes the terminal envelope, and the legacy
// (<= 1.0.x) "usage limit reached" formats are not canonical diagnostics.
func TestClaudeRateLimitEventAndLegacyLimitFormats(t *testing.T) {
	t.Parallel()
	rows := []quotaCase{
		// rate_limit_event
		{name: "rejected event alone, no result", exit: 1,
			stdout: jsonl(t, claudeRateLimitEvent("rejected", "five_hour"))},
		{name: "rejected event then a bare errored result", exit: 1,
			stdout: jsonl(t, claudeRateLimitEvent("rejected", "seven_day"),
				claudeResultLine("API Error: 429 rate_limit_error", 429, nil))},
		{name: "rejected event then the canonical result", exit: 1, want: claudeQuotaCode,
			stdout: jsonl(t, claudeRateLimitEvent("rejected", "five_hour"),
				claudeResultLine("You've hit your session limit · resets 4pm (America/New_York)", 429, nil))},
		{name: "allowed_warning event then the canonical result", exit: 1, want: claudeQuotaCode,
			stdout: jsonl(t, claudeRateLimitEvent("allowed_warning", "seven_day"),
				claudeResultLine("You've hit your weekly limit", 429, nil))},
		{name: "rejected overage event then success", exit: 0,
			stdout: jsonl(t, claudeRateLimitEvent("rejected", "overage"), claudeMain("done"), claudeSuccess)},
		{name: "rejected event after the canonical result (still the last result envelope)", exit: 1, want: claudeQuotaCode,
			stdout: jsonl(t, claudeResultLine("You've hit your limit", 429, nil), claudeRateLimitEvent("rejected", "five_hour"))},
		{name: "a result typed like an event", exit: 1,
			stdout: jsonl(t, claudeResultLine("You've hit your limit", 429, map[string]any{"type": "rate_limit_event"}))},
		// legacy formats (PROVIDER-PROTOCOLS.md §1, claude-code issues 9046, 6119, 4375)
		{name: "legacy pipe epoch in the result", exit: 1,
			stdout: jsonl(t, claudeResultLine("Claude AI usage limit reached|1760000400", 429, nil))},
		{name: "legacy reset sentence in the result", exit: 1,
			stdout: jsonl(t, claudeResultLine("Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).", 429, nil))},
		{name: "legacy pipe epoch as a plain-text line", exit: 1,
			stdout: "Claude AI usage limit reached|1760000400\n"},
		{name: "legacy sentence on stderr", exit: 1,
			stderr: "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).\n"},
		{name: "legacy text in a synthetic banner only", exit: 1,
			stdout: jsonl(t, map[string]any{"type": "assistant", "parent_tool_use_id": nil, "session_id": "s1",
				"error": "rate_limit", "is_api_error_message": true,
				"message": map[string]any{"model": "<synthetic>", "content": []any{
					map[string]any{"type": "text", "text": "Claude AI usage limit reached|1760000400"}}}})},
		{name: "legacy text followed by the canonical diagnostic", exit: 1,
			stdout: jsonl(t, claudeResultLine("Claude AI usage limit reached|1760000400 You've hit your limit", 429, nil))},
	}
	runQuotaCases(t, policy.Claude, "opus", rows)
}

// The receipt status of each format: exhaustion only for the canonical
// envelope; a completed run stays complete whatever rate_limit_event said;
// everything else is an ordinary failure the policy treats by status.
func TestClaudeLimitFormatsReceiptStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stdout string
		exit   int
		want   policy.ReceiptStatus
	}{
		{"rejected event then success", jsonl(t, claudeRateLimitEvent("rejected", "five_hour"), claudeMain("done"), claudeSuccess), 0, policy.StatusComplete},
		{"warning event then success", jsonl(t, claudeRateLimitEvent("allowed_warning", "seven_day_opus"), claudeMain("done"), claudeSuccess), 0, policy.StatusComplete},
		{"rejected event alone", jsonl(t, claudeRateLimitEvent("rejected", "five_hour")), 1, policy.StatusChildFailed},
		{"canonical envelope", jsonl(t, claudeRateLimitEvent("rejected", "five_hour"), claudeResultLine("You've hit your session limit", 429, nil)), 1, policy.StatusUsageExhausted},
		{"legacy pipe envelope", jsonl(t, claudeResultLine("Claude AI usage limit reached|1760000400", 429, nil)), 1, policy.StatusChildFailed},
		{"legacy plain text", "Claude AI usage limit reached|1760000400\n", 1, policy.StatusChildFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := testRequest(policy.Claude, "opus", policy.ReadOnly)
			code := tc.exit
			c := Capture{Stdout: []byte(tc.stdout), ExitCode: &code}
			got := Classify(&Spec{Provider: policy.Claude}, req, c, parseClaude(req, c))
			require.Equal(t, tc.want, got.Status, "error %+v", got.Error)
		})
	}
}
