package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestVerifyModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		provider  policy.Provider
		requested string
		reported  string // "" is no report
		evidence  policy.ModelEvidence
		verified  bool
		echo      bool   // reportedModel is kept on success
		err       string // substring; "" for success
	}{
		{name: "claude rolling alias with revision", provider: policy.Claude, requested: "opus", reported: "claude-opus-5", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude rolling alias with dotted revision parts", provider: policy.Claude, requested: "fable", reported: "claude-fable-9-9", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude sonnet alias", provider: policy.Claude, requested: "sonnet", reported: "claude-sonnet-5-0-1", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude alias needs a numeric revision", provider: policy.Claude, requested: "opus", reported: "claude-opus-beta", err: "does not match"},
		{name: "claude alias reported bare", provider: policy.Claude, requested: "fable", reported: "fable", err: "does not match"},
		{name: "claude alias other family", provider: policy.Claude, requested: "sonnet", reported: "claude-opus-9", err: "does not match"},
		{name: "claude alias prefix is not enough", provider: policy.Claude, requested: "opus", reported: "opus-preview", err: "does not match"},
		{name: "claude new alias numeric revision", provider: policy.Claude, requested: "haiku", reported: "claude-haiku-4-5", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude new alias exact", provider: policy.Claude, requested: "haiku", reported: "haiku", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude new alias non-numeric", provider: policy.Claude, requested: "haiku", reported: "claude-haiku-beta", err: "does not match"},
		{name: "claude new alias without revision", provider: policy.Claude, requested: "haiku", reported: "claude-haiku", err: "does not match"},
		{name: "claude multi-word alias", provider: policy.Claude, requested: "nova-pro", reported: "claude-nova-pro-2-1", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude exact id", provider: policy.Claude, requested: "claude-haiku-4-5", reported: "claude-haiku-4-5", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude exact id with date suffix", provider: policy.Claude, requested: "claude-haiku-4-5", reported: "claude-haiku-4-5-20251001", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "claude exact id other revision", provider: policy.Claude, requested: "claude-haiku-4-5", reported: "claude-haiku-4-6", err: "does not match"},
		{name: "claude without report", provider: policy.Claude, requested: "opus", err: `requested model "opus" was not reported by claude`},
		{name: "grok revision suffix", provider: policy.Grok, requested: "grok-4.7", reported: "grok-4.7-build", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "grok without report", provider: policy.Grok, requested: "grok-4.7", err: "was not reported by grok"},
		{name: "grok glued suffix", provider: policy.Grok, requested: "grok-4.7", reported: "grok-4.70", err: "does not match"},
		{name: "gemini exact", provider: policy.Gemini, requested: "gemini-2.5-pro", reported: "gemini-2.5-pro", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "gemini without report", provider: policy.Gemini, requested: "gemini-2.5-pro", err: "was not reported by gemini"},
		{name: "codex pinned", provider: policy.Codex, requested: "gpt-5.6-sol", evidence: policy.EvidencePinnedArgv},
		{name: "devin pinned", provider: policy.Devin, requested: "swe-2", evidence: policy.EvidencePinnedArgv},
		{name: "opencode pinned", provider: policy.OpenCode, requested: "openai/gpt-6.1-sol", evidence: policy.EvidencePinnedArgv},
		{name: "cursor pinned", provider: policy.Cursor, requested: "composer-2.5", evidence: policy.EvidencePinnedArgv},
		{name: "cursor exact report", provider: policy.Cursor, requested: "composer-2.5", reported: "composer-2.5", evidence: policy.EvidenceProviderReport, verified: true, echo: true},
		{name: "cursor suffix is not exact", provider: policy.Cursor, requested: "composer-2.5", reported: "composer-2.5-fast", err: "does not match"},
		{name: "antigravity echo", provider: policy.Antigravity, requested: "gemini-3.1-pro-high", reported: "gemini-3.1-pro-high", evidence: policy.EvidencePinnedArgv, echo: true},
		{name: "antigravity other echo", provider: policy.Antigravity, requested: "gemini-3.1-pro-high", reported: "gemini-3.1-pro-high-2", err: "does not match"},
		{name: "antigravity without echo", provider: policy.Antigravity, requested: "gemini-3.1-pro-high", err: "did not echo"},
		{name: "blank report is no report", provider: policy.Codex, requested: "gpt-5.6-sol", reported: "   ", evidence: policy.EvidencePinnedArgv},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := testRequest(tc.provider, tc.requested, policy.ReadOnly)
			var p Parsed
			if tc.reported != "" {
				p.ReportedModel = ptr(tc.reported)
			}
			reported, verified, evidence, err := VerifyModel(&Spec{Provider: tc.provider}, req, p)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.False(t, verified)
				require.Nil(t, evidence)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.verified, verified)
			require.NotNil(t, evidence)
			require.Equal(t, tc.evidence, *evidence)
			if tc.echo {
				require.NotNil(t, reported)
				require.Equal(t, tc.reported, *reported)
			} else {
				require.Nil(t, reported)
			}
		})
	}
}

func TestMainModel(t *testing.T) {
	t.Parallel()
	metric := func(o rawObject) *int64 { return o.count("out") }
	tests := []struct {
		name  string
		usage string
		want  string // "" is nil
		err   string
	}{
		{name: "none", usage: `{}`},
		{name: "one without metric", usage: `{"m1":{}}`, want: "m1"},
		{name: "largest wins", usage: `{"helper":{"out":3},"main":{"out":300}}`, want: "main"},
		{name: "tie is ambiguous", usage: `{"a":{"out":3},"b":{"out":3}}`, err: "no single main model"},
		{name: "missing metric is ambiguous", usage: `{"a":{"out":3},"b":{}}`, err: "no usage to rank"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, ok := decodeObject([]byte(tc.usage))
			require.True(t, ok)
			got, err := mainModel(o, metric)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.want == "" {
				require.Nil(t, got)
			} else {
				require.Equal(t, tc.want, *got)
			}
		})
	}
}
