package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// scenarioDir writes a one-off scenario for provider (kind → files) and
// returns its absolute path, for simcli.json.
func scenarioDir(t *testing.T, kinds map[string]map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for kind, files := range kinds {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, kind), 0o755))
		for name, content := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, kind, name), []byte(content), 0o644))
		}
	}
	return dir
}

func modelsJSON(t *testing.T, s *engineSandbox, wantCode int, args ...string) modelsOutput {
	t.Helper()
	r := s.run(t, 90*time.Second, append([]string{"models", "--json"}, args...)...)
	require.Equal(t, wantCode, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	var out modelsOutput
	requireJSONDoc(t, "models --json", r.stdout)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	return out
}

func modelsOf(t *testing.T, out modelsOutput, p policy.Provider) modelsProvider {
	t.Helper()
	for _, m := range out.Providers {
		if m.Provider == p {
			return m
		}
	}
	t.Fatalf("no %s in models output", p)
	return modelsProvider{}
}

func descriptors(m modelsProvider) map[string]providers.ModelChoice {
	out := map[string]providers.ModelChoice{}
	for _, c := range m.Models {
		out[c.Descriptor] = c
	}
	return out
}

func TestModelsListsEveryInstalledCLI(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	out := modelsJSON(t, s, 0)
	require.Len(t, out.Providers, len(providers.Names()))

	devin := modelsOf(t, out, policy.Devin)
	require.Equal(t, discoveryListed, devin.Discovery)
	require.Equal(t, []string{"models", "list", "--format", "json"}, devin.Probe)
	require.Equal(t, filepath.Join(s.bin, "devin"), devin.Executable)
	d := descriptors(devin)
	require.True(t, d["devin:swe-2@high"].InMatrix && d["devin:swe-2@high"].Listed)
	require.Equal(t, []policy.Effort{"medium", "high", "max"}, d["devin:swe-2@high"].Efforts)
	require.True(t, d["devin:swe-1.6@default"].Listed)

	cursor := descriptors(modelsOf(t, out, policy.Cursor))
	require.Contains(t, cursor, "cursor:composer-2.5@default")
	require.NotContains(t, cursor, "cursor:auto@default", "auto is never a descriptor")
	require.False(t, cursor["cursor:composer-2.5@default"].InMatrix)

	agy := descriptors(modelsOf(t, out, policy.Antigravity))
	require.Equal(t, []policy.Effort{"default"}, agy["antigravity:gemini-3.1-pro-high@default"].Efforts)

	oc := descriptors(modelsOf(t, out, policy.OpenCode))
	require.Contains(t, oc, "opencode:openrouter/qwen/qwen3-coder@default", "extra path segments are kept")

	grok := descriptors(modelsOf(t, out, policy.Grok))
	require.True(t, grok["grok:grok-4.7@xhigh"].InMatrix && grok["grok:grok-4.7@xhigh"].Listed)

	for _, p := range []policy.Provider{policy.Claude, policy.Codex} {
		m := modelsOf(t, out, p)
		require.Equal(t, discoveryNoListing, m.Discovery)
		require.NotEmpty(t, m.Models)
		for _, c := range m.Models {
			require.True(t, c.InMatrix)
			require.False(t, c.Listed)
		}
	}

	// The probes ran with the constructed environment and stdin closed.
	for _, inv := range simenv.Invocations(t, s.bin) {
		require.Equal(t, "models", inv.Kind, "discovery runs only listing probes, never a workload")
	}

	r := s.run(t, 60*time.Second, "models", "--provider", "antigravity")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "antigravity: listed")
	require.Contains(t, r.stdout, "antigravity:gemini-3.1-pro-high@default")
	require.Contains(t, r.stdout, "not account access")
}

