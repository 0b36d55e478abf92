package providers

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestModelListingsAreReadFailClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider policy.Provider
		out      string
		want     []string // nil with bad: the listing is refused
		bad      bool
	}{
		{policy.Devin, `{"families":[{"name":"SWE-2","variants":[{"model_uid":"swe-2-high"},{"model_uid":"swe-2-max"}]},{"variants":[{"model_uid":"swe-1-6"}]}]}`,
			[]string{"swe-2-high", "swe-2-max", "swe-1-6"}, false},
		{policy.Devin, `{"families":[]}`, nil, false},
		{policy.Devin, `{"models":["swe-2"]}`, nil, true},
		{policy.Devin, `{"families":[{"variants":[{"uid":"swe-2"}]}]}`, nil, true},
		{policy.Devin, `{"families":[{"variants":[{"model_uid":"swe 2"}]}]}`, nil, true},
		{policy.Devin, `Logged in. Models: swe-2`, nil, true},
		{policy.Cursor, "auto - Auto\ncomposer-2.5 - Composer 2.5\n\x1b[1mgpt-5.6-sol\x1b[0m - GPT-5.6 Sol\r\n", []string{"composer-2.5", "gpt-5.6-sol"}, false},
		{policy.Cursor, "Available models:\ncomposer-2.5 - Composer 2.5\n", []string{"composer-2.5"}, false},
		{policy.Cursor, "composer-2.5 Composer 2.5\n", nil, true},
		{policy.Cursor, "Error: not logged in - run login\n", nil, true},
		{policy.Antigravity, "gemini-3.1-pro-high   Gemini 3.1 Pro (High)\nauto  Auto\nclaude-sonnet-4-6  Claude Sonnet 4.6\n", []string{"gemini-3.1-pro-high", "claude-sonnet-4-6"}, false},
		{policy.Antigravity, "(no models)\n", nil, true},
		{policy.OpenCode, "openai/gpt-6.1-sol\nopenrouter/qwen/qwen3-coder\n", []string{"openai/gpt-6.1-sol", "openrouter/qwen/qwen3-coder"}, false},
		{policy.OpenCode, "", nil, false},
		{policy.OpenCode, "gpt-6.1-sol\n", nil, true},
		{policy.OpenCode, "openai//x\n", nil, true},
		{policy.OpenCode, "openai/\n", nil, true},
		{policy.Grok, "Logged in as a@b (SuperGrok)\n\nAvailable models:\n  grok-4.7 (default)\n  grok-4.7-build\n", []string{"grok-4.7", "grok-4.7-build"}, false},
		{policy.Grok, "Not logged in.\n", nil, true},
		{policy.Grok, "Available models:\ngrok-4.7\n", nil, true},
		{policy.Grok, "Available models:\n  grok-4.7 (beta) extra\n", nil, true},
	} {
		got, err := ModelsProbeFor(tc.provider).Read([]byte(tc.out))
		if tc.bad {
			require.Error(t, err, "%s %q", tc.provider, tc.out)
			require.True(t, errors.Is(err, errListing))
			require.Nil(t, got)
			continue
		}
		require.NoError(t, err, "%s %q", tc.provider, tc.out)
		require.Equal(t, tc.want, got, "%s %q", tc.provider, tc.out)
	}
	for _, p := range []policy.Provider{policy.Claude, policy.Codex, policy.Gemini} {
		require.Nil(t, ModelsProbeFor(p).Argv, "%s has no listing command", p)
	}
	require.Equal(t, []string{"models", "list", "--format", "json"}, ModelsProbeFor(policy.Devin).Argv)
	require.Equal(t, []string{"models"}, ModelsProbeFor(policy.OpenCode).Argv)
	require.Equal(t, []string{"models"}, ModelsProbeFor(policy.Cursor).Argv)
	require.Equal(t, []string{"models"}, ModelsProbeFor(policy.Antigravity).Argv)
}

func FuzzModelListings(f *testing.F) {
	f.Add("composer-2.5 - Composer\n")
	f.Add(`{"families":[{"variants":[{"model_uid":"x"}]}]}`)
	f.Add("Available models:\n  grok-4.7 (default)\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []policy.Provider{policy.Devin, policy.Cursor, policy.OpenCode, policy.Antigravity, policy.Grok} {
			ids, err := ModelsProbeFor(p).Read([]byte(s))
			if err != nil {
				continue
			}
			for _, id := range ids {
				require.True(t, modelToken.MatchString(id), "%s listed %q", p, id)
			}
		}
	})
}

