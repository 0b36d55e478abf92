package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMakeDemoSaysWhatItBuilds: a cold `make demo` spends minutes
// compiling; every build step of its recipe is announced by an echo line
// first, and the target's help promises no duration a cold build breaks.
func TestMakeDemoSaysWhatItBuilds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	var recipe []string
	var help string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "demo:"):
			in, help = true, line
		case in && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, strings.TrimPrefix(line, "\t"))
		case in:
			in = false
		}
	}
	require.NotEmpty(t, recipe, "no demo recipe in the Makefile")
	require.NotContains(t, help, "30 s", "a cold build takes minutes")
	builds := 0
	for i, line := range recipe {
		if !strings.Contains(line, "$(GO) build") {
			continue
		}
		builds++
		require.Greater(t, i, 0, "build step %q is not announced", line)
		require.True(t, strings.HasPrefix(recipe[i-1], "@echo "), "build step %q is not announced by an echo line (got %q)", line, recipe[i-1])
	}
	require.Equal(t, 2, builds, "the demo builds switchyard and simcli")
}
