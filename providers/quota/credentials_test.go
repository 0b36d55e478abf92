package quota_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers/quota"
)

// TestCredentialNote: Claude's quota source says it reads the CLI's
// credential file and how to stop it, and says the file was not read when
// the kill switch turned the source off; a source that reads no file
// (Codex asks its own CLI) says nothing.
func TestCredentialNote(t *testing.T) {
	t.Parallel()
	n := quota.CredentialNote(policy.Claude, nil)
	require.Contains(t, n, "~/.claude/.credentials.json")
	require.True(t, strings.HasSuffix(n, "SWITCHYARD_CLAUDE_USAGE_API=0 stops it"), n)
	off := &policy.CapacityReport{Snapshot: policy.CapacitySnapshot{State: policy.CapacityUnknown, Reason: policy.CapacityReasonDisabled}}
	require.Equal(t, "credential file not read: SWITCHYARD_CLAUDE_USAGE_API=0 turned the quota source off", quota.CredentialNote(policy.Claude, off))
	require.Empty(t, quota.CredentialNote(policy.Codex, nil))
	require.Empty(t, quota.CredentialFile(policy.Codex))
}
