package providers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestGrokReadOnlyCheckoutUnderTemp: a read-only Grok lane pointed under
// a temporary directory is refused before any probe with the seed's
// reason; the actual checkout passes, and writers are not refused.
func TestGrokReadOnlyCheckoutUnderTemp(t *testing.T) {
	t.Parallel()
	spec, err := Lookup(policy.Grok)
	require.NoError(t, err)
	require.NotNil(t, spec.Check)
	checkout := moduleRoot(t) // the real checkout, outside every temporary directory
	require.False(t, within(resolvedPath(os.TempDir()), resolvedPath(checkout)), "the checkout under test must not be temporary")
	worktree := filepath.Join(t.TempDir(), "wt")
	require.NoError(t, os.Mkdir(worktree, 0o700))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(checkout, link)) // a link under temp to the real checkout

	ownTmp := t.TempDir() // a TMPDIR the parent names, checked like /tmp
	ownWorktree := filepath.Join(ownTmp, "wt")
	require.NoError(t, os.Mkdir(ownWorktree, 0o700))

	tests := []struct {
		name    string
		mode    policy.Access
		cwd     string
		env     map[string]string
		refused bool
	}{
		{name: "read-only under the temporary directory", mode: policy.ReadOnly, cwd: worktree, refused: true},
		{name: "read-only at /tmp itself", mode: policy.ReadOnly, cwd: "/tmp", refused: true},
		{name: "read-only under /var/tmp", mode: policy.ReadOnly, cwd: "/var/tmp/some-worktree", refused: true},
		{name: "read-only under the parent's TMPDIR", mode: policy.ReadOnly, cwd: ownWorktree, env: map[string]string{"TMPDIR": ownTmp}, refused: true},
		{name: "read-only on the actual checkout", mode: policy.ReadOnly, cwd: checkout},
		{name: "read-only through a link to the actual checkout", mode: policy.ReadOnly, cwd: link},
		{name: "writer under the temporary directory", mode: policy.IsolatedWrite, cwd: worktree},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := spec.Check(Request{Provider: policy.Grok, Mode: tc.mode, Cwd: tc.cwd, ParentEnv: tc.env})
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			var pe *PreflightError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, policy.StatusUnsupportedCapability, pe.Status)
			require.Contains(t, pe.Evidence, "a read-only Grok lane must see the actual checkout")
		})
	}
}
