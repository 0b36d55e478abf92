package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestModelsProviderCommaList: models --provider takes a comma list, as
// every other command's --provider does (issue 28, finding 20), and
// refuses a repeated or unknown name in it.
func TestModelsProviderCommaList(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")

	out := modelsJSON(t, s, 0, "--provider", "claude, codex")
	var got []policy.Provider
	for _, p := range out.Providers {
		got = append(got, p.Provider)
	}
	require.Equal(t, []policy.Provider{"claude", "codex"}, got, "exactly the listed providers, in order")

	// Naming a provider that is not installed is exit 69, as for one
	// --provider.
	require.NoError(t, os.Remove(filepath.Join(s.bin, "grok")))
	out = modelsJSON(t, s, exitModelsUnavailable, "--provider", "claude,grok")
	require.Len(t, out.Providers, 2)
	require.Equal(t, discoveryNotInstalled, modelsOf(t, out, "grok").Discovery)

	r := s.run(t, 30*time.Second, "models", "--provider", "claude,nope")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `--provider "nope": unknown provider; known: claude, codex`)
	r = s.run(t, 30*time.Second, "models", "--provider", "codex,codex")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `--provider lists "codex" twice`)
}
