package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAttempt(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name, in string
		want     Attempt
	}{
		{"inherit-parent alias", "inherit-parent", Attempt{Kind: KindAlias, Alias: AliasInheritParent}},
		{"auto alias", "auto", Attempt{Kind: KindAlias, Alias: AliasAuto}},
		{"grok descriptor", "grok:grok-4.7@xhigh", Attempt{Kind: KindDescriptor, Provider: Grok, Model: "grok-4.7", Effort: EffortXHigh}},
		{"claude versioned pin kept as written", "claude:claude-opus-4-5@max", Attempt{Kind: KindDescriptor, Provider: Claude, Model: "claude-opus-4-5", Effort: EffortMax}},
		{"opencode path at default", "opencode:openai/gpt-6.1-sol@default", Attempt{Kind: KindDescriptor, Provider: OpenCode, Model: "openai/gpt-6.1-sol", Effort: EffortDefault}},
		{"opencode extra segments with colon", "opencode:openrouter/anthropic/claude:beta@default", Attempt{Kind: KindDescriptor, Provider: OpenCode, Model: "openrouter/anthropic/claude:beta", Effort: EffortDefault}},
		{"antigravity slug at default", "antigravity:gemini-3.1-pro-high@default", Attempt{Kind: KindDescriptor, Provider: Antigravity, Model: "gemini-3.1-pro-high", Effort: EffortDefault}},
		{"cursor high accepted by the parser", "cursor:composer-2.5@high", Attempt{Kind: KindDescriptor, Provider: Cursor, Model: "composer-2.5", Effort: EffortHigh}},
		{"devin swe-2 default accepted by the parser", "devin:swe-2@default", Attempt{Kind: KindDescriptor, Provider: Devin, Model: "swe-2", Effort: EffortDefault}},
		{"devin swe-2 low accepted by the parser", "devin:swe-2@low", Attempt{Kind: KindDescriptor, Provider: Devin, Model: "swe-2", Effort: EffortLow}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAttempt(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.in, got.String())
		})
	}
	bad := []struct{ name, in, msg string }{
		{"empty", "", "is not <provider>:<model>@<effort>"},
		{"unknown provider", "gemini:gemini-3@high", `unknown provider "gemini"`},
		{"no effort", "grok:grok-4.7", "has no @<effort>"},
		{"unknown effort", "grok:grok-4.7@turbo", `unknown effort "turbo"`},
		{"uppercase effort", "grok:grok-4.7@HIGH", `unknown effort "HIGH"`},
		{"auto model", "grok:auto@high", "auto is not a model"},
		{"model starts with dot", "codex:.x@high", "model must start with a letter or digit"},
		{"model with slash outside opencode", "codex:a/b@high", "model must start with a letter or digit"},
		{"empty model", "codex:@high", "model must start"},
		{"opencode without path", "opencode:gpt@default", "opencode models are"},
		{"opencode empty segment", "opencode:openai//x@default", "opencode models are"},
		{"opencode auto segment", "opencode:auto@default", "auto is not a model"},
		{"opencode non-default effort", "opencode:openai/gpt@high", "opencode takes @default only"},
		{"antigravity non-default", "antigravity:gemini-3.1-pro@high", "use @default"},
		{"antigravity auto", "antigravity:auto@default", "auto is not a model"},
		// Section 4: no auto model or provider on OpenCode or Antigravity,
		// whatever its letter case.
		{"antigravity Auto", "antigravity:Auto@default", "antigravity has no auto model"},
		{"antigravity AUTO", "antigravity:AUTO@default", "antigravity has no auto model"},
		{"opencode auto provider", "opencode:auto/gpt-5@default", "opencode has no auto provider or model"},
		{"opencode Auto model", "opencode:openai/Auto@default", "opencode has no auto provider or model"},
		{"space inside", "grok: grok@high", "model must start"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAttempt(tc.in)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestVersionedClaudeAlias(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model, alias string
		ok                 bool
	}{
		{"opus two-part revision", "claude-opus-4-5", "opus", true},
		{"fable single revision", "claude-fable-5", "fable", true},
		{"sonnet three-part revision", "claude-sonnet-5-0-1", "sonnet", true},
		{"haiku is not a rolling family", "claude-haiku-4-5", "", false},
		{"non-digit revision", "claude-opus-4-5-preview", "", false},
		{"trailing hyphen", "claude-opus-4-", "", false},
		{"double hyphen", "claude-opus-4--5", "", false},
		{"alias itself", "opus", "", false},
		{"no revision", "claude-opus-", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alias, ok := VersionedClaudeAlias(tc.model)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.alias, alias)
		})
	}
}

func TestNormalizeAttempt(t *testing.T) {
	t.Parallel()
	a, err := ParseAttempt("claude:claude-opus-4-5@max")
	require.NoError(t, err)
	require.Equal(t, "claude:opus@max", NormalizeAttempt(a).String())
	b, err := ParseAttempt("claude:claude-haiku-4-5@high")
	require.NoError(t, err)
	require.Equal(t, b, NormalizeAttempt(b), "exact IDs outside the rolling families pass through")
	c, err := ParseAttempt("codex:claude-opus-4-5@high")
	require.NoError(t, err)
	require.Equal(t, c, NormalizeAttempt(c), "only Claude descriptors normalize")
}

func TestModelMatrix(t *testing.T) {
	t.Parallel()
	var first []string
	for _, f := range FirstRunFamilies() {
		first = append(first, f.Descriptor())
	}
	require.Equal(t, []string{"codex:gpt-5.6-sol@max", "grok:grok-4.7@xhigh", "claude:opus@max"}, first,
		"first run activates sol, grok and opus in matrix order at default effort")
	for _, f := range append(append([]Family{}, ModelMatrix...), OptionalFamilies...) {
		a, err := ParseAttempt(f.Descriptor())
		require.NoError(t, err, f.Name)
		require.Contains(t, f.Efforts, f.DefaultEffort, f.Name)
		if f.Provider == Devin {
			_, err = DevinModelUID(a.Model, a.Effort)
			require.NoError(t, err, f.Name)
		}
	}
	var native []string
	for _, n := range DefaultClaudeNative() {
		native = append(native, n.Model+"@"+string(n.Effort))
	}
	require.Equal(t, []string{"fable@max", "opus@max", "sonnet@high", "fable@max", "opus@xhigh"}, native)
}
