package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/providers"
)

// Guarded files (a worker can reach them) are removed after the attempt
// only when unchanged, guarded directories only when empty; what the
// attempt replaced or added stays and is reported.
func TestCleanupPreservesChangedGuardedPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		kept   []string
	}{
		{"unchanged: everything goes", func(*testing.T, string) {}, nil},
		{"a replaced hooks file stays with its directory", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".agents", "hooks.json"), []byte(`{"hooks":{"x":1}}`), 0o600))
		}, []string{".agents/hooks.json", ".agents"}},
		{"a symlink in place of the file stays", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ".agents", "hooks.json")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("/etc/hostname", p))
		}, []string{".agents/hooks.json"}},
		{"a file the worker added keeps the directory", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".agents", "notes.md"), []byte("mine"), 0o600))
		}, []string{".agents/notes.md", ".agents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			area, err := newPrivateArea(filepath.Join(dir, "receipt.json"))
			require.NoError(t, err)
			agents := filepath.Join(dir, ".agents")
			for _, f := range []providers.File{
				{Path: agents, Mode: 0o700, Dir: true, Guard: true},
				{Path: filepath.Join(agents, "hooks.json"), Mode: 0o600, Content: []byte(`{"hooks":{}}`), Guard: true},
				{Path: filepath.Join(area.dir, "config.json"), Mode: 0o600, Content: []byte("{}")},
			} {
				require.NoError(t, area.create(f))
			}
			tc.change(t, dir)
			err = area.cleanup()
			_, perr := os.Lstat(area.dir)
			require.ErrorIs(t, perr, os.ErrNotExist, "the private directory always goes")
			if tc.kept == nil {
				require.NoError(t, err)
				_, serr := os.Lstat(agents)
				require.ErrorIs(t, serr, os.ErrNotExist)
				return
			}
			require.True(t, errors.Is(err, errLeftInPlace), "%v", err)
			for _, k := range tc.kept {
				_, serr := os.Lstat(filepath.Join(dir, k))
				require.NoError(t, serr, "%s is preserved", k)
			}
		})
	}
}
