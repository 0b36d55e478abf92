package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// complete runs cobra's hidden completion request for args and returns
// the candidates and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), append([]string{"__complete"}, args...), &stdout, &stderr), stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got, lines[len(lines)-1]
}

// TestFlagCompletions: the shells complete providers, parents and run
// states, including the next item of a comma list.
func TestFlagCompletions(t *testing.T) {
	got, directive := complete(t, "worker", "--provider", "c")
	require.ElementsMatch(t, []string{"claude", "codex", "cursor"}, got)
	require.Equal(t, ":6", directive, "no file completion, no space after a list item")

	got, _ = complete(t, "worker", "--provider", "codex,c")
	require.ElementsMatch(t, []string{"codex,claude", "codex,cursor"}, got, "an item already listed is not offered again")

	got, _ = complete(t, "models", "--provider", "gem")
	require.Equal(t, []string{"gemini"}, got)

	got, _ = complete(t, "status", "--state", "running,")
	require.Equal(t, []string{"running,waiting-for-parent", "running,final", "running,cancelled"}, got)

	got, _ = complete(t, "native", "next", "--parent", "")
	require.Equal(t, []string{"claude", "codex"}, got)
}
