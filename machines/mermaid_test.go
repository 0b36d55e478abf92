package machines_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// TestMermaidGolden compares the rendered lane diagram with
// testdata/lane.mmd; go test ./machines -run TestMermaidGolden -update
// rewrites it.
func TestMermaidGolden(t *testing.T) {
	golden.Check(t, "testdata/lane.mmd", machines.Mermaid())
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
