package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestCLIModel pins each spec's runner-side model rule (formerly
// policy.RunnerModel's table).
func TestCLIModel(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want, msg string }{
		{"devin swe-2 high maps to UID", "devin:swe-2@high", "swe-2-high", ""},
		{"devin swe-2 medium", "devin:swe-2@medium", "swe-2-medium", ""},
		{"devin swe-2 max", "devin:swe-2@max", "swe-2-max", ""},
		{"devin swe-2 default passes swe-2", "devin:swe-2@default", "swe-2", ""},
		{"devin swe-2 low invalid", "devin:swe-2@low", "", "SWE-2 supports medium, high and max"},
		{"devin swe-2 xhigh invalid", "devin:swe-2@xhigh", "", "SWE-2 supports medium, high and max"},
		{"devin swe-1.6 default", "devin:swe-1.6@default", "swe-1-6", ""},
		{"devin swe-1.6 high invalid", "devin:swe-1.6@high", "", "no selectable effort"},
		{"devin other UID unchanged", "devin:swe-3-fast@default", "swe-3-fast", ""},
		{"devin other UID with effort invalid", "devin:swe-3@high", "", "effort is part of a Devin model UID"},
		{"cursor default", "cursor:composer-2.5@default", "composer-2.5", ""},
		{"cursor high invalid", "cursor:composer-2.5@high", "", "cursor:composer-2.5@high: cursor selects reasoning by exact model slug; use @default"},
		{"opencode default", "opencode:openai/gpt-6.1-sol@default", "openai/gpt-6.1-sol", ""},
		{"claude versioned pin refused", "claude:claude-opus-4-5@max", "", "Claude model claude-opus-4-5 is a version pin; normalize it to opus before invoking the runner"},
		{"claude default effort refused", "claude:opus@default", "", "claude:opus@default: default effort is only for cursor, antigravity, opencode and Devin UIDs"},
		{"claude alias", "claude:opus@high", "opus", ""},
		{"codex direct", "codex:gpt-5.6-sol@high", "gpt-5.6-sol", ""},
		{"grok default refused", "grok:grok-4.7@default", "", "default effort is only for"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := policy.ParseAttempt(tc.in)
			require.NoError(t, err)
			got, err := mustLookup(t, a.Provider).CLIModel(a.Model, a.Effort)
			if tc.msg != "" {
				require.ErrorContains(t, err, tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := mustLookup(t, policy.Antigravity).CLIModel("gemini-3.1-pro-high", policy.EffortHigh)
	require.ErrorContains(t, err, "antigravity:gemini-3.1-pro-high@high: antigravity selects reasoning by exact model slug; use @default")
	got, err := mustLookup(t, policy.Gemini).CLIModel("gemini-2.5-pro", policy.EffortHigh)
	require.NoError(t, err)
	require.Equal(t, "gemini-2.5-pro", got)
	_, err = mustLookup(t, policy.Gemini).CLIModel("gemini-2.5-pro", policy.EffortDefault)
	require.ErrorContains(t, err, "gemini:gemini-2.5-pro@default: default effort is only for")
}
