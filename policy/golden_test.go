package policy

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites golden files instead of comparing: go test ./policy -update.
var update = flag.Bool("update", false, "rewrite the golden files under policy/testdata")

// golden compares got with the file testdata/<name> (name uses forward
// slashes, e.g. "next/launch.golden"), or writes it under -update. Callers
// pass exactly the bytes the file should hold, trailing newline included.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		updateGolden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run: go test ./policy -run %s -update", t.Name())
	require.Equal(t, string(want), string(got), "output differs from %s; if the change is intended, run: go test ./policy -run %s -update", path, t.Name())
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