func TestModelsFailsClosed(t *testing.T) {
	t.Parallel()
	weird := scenarioDir(t, map[string]map[string]string{"preflight-models": {"stdout": "Here are your models: composer, sonnet\n"}})
	hang := scenarioDir(t, map[string]map[string]string{"preflight-models": {"stdout": "gemini-3.1-pro-high  Gemini\n", "hang": ""}})
	failing := scenarioDir(t, map[string]map[string]string{"preflight-models": {"stderr": "Error: not authenticated\n", "exit": "1"}})
	s := newEngineSandbox(t, map[string]string{"cursor": weird, "antigravity": hang, "devin": failing}, "")

	cursor := modelsJSON(t, s, exitModelsFailed, "--provider", "cursor")
	require.Equal(t, discoveryUnrecognized, cursor.Providers[0].Discovery)
	require.Empty(t, cursor.Providers[0].Models, "nothing is guessed from an unknown format")
	require.Contains(t, cursor.Providers[0].Detail, "unrecognized model listing")

	start := time.Now()
	agy := modelsJSON(t, s, exitModelsFailed, "--provider", "antigravity", "--timeout", "1s")
	require.Less(t, time.Since(start), 30*time.Second, "the probe is bounded")
	require.Equal(t, discoveryTimedOut, agy.Providers[0].Discovery)
	require.Empty(t, agy.Providers[0].Models, "partial output before the timeout is not a listing")

	devin := modelsJSON(t, s, exitModelsFailed, "--provider", "devin")
	require.Equal(t, discoveryFailed, devin.Providers[0].Discovery)
	require.Contains(t, devin.Providers[0].Detail, "exit 1")
	require.NotContains(t, devin.Providers[0].Detail, "not authenticated", "raw CLI output is never copied")

	require.NoError(t, os.Remove(filepath.Join(s.bin, "grok")))
	grok := modelsJSON(t, s, exitModelsUnavailable, "--provider", "grok")
	require.Equal(t, discoveryNotInstalled, grok.Providers[0].Discovery)
	require.NotEmpty(t, grok.Providers[0].Fix)

	r := s.run(t, 30*time.Second, "models", "--provider", "nope")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `--provider "nope": unknown provider; known: claude, codex`)
	r = s.run(t, 30*time.Second, "models", "--timeout", "0s")
	require.Equal(t, exitUsage, r.code)
}

func setupRun(t *testing.T, s *engineSandbox, args ...string) result {
	t.Helper()
	return s.run(t, 120*time.Second, append([]string{"setup"}, args...)...)
}

func TestSetupProposesWritesOnlyOnConfirmationAndValidates(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	sheet := filepath.Join(s.dir, "models.sheet")

	// No terminal and no --yes: nothing is written, and setup says how.
	r := setupRun(t, s, "--sheet", sheet)
	require.Equal(t, exitSetupNotWritten, r.code, r.stderr)
	require.Contains(t, r.stdout, "proposed change:")
	require.Contains(t, r.stdout, `+ # access: {"provider":"codex","funding":"included","capacity":"unknown","apiSpend":"deny","provenance":"user"`)
	require.Contains(t, r.stdout, "+ feature, refactoring: codex:gpt-5.6-sol@max -> claude:opus@max")
	require.Contains(t, r.stdout, "grok is left out: under apiSpend deny every grok attempt is blocked")
	require.Contains(t, r.stdout, "antigravity is installed; add one of its descriptors to a row by hand")
	require.Contains(t, r.stderr, "not written: stdin is not a terminal")
	require.Contains(t, r.stderr, "--yes")
	_, err := os.Stat(sheet)
	require.ErrorIs(t, err, os.ErrNotExist)

	r = setupRun(t, s, "--sheet", sheet, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "wrote "+sheet)
	v := s.run(t, 30*time.Second, "policy", "validate", "--sheet", sheet, "--parent", "claude")
	require.Equal(t, 0, v.code, "the written sheet passes policy validate:\n%s\n%s", v.stdout, v.stderr)
	written, err := os.ReadFile(sheet)
	require.NoError(t, err)
	for _, p := range []string{"claude", "codex", "devin", "cursor", "antigravity", "opencode"} {
		require.Contains(t, string(written), `# access: {"provider":"`+p+`"`, "an access fact for every provider found")
	}
	require.NotContains(t, string(written), `"provider":"gemini"`)
	require.NotContains(t, string(written), "grok", "grok is blocked under deny, so it is not proposed")
	require.Contains(t, string(written), "why investigators, synthesizer: inherit-parent")

	// A second run has nothing to add.
	r = setupRun(t, s, "--sheet", sheet)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing to write")
	again, err := os.ReadFile(sheet)
	require.NoError(t, err)
	require.Equal(t, string(written), string(again))
}

// twoProviderSheet is a policy-enabled sheet the user built from claude and
// codex only, with most role rows still missing.
const twoProviderSheet = `# My sheet: claude and codex only.
# access: {"provider":"claude","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}

feature, refactoring: claude:opus@max -> codex:gpt-5.6-sol@high
bug-fix: codex:gpt-5.6-sol@high -> claude:opus@max
why investigators, synthesizer: inherit-parent
`

