package providers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// writeExec creates dir/name with the given mode.
func writeExec(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"), mode))
	require.NoError(t, os.Chmod(path, mode)) // umask-proof
	return path
}

func TestResolveBinary(t *testing.T) {
	t.Parallel()
	twoNames := &Spec{Provider: policy.Cursor, Binaries: []string{"first", "second"}}
	tests := []struct {
		name    string
		spec    *Spec
		setup   func(t *testing.T, a, b string) (path string, want string)
		wantErr bool
	}{
		{name: "first PATH directory holding the candidate wins", spec: twoNames,
			setup: func(t *testing.T, a, b string) (string, string) {
				writeExec(t, a, "first", 0o755)
				writeExec(t, b, "first", 0o755)
				return a + string(os.PathListSeparator) + b, filepath.Join(a, "first")
			}},
		{name: "an earlier candidate anywhere beats a later one", spec: twoNames,
			setup: func(t *testing.T, a, b string) (string, string) {
				writeExec(t, a, "second", 0o755)
				writeExec(t, b, "first", 0o755)
				return a + string(os.PathListSeparator) + b, filepath.Join(b, "first")
			}},
		{name: "a later candidate is used when the first is missing", spec: twoNames,
			setup: func(t *testing.T, a, _ string) (string, string) {
				writeExec(t, a, "second", 0o755)
				return a, filepath.Join(a, "second")
			}},
		{name: "a file without execute bits is skipped", spec: twoNames,
			setup: func(t *testing.T, a, b string) (string, string) {
				writeExec(t, a, "first", 0o644)
				writeExec(t, b, "first", 0o700)
				return a + string(os.PathListSeparator) + b, filepath.Join(b, "first")
			}},
		{name: "a directory named like the binary is skipped", spec: twoNames, wantErr: true,
			setup: func(t *testing.T, a, _ string) (string, string) {
				require.NoError(t, os.Mkdir(filepath.Join(a, "first"), 0o755))
				return a, ""
			}},
		{name: "a symlink to an executable is followed but not resolved", spec: twoNames,
			setup: func(t *testing.T, a, b string) (string, string) {
				target := writeExec(t, b, "real", 0o755)
				require.NoError(t, os.Symlink(target, filepath.Join(a, "first")))
				return a, filepath.Join(a, "first")
			}},
		{name: "a dangling symlink is skipped", spec: twoNames, wantErr: true,
			setup: func(t *testing.T, a, b string) (string, string) {
				require.NoError(t, os.Symlink(filepath.Join(b, "missing"), filepath.Join(a, "first")))
				return a, ""
			}},
		{name: "empty and relative PATH entries are never searched", spec: twoNames, wantErr: true,
			setup: func(t *testing.T, a, _ string) (string, string) {
				writeExec(t, a, "first", 0o755)
				rel, err := filepath.Rel(mustGetwd(t), a)
				require.NoError(t, err)
				return string(os.PathListSeparator) + rel + string(os.PathListSeparator) + ".", ""
			}},
		{name: "an empty PATH finds nothing", spec: twoNames, wantErr: true,
			setup: func(*testing.T, string, string) (string, string) { return "", "" }},
		{name: "cursor never resolves to agent", spec: mustLookup(t, policy.Cursor), wantErr: true,
			setup: func(t *testing.T, a, _ string) (string, string) {
				writeExec(t, a, "agent", 0o755)
				return a, ""
			}},
		{name: "cursor resolves cursor-agent", spec: mustLookup(t, policy.Cursor),
			setup: func(t *testing.T, a, _ string) (string, string) {
				writeExec(t, a, "agent", 0o755)
				return a, writeExec(t, a, "cursor-agent", 0o755)
			}},
		{name: "antigravity resolves agy", spec: mustLookup(t, policy.Antigravity),
			setup: func(t *testing.T, a, _ string) (string, string) {
				return a, writeExec(t, a, "agy", 0o755)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := t.TempDir(), t.TempDir()
			pathEnv, want := tt.setup(t, a, b)
			got, err := ResolveBinary(tt.spec, pathEnv)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrBinaryNotFound)
				require.Empty(t, got)
				require.Contains(t, err.Error(), strings.Join(tt.spec.Binaries, ", "), "the error names the candidates tried")
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}

func mustLookup(t *testing.T, p policy.Provider) *Spec {
	t.Helper()
	spec, err := Lookup(p)
	require.NoError(t, err)
	return spec
}
