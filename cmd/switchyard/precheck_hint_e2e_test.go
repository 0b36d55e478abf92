package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPrecheckDoctorHintPastes (issue 28, finding 14): the pre-check's
// doctor command carries the run's --parent and its --data-dir (not the
// default here), so it pastes as is into a shell without
// SWITCHYARD_DATA_DIR.
func TestPrecheckDoctorHintPastes(t *testing.T) {
	t.Parallel()
	sheet, err := os.ReadFile(filepath.Join(repoRoot, "examples", "quickstart", "panel.sheet"))
	require.NoError(t, err)
	s := newEngineSandbox(t, nil, string(sheet))
	// No provider CLI on PATH: the pre-check has problems to print.
	s.env = slices.DeleteFunc(slices.Clone(s.env), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	s.env = append(s.env, "PATH=/usr/bin:/bin")
	r := s.run(t, 3*time.Minute, s.runArgs("swarm workers")...)
	want := "details: switchyard doctor --sheet " + shellQuote(s.sheetPath()) + " --role 'swarm workers' --parent claude --probe --data-dir " + shellQuote(s.data) + ")"
	require.Contains(t, r.stdout+r.stderr, "pre-check: ", "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout+r.stderr, want, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}
