package events_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWorkerIdentitiesFileIsTrustedOnlyWhenSafe: the worker identities
// file is read only when it is this user's regular file that no one else
// may write, exactly the format (no unknown field, nothing after the
// object), and IssueWorkerIdentity never replaces an existing seed.
func TestWorkerIdentitiesFileIsTrustedOnlyWhenSafe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "workers.json")
	seed := filepath.Join(dir, "w.seed")
	key, err := events.IssueWorkerIdentity(reg, seed, []policy.Provider{policy.Grok})
	require.NoError(t, err)
	w, err := events.ReadWorkerIdentities(reg)
	require.NoError(t, err)
	require.True(t, w.Serves(key, policy.Grok))
	got, err := events.WorkerSeedKey(seed)
	require.NoError(t, err)
	require.Equal(t, key, got)
	good, err := os.ReadFile(reg)
	require.NoError(t, err)

	// An existing seed is never replaced, and the file is unchanged.
	_, err = events.IssueWorkerIdentity(reg, seed, []policy.Provider{policy.Codex})
	require.ErrorIs(t, err, fs.ErrExist)
	after, err := os.ReadFile(reg)
	require.NoError(t, err)
	require.Equal(t, good, after)

	// A list that cannot be written leaves no unlisted seed behind.
	orphan := filepath.Join(dir, "orphan.seed")
	_, err = events.IssueWorkerIdentity(filepath.Join(dir, "missing", "workers.json"), orphan, []policy.Provider{policy.Grok})
	require.Error(t, err)
	_, err = os.Stat(orphan)
	require.ErrorIs(t, err, fs.ErrNotExist, "the seed of an identity that could not be listed is removed")

	for name, tc := range map[string]struct {
		write func(path string)
		want  string
	}{
		"unknown field": {func(p string) { os.WriteFile(p, []byte(`{"version":1,"workers":[],"extra":true}`), 0o600) }, `unknown field "extra"`},
		"trailing data": {func(p string) { os.WriteFile(p, append(append([]byte{}, good...), []byte("{}")...), 0o600) }, "data after the JSON object"},
		"group-writable": {func(p string) {
			os.WriteFile(p, good, 0o600)
			os.Chmod(p, 0o620)
		}, "is writable by other users"},
		"symlink": {func(p string) {
			other := filepath.Join(dir, "real.json")
			os.WriteFile(other, good, 0o600)
			os.Symlink(other, p)
		}, "is a symbolic link"},
		"fifo": {func(p string) { require.NoError(t, syscall.Mkfifo(p, 0o600)) }, "is not a regular file"},
	} {
		p := filepath.Join(t.TempDir(), "workers.json")
		tc.write(p)
		_, err := events.ReadWorkerIdentities(p)
		require.ErrorContains(t, err, tc.want, name)
		require.ErrorContains(t, err, p, name)
	}
	_, err = events.ReadWorkerIdentities(filepath.Join(dir, "none.json"))
	require.ErrorIs(t, err, events.ErrNoWorkerIdentities)
}
