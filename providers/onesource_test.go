package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// specCopy is a copy of p's registered spec, for changing one field.
func specCopy(t *testing.T, p policy.Provider) *Spec {
	t.Helper()
	s := *mustLookup(t, p)
	return &s
}

// Classification reads the spec it is given: changing a field changes
// the verdict, whatever the provider is called.
func TestClassifyReadsTheSpec(t *testing.T) {
	t.Parallel()
	code := 1
	c := Capture{Stdout: []byte("anything\n"), ExitCode: &code}
	req := testRequest(policy.Grok, "grok-4.7", policy.ReadOnly)

	spec := specCopy(t, policy.Grok)
	require.Equal(t, policy.StatusChildFailed, Classify(spec, req, c, Parsed{}).Status)

	spec.QuotaAdapter = func(Request, Capture) string { return "spec_quota_code" }
	got := Classify(spec, req, c, Parsed{})
	require.Equal(t, policy.StatusUsageExhausted, got.Status)
	require.Equal(t, "spec_quota_code", got.QuotaCode)

	spec = specCopy(t, policy.Grok)
	spec.AuthAdapter = func(Capture) string { return "spec_auth_code" }
	got = Classify(spec, req, c, Parsed{})
	require.Equal(t, policy.StatusUnauthenticated, got.Status)
	require.Contains(t, got.Error.Evidence, "spec_auth_code")

	spec = specCopy(t, policy.Grok)
	spec.StopAdapter = func(Request, Capture, Parsed) *providerStop {
		return &providerStop{Status: policy.StatusUnsupportedCapability, Code: "spec_stop", Note: "stopped", Words: "the words"}
	}
	got = Classify(spec, req, c, Parsed{})
	require.Equal(t, policy.StatusUnsupportedCapability, got.Status)
	require.Contains(t, got.Error.Evidence, "spec_stop")

	spec = specCopy(t, policy.Grok)
	spec.TerminalFields = func(Capture) []Field { return []Field{{Name: "from", Value: "the spec"}} }
	require.Equal(t, []Field{{Name: "from", Value: "the spec"}}, TerminalFields(spec, req, c))
	require.Contains(t, Classify(spec, req, c, Parsed{}).Error.Evidence, `terminal: {"from":"the spec"}`)
}

// Model proof reads Spec.ModelEvidence, ModelMatch and ModelEcho.
func TestVerifyModelReadsTheSpec(t *testing.T) {
	t.Parallel()
	req := testRequest(policy.Grok, "grok-4.7", policy.ReadOnly)
	spec := specCopy(t, policy.Grok)
	_, _, _, err := VerifyModel(spec, req, Parsed{})
	require.ErrorContains(t, err, "was not reported by grok", "provider-report needs a report")

	spec.ModelEvidence = policy.EvidencePinnedArgv
	reported, verified, evidence, err := VerifyModel(spec, req, Parsed{})
	require.NoError(t, err, "pinned-argv accepts a missing report")
	require.Nil(t, reported)
	require.False(t, verified)
	require.Equal(t, policy.EvidencePinnedArgv, *evidence)

	revision := Parsed{ReportedModel: ptr("grok-4.7-build")}
	_, verified, _, err = VerifyModel(spec, req, revision)
	require.NoError(t, err)
	require.True(t, verified)
	spec.ModelMatch = ModelMatchExact
	_, _, _, err = VerifyModel(spec, req, revision)
	require.ErrorContains(t, err, "does not match")

	spec.ModelEcho = true
	exact := Parsed{ReportedModel: ptr("grok-4.7")}
	_, verified, evidence, err = VerifyModel(spec, req, exact)
	require.NoError(t, err)
	require.False(t, verified, "an echo proves nothing beyond the argv")
	require.Equal(t, policy.EvidencePinnedArgv, *evidence)
	_, _, _, err = VerifyModel(spec, req, Parsed{})
	require.ErrorContains(t, err, "did not echo")

	spec.ModelMatch = "unknown-rule"
	spec.ModelEcho = false
	_, _, _, err = VerifyModel(spec, req, exact)
	require.ErrorContains(t, err, "does not match", "an unknown rule matches nothing")
}

// The pinned-argv providers are exactly the specs whose ModelEvidence says
// so (RUNNER.md "Model proof"), and only Antigravity's report is an echo.
func TestModelEvidenceIsTheSpecs(t *testing.T) {
	t.Parallel()
	var pinned, echo []policy.Provider
	for _, p := range Names() {
		s := mustLookup(t, p)
		require.True(t, s.ModelEvidence.Valid(), p)
		require.Contains(t, []ModelMatch{ModelMatchExact, ModelMatchRevision, ModelMatchClaude}, s.ModelMatch, p)
		if s.ModelEvidence == policy.EvidencePinnedArgv {
			pinned = append(pinned, p)
		}
		if s.ModelEcho {
			echo = append(echo, p)
		}
	}
	require.Equal(t, []policy.Provider{policy.Codex, policy.Devin, policy.Cursor, policy.Antigravity, policy.OpenCode}, pinned)
	require.Equal(t, []policy.Provider{policy.Antigravity}, echo)
}

// Discovery and the sandbox scope come from the spec: every spec names
// its state and hosts, and the listing probe is the spec's.
func TestListingAndScopeAreTheSpecs(t *testing.T) {
	t.Parallel()
	for _, p := range Names() {
		s := mustLookup(t, p)
		require.Equal(t, s.Models.Argv, ModelsProbeFor(p).Argv, p)
		require.NotEmpty(t, s.StateDirs("/h", nil), p)
		require.NotEmpty(t, s.APIHosts, p)
	}
	require.Equal(t, ModelsProbe{}, ModelsProbeFor("kimi"), "an unknown provider has no listing")
	codex := mustLookup(t, policy.Codex)
	require.Equal(t, []string{"/c"}, codex.StateDirs("/h", map[string]string{"CODEX_HOME": "/c"}))
	opencode := mustLookup(t, policy.OpenCode)
	require.Equal(t, []string{"/d/opencode", "/h/.config/opencode", "/h/.local/state/opencode", "/h/.cache/opencode"},
		opencode.StateDirs("/h", map[string]string{"XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "relative"}),
		"a set absolute base wins; a relative one falls back to the default")
}