func TestChoicesMarkTheMatrixAndTheSeedsEfforts(t *testing.T) {
	t.Parallel()
	by := func(cs []ModelChoice) map[string]ModelChoice {
		m := map[string]ModelChoice{}
		for _, c := range cs {
			m[c.Model] = c
		}
		return m
	}
	devin := by(Choices(policy.Devin, []string{"swe-2-medium", "swe-2-high", "swe-2-max", "swe-1-6", "kimi-k3-fast"}))
	require.Equal(t, ModelChoice{Provider: policy.Devin, Model: "swe-2", Efforts: []policy.Effort{"medium", "high", "max"},
		DefaultEffort: "high", Descriptor: "devin:swe-2@high", Family: "swe-2", InMatrix: true, Listed: true, CLIModel: "swe-2-high"}, devin["swe-2"])
	require.True(t, devin["swe-1.6"].Listed, "swe-1.6 is listed under its UID swe-1-6")
	require.Equal(t, "swe-1-6", devin["swe-1.6"].CLIModel)
	require.Equal(t, ModelChoice{Provider: policy.Devin, Model: "kimi-k3-fast", Efforts: []policy.Effort{"default"},
		DefaultEffort: "default", Descriptor: "devin:kimi-k3-fast@default", Listed: true, CLIModel: "kimi-k3-fast"}, devin["kimi-k3-fast"])
	_, dup := devin["swe-2-high"]
	require.False(t, dup, "a legacy UID is shown as its family, not twice")

	codex := Choices(policy.Codex, nil)
	require.Len(t, codex, 4, "sol, astra, luna, terra")
	for _, c := range codex {
		require.True(t, c.InMatrix)
		require.False(t, c.Listed, "codex has no listing")
		require.Equal(t, []policy.Effort{"low", "medium", "high", "xhigh", "max"}, c.Efforts)
	}
	agy := Choices(policy.Antigravity, []string{"gemini-3.1-pro-high"})
	require.Equal(t, []ModelChoice{{Provider: policy.Antigravity, Model: "gemini-3.1-pro-high", Efforts: []policy.Effort{"default"},
		DefaultEffort: "default", Descriptor: "antigravity:gemini-3.1-pro-high@default", Listed: true, CLIModel: "gemini-3.1-pro-high"}}, agy)
	grok := by(Choices(policy.Grok, []string{"grok-4.7", "grok-4.7-build"}))
	require.True(t, grok["grok-4.7"].InMatrix && grok["grok-4.7"].Listed)
	require.Equal(t, policy.EffortXHigh, grok["grok-4.7"].DefaultEffort)
	require.False(t, grok["grok-4.7-build"].InMatrix)
	for _, c := range Choices(policy.Cursor, []string{"composer-2.5"}) {
		require.False(t, strings.Contains(c.Descriptor, "auto"))
	}
}

// TestChoicesForListedModelsFollowTheSpec proves a listed model no matrix
// row knows gets the spec's ListedEfforts (high proposed when several,
// @default when none), and that a listed "auto" is kept only where the
// spec's ListedAuto says so.
func TestChoicesForListedModelsFollowTheSpec(t *testing.T) {
	t.Parallel()
	for _, p := range Names() {
		spec := mustLookup(t, p)
		got := Choices(p, []string{"zz-unlisted-model", "auto"})
		byModel := map[string]ModelChoice{}
		for _, c := range got {
			byModel[c.Model] = c
		}
		c, ok := byModel["zz-unlisted-model"]
		require.True(t, ok, "%s: a listed model is a choice", p)
		require.False(t, c.InMatrix)
		if len(spec.ListedEfforts) > 0 {
			require.Equal(t, spec.ListedEfforts, c.Efforts, "%s", p)
			require.Equal(t, policy.EffortHigh, c.DefaultEffort, "%s", p)
		} else {
			require.Equal(t, []policy.Effort{policy.EffortDefault}, c.Efforts, "%s", p)
		}
		_, auto := byModel["auto"]
		require.Equal(t, spec.ListedAuto, auto, "%s: listed auto kept only by ListedAuto", p)
	}
	require.True(t, mustLookup(t, policy.Devin).ListedAuto, "Devin's auto is a model")
	require.Equal(t, reasoningEfforts, mustLookup(t, policy.Claude).ListedEfforts)
}
