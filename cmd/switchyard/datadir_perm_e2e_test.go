package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUnreadableDataDirSaysPermissionDenied: a data directory this user may
// not read is reported as such, naming the directory and the fix, not as
// one holding no store (issue 28, finding 8). As root (CI) permissions do
// not apply, so the binary runs as an unprivileged uid with no account
// (65534); as another user the directory's mode shuts that user out.
func TestUnreadableDataDirSaysPermissionDenied(t *testing.T) {
	t.Parallel()
	base, err := os.MkdirTemp("", "switchyard-perm-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	data := filepath.Join(base, "data")
	require.NoError(t, os.MkdirAll(filepath.Join(data, storeDirName), 0o700))

	bin := binPath
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// The test binary's directory is root's alone: the other uid
		// runs a copy it can reach.
		bin = filepath.Join(base, "switchyard")
		copyExecutable(t, binPath, bin)
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	} else {
		require.NoError(t, os.Chmod(data, 0o000))
		t.Cleanup(func() { os.Chmod(data, 0o700) })
	}

	for _, args := range [][]string{
		{"status", "--data-dir", data},
		{"history", "--run", "7f3c2a", "--data-dir", data},
		{"usage", "--provider", "grok", "--data-dir", data},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = base
		cmd.Env = append(withoutNATSEnv(os.Environ()), "HOME="+base)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "switchyard %q: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
		require.Equal(t, exitGeneric, ee.ExitCode(), "switchyard %q: stderr %s", args, stderr.String())
		require.Contains(t, stderr.String(), "data directory "+data+": permission denied", args)
		require.Contains(t, stderr.String(), "run switchyard as the user that owns it", args)
		require.NotContains(t, stderr.String(), "holds no store", args)
	}
}

// copyExecutable copies the file at src to dst, mode 0755.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
