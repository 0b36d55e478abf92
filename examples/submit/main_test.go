package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlagRefusals: bad or missing flags are usage errors (64) before
// anything is dialed; a data directory with no Switchyard data is a plain
// failure (1), with nothing created in it.
func TestFlagRefusals(t *testing.T) {
	dir := t.TempDir()
	sheet := filepath.Join(dir, "s")
	require.NoError(t, os.WriteFile(sheet, []byte("bug-fix: auto\n"), 0o600))
	base := []string{"--sheet", sheet, "--role", "bug-fix", "--parent", "claude", "--prompt", sheet, "--cwd", dir, "--run-id-prefix", "k"}
	require.Equal(t, 64, run(nil))
	require.Equal(t, 64, run(append(base, "--count", "0")))
	require.Equal(t, 64, run(append(base, "--concurrency", "0")))
	require.Equal(t, 64, run(append(base, "extra")))
	require.Equal(t, 64, run(append(base, "--sheet", filepath.Join(dir, "missing"))))
	empty := filepath.Join(dir, "data")
	require.NoError(t, os.Mkdir(empty, 0o700))
	require.Equal(t, 1, run(append(base, "--data-dir", empty)))
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Empty(t, entries)
}
