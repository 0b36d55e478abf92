package contract

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestLedgerRefusesSharedDirectoryAndAnotherUsersFile plays issue 25's
// ledger attack: in a shared sticky directory (like /tmp) another uid, a
// real process, creates the ledger first with a forged pending record.
// Recording and reading refuse it, naming the directory, and the file is
// unchanged; a ledger another user made in this user's directory is
// refused for its owner.
func TestLedgerRefusesSharedDirectoryAndAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test plays another local user and needs root; CI runs as root")
		}
		t.Skip("needs root to act as another uid")
	}
	shared, err := os.MkdirTemp("", "switchyard-ledger-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(shared) })
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	ledger := filepath.Join(shared, "ops.json")
	forged := `{"schema":1,"operations":[{"id":"op-1","task":"T","checkpoint":"C","kind":"commit-checkpoint","state":"complete","expected":{},"result":{},"pendingAt":"2026-12-04T00:00:00Z","settledAt":"2026-12-04T00:00:00Z"}]}`
	sh := exec.Command("/bin/sh", "-c", `umask 022 && printf '%s\n' "$2" > "$1" && : > "$1.lock"`, "sh", ledger, forged)
	sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 64123, Gid: 64123}}
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	before, err := os.ReadFile(ledger)
	require.NoError(t, err)

	req := RecordRequest{Ledger: ledger, ID: "op-2", Task: "T", Checkpoint: "C", Kind: policy.OpCommitCheckpoint,
		State: StatePending, Expected: []byte(`{}`), Now: time.Now()}
	_, err = Record(req)
	require.ErrorContains(t, err, "ledger directory "+shared+" is writable by other users (mode 0777, sticky)")
	_, err = Status(ledger)
	require.ErrorContains(t, err, "is writable by other users")
	after, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, before, after, "the ledger is unchanged")

	// This user's own directory, but the ledger was made by another uid.
	mine := t.TempDir()
	own := filepath.Join(mine, "ops.json")
	require.NoError(t, os.WriteFile(own, []byte(forged+"\n"), 0o644))
	require.NoError(t, os.Chown(own, 64123, 64123))
	_, err = Status(own)
	require.ErrorContains(t, err, "ledger "+own+" is owned by uid 64123")
	req.Ledger = own
	_, err = Record(req)
	require.ErrorContains(t, err, "is owned by uid 64123")
	require.NoError(t, os.Chown(own, 0, 0))
	lf, err := Status(own)
	require.NoError(t, err, "the same ledger of this user's own is read")
	require.Len(t, lf.Operations, 1)
}
