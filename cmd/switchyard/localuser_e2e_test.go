package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// attackerUID is the other local user of the attack tests: a fixed uid
// with no account (no user entry is needed to own files or run as it).
const attackerUID = 64123

// TestForeignDataDirIsRefused plays issue 25's class 6 attack: another
// local user makes a 0700 data directory of their own, with a forged
// serve.json naming their server and a held serve.lock, where root's
// commands look (a shared directory). Root's commands refuse it, naming
// the path, the owner and the fix, never connect to the forged server, and
// change nothing in the directory.
func TestForeignDataDirIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test plays another local user and needs root; CI runs as root")
		}
		t.Skip("needs root to act as another uid")
	}
	t.Parallel()
	shared, err := os.MkdirTemp("", "switchyard-shared-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(shared) })
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	data := filepath.Join(shared, "data")

	// The attacker's server: counts every connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var dialed atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Write([]byte("INFO {}\r\n"))
			c.Close()
		}
	}()

	// The attacker, a real process of another uid, builds the directory and
	// holds its lock as a serving holder would.
	attacker := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: attackerUID, Gid: attackerUID}}
	forged := fmt.Sprintf(`{"pid": %d, "url": "nats://%s", "kind": "serve", "dataDir": %q, "fsync": "always", "started": "2026-12-04T00:00:00Z"}`, os.Getpid(), ln.Addr(), data)
	sh := exec.Command("/bin/sh", "-c", `umask 077 && mkdir -p "$1/jetstream" && printf '%s\n' "$2" > "$1/serve.json" && printf '{}\n' > "$1/serve.auth"`, "sh", data, forged)
	sh.SysProcAttr = attacker
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	hold := exec.Command("flock", filepath.Join(data, "serve.lock"), "sleep", "120")
	hold.SysProcAttr = attacker
	require.NoError(t, hold.Start())
	t.Cleanup(func() { hold.Process.Kill(); hold.Wait() })
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(data, "serve.lock")); return err == nil }, 30*time.Second, 10*time.Millisecond)

	before := snapshotDir(t, data)
	for _, args := range [][]string{
		{"status", "--data-dir", data},
		{"history", "--run", "r-1", "--data-dir", data},
		{"worker", "--provider", "grok", "--data-dir", data},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, binPath, args...)
		cmd.Env = append(withoutNATSEnv(os.Environ()), "HOME="+shared)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		require.Error(t, err, "switchyard %q must refuse: stdout %s", args, stdout.String())
		msg := stderr.String()
		require.Contains(t, msg, "data directory "+data+" is owned by uid 64123, not by this user (uid 0", args)
		require.Contains(t, msg, "chown -R 0 "+data, "the fix is named: %q", args)
	}
	require.Zero(t, dialed.Load(), "no command connected to the forged server")
	require.Equal(t, before, snapshotDir(t, data), "nothing in the directory changed")
}

// snapshotDir is every file under dir with its content, owner and mode.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		v := fmt.Sprintf("%v uid=%d", fi.Mode(), st.Uid)
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[p] = v
		return nil
	}))
	return m
}
