package providers

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites golden files instead of comparing against them:
// go test ./providers -update.
var update = flag.Bool("update", false, "rewrite golden files under providers/testdata")

// golden compares got with providers/testdata/<name>, or writes it there
// when -update is set.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		updateGolden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden %s: run go test ./providers -update", path)
	require.Equal(t, string(want), string(got), "golden %s differs: run go test ./providers -update if the change is intended", path)
}

// updateGolden writes got to path under -update. A rewrite that changes
// the file fails the test, so a blanket -update cannot pass a regression
// silently: review the diff, then rerun without -update.
func updateGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, got) {
		return
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, got, 0o644))
	t.Errorf("updated golden %s; review the diff and rerun without -update", path)
}
