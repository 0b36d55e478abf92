package machines_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
)

// TestMermaidGolden compares the rendered lane diagram with
// testdata/lane.mmd; go test ./machines -run TestMermaidGolden -update
// rewrites it.
func TestMermaidGolden(t *testing.T) {
	got := machines.Mermaid()
	path := filepath.Join("testdata", "lane.mmd")
	if *update {
		// A rewrite that changes the file fails, so a blanket -update
		// cannot pass a regression silently.
		if old, err := os.ReadFile(path); err == nil && string(old) == got {
			return
		}
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		t.Errorf("updated golden %s; review the diff and rerun without -update", path)
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run: go test ./machines -run TestMermaidGolden -update")
	assert.Equal(t, string(want), got, "diagram differs from %s; if the table changed on purpose, run: go test ./machines -run TestMermaidGolden -update", path)
}

// TestMermaidIsDeterministicAndComplete: repeated renders are identical and
// every edge of the table appears once.
func TestMermaidIsDeterministicAndComplete(t *testing.T) {
	t.Parallel()
	first := machines.Mermaid()
	for range 20 {
		require.Equal(t, first, machines.Mermaid())
	}
	id := func(s machines.State) string { return strings.ReplaceAll(string(s), "-", "_") }
	for _, l := range legal {
		assert.Equal(t, 1, strings.Count(first, "    "+id(l.from)+" --> "+id(l.to)+": "+string(l.ev)+"\n"), "%s", l.name)
	}
	assert.Contains(t, first, "    [*] --> created\n")
	assert.Contains(t, first, `    state "awaiting-operation" as awaiting_operation`+"\n")
	for _, s := range machines.States {
		assert.Equal(t, s.Final(), strings.Contains(first, "    "+id(s)+" --> [*]\n"), s)
	}
	assert.NotRegexp(t, `(?m)^\s+\S*-\S* -->|--> \S*-\S*:`, first, "Mermaid ids cannot contain '-'")
}