// TestSetupCompletesAnExistingSheetWithoutTouchingIt (issue 26): setup on
// an existing sheet that uses two providers, on a machine where every
// provider CLI is installed (the simulators), keeps every line and
// completes the missing role rows and access facts from the families the
// sheet already uses: no row and no access fact names a provider the
// user did not choose; the other installed CLIs are named in the notes
// only.
func TestSetupCompletesAnExistingSheetWithoutTouchingIt(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	sheet := filepath.Join(s.dir, "models.sheet")
	original := []byte(twoProviderSheet)
	require.NoError(t, os.WriteFile(sheet, original, 0o640))

	r := setupRun(t, s, "--sheet", sheet, "--json", "--api-spend", "approved")
	require.Equal(t, exitSetupNotWritten, r.code, r.stderr)
	requireJSONDoc(t, "setup --json", r.stdout)
	var out setupOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.True(t, out.Exists && out.Changed)
	require.False(t, out.Written, "--json never asks, so it writes only with --yes")
	require.True(t, strings.HasPrefix(out.Candidate, string(original)), "every existing line is kept as it is")
	installed := 0
	for _, p := range out.Providers {
		if p.Discovery == discoveryListed || p.Discovery == discoveryNoListing {
			installed++
		}
	}
	require.Greater(t, installed, 2, "more CLIs are installed than the sheet uses: %+v", out.Providers)
	added := 0
	for _, line := range strings.Split(strings.TrimSpace(out.Diff), "\n") {
		require.False(t, strings.HasPrefix(line, "- "), "nothing is removed: %s", line)
		if !strings.HasPrefix(line, "+ ") {
			continue
		}
		added++
		for _, p := range []string{"grok", "devin", "cursor", "antigravity", "opencode", "gemini"} {
			require.NotContains(t, line, p, "setup adds no provider the sheet does not use: %s", line)
		}
	}
	require.Contains(t, out.Diff, "+ perf-issue: ", "missing rows are added")
	require.Contains(t, out.Diff, "+ arena runners: claude:opus@max, codex:gpt-5.6-sol@high", "from the sheet's own families")
	require.NotContains(t, out.Diff, "+ # access:", "both used providers already have access facts")
	require.Contains(t, strings.Join(out.Notes, "\n"), "the sheet exists: missing rows and access facts come only from the providers it already uses (claude:opus@max, codex:gpt-5.6-sol@high)")
	require.Contains(t, strings.Join(out.Notes, "\n"), "antigravity is installed; add one of its descriptors to a row by hand")
	unchanged, err := os.ReadFile(sheet)
	require.NoError(t, err)
	require.Equal(t, original, unchanged)

	r = setupRun(t, s, "--sheet", sheet, "--yes", "--api-spend", "approved")
	require.Equal(t, 0, r.code, r.stderr)
	fi, err := os.Stat(sheet)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the sheet keeps its mode")
	v := s.run(t, 30*time.Second, "policy", "validate", "--sheet", sheet, "--parent", "claude")
	require.Equal(t, 0, v.code, "%s\n%s", v.stdout, v.stderr)
	done, err := os.ReadFile(sheet)
	require.NoError(t, err)
	require.Equal(t, out.Candidate, string(done))
	require.Equal(t, 2, strings.Count(string(done), "# access:"), "no access fact for a provider the user did not choose")
}

func TestSetupEffortCeilingAndRefusals(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	sheet := filepath.Join(s.dir, "models.sheet")
	r := setupRun(t, s, "--sheet", sheet, "--max-effort", "high", "--parent", "codex", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "effort lowered for the --max-effort ceiling: codex:gpt-5.6-sol@max -> codex:gpt-5.6-sol@high")
	written, err := os.ReadFile(sheet)
	require.NoError(t, err)
	require.NotContains(t, string(written), "@max")
	require.NotContains(t, string(written), "@xhigh")
	v := s.run(t, 30*time.Second, "policy", "validate", "--sheet", sheet, "--parent", "codex")
	require.Equal(t, 0, v.code, "%s\n%s", v.stdout, v.stderr)

	bad := filepath.Join(s.dir, "bad.sheet")
	require.NoError(t, os.WriteFile(bad, []byte("feature, refactoring: nope\n"), 0o644))
	r = setupRun(t, s, "--sheet", bad, "--yes")
	require.Equal(t, exitGeneric, r.code)
	require.Contains(t, r.stderr, "the existing sheet is invalid, so setup will not edit it")
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	require.Equal(t, "feature, refactoring: nope\n", string(b))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--sheet is required"},
		{[]string{"--sheet", sheet, "--funding", "metered"}, "--funding metered needs --api-spend approved"},
		{[]string{"--sheet", sheet, "--funding", "unknown"}, "unknown funding never authorizes a route"},
		{[]string{"--sheet", sheet, "--max-effort", "ultra"}, "--max-effort \"ultra\""},
		{[]string{"--sheet", sheet, "--parent", "grok"}, "--parent \"grok\""},
		{[]string{"--sheet", sheet, "--provider", "nope"}, "unknown provider"},
	} {
		r := setupRun(t, s, tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want)
	}
	h := s.run(t, 30*time.Second, "setup", "--help")
	require.Equal(t, 0, h.code)
	require.Contains(t, h.stdout, "Examples:")
}
