package events_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// attackerUID is the other local user of the attack tests: a fixed uid
// with no account, so no user entry is needed to own files or run as it.
const attackerUID = 64123

// needRoot skips a test that needs a real second uid (chown, setuid
// children) when not root, and fails it where CI promises root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test plays another local user and needs root; CI runs as root")
	}
	t.Skip("needs root to act as another uid (chown, setuid children)")
}

// TestHelperListener is not a test: run by the tests below as a child
// process (as this user or as the attacker), it listens on 127.0.0.1:0,
// prints the port and holds the socket until its stdin closes.
func TestHelperListener(t *testing.T) {
	if os.Getenv("SWITCHYARD_TEST_LISTENER") != "1" {
		t.Skip("helper process")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// reachableDir is a fresh directory (0755) that other uids can reach: a
// t.TempDir lies in a directory only this user may enter.
func reachableDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "switchyard-owner-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	require.NoError(t, os.Chmod(d, 0o755))
	return d
}

// listener starts TestHelperListener as uid (nil: this user) and returns
// the process and its port.
func listener(t *testing.T, bin string, cred *syscall.Credential) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestHelperListener$")
	cmd.Env = append(os.Environ(), "SWITCHYARD_TEST_LISTENER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the listener prints its port")
	port, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err, "the listener printed %q", line)
	return cmd, port
}

// TestCheckServerTellsTheServerFromImpostors plays the recycled pid: a
// serve.json names a pid, its start identity and its URL, and only the
// process that started then and holds the listening socket, as this user,
// passes. A process of another uid listening on the recorded port with the
// recorded pid and start identity (what a pid recycled to the attacker
// would look like at best) is refused for its socket's owner.
func TestCheckServerTellsTheServerFromImpostors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sockets' owners are read from /proc")
	}
	needRoot(t)
	t.Parallel()
	base := reachableDir(t)
	self, err := os.Executable()
	require.NoError(t, err)
	// The attacker runs a copy it can reach: the test binary's own
	// directory is root's alone.
	bin := filepath.Join(base, "helper.test")
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))

	mine, myPort := listener(t, bin, nil)
	myStart, st := events.ProcessStart(mine.Process.Pid)
	require.Equal(t, events.ProcLive, st)
	url := func(port int) string { return "nats://127.0.0.1:" + strconv.Itoa(port) }

	require.NoError(t, events.CheckServer(mine.Process.Pid, myStart, url(myPort)), "the real holder is live")

	err = events.CheckServer(mine.Process.Pid, "proc-start:1", url(myPort))
	require.ErrorContains(t, err, "is another process now", "a start identity that differs is a reused pid")
	err = events.CheckServer(mine.Process.Pid, "", url(myPort))
	require.ErrorContains(t, err, "no recorded start identity", "a record without one is not trusted")

	theirs, theirPort := listener(t, bin, &syscall.Credential{Uid: attackerUID, Gid: attackerUID})
	theirStart, st := events.ProcessStart(theirs.Process.Pid)
	require.Equal(t, events.ProcLive, st)
	err = events.CheckServer(theirs.Process.Pid, theirStart, url(theirPort))
	require.ErrorContains(t, err, fmt.Sprintf("owned by uid %d", attackerUID), "another user's listener is not this user's server")

	err = events.CheckServer(mine.Process.Pid, myStart, url(theirPort))
	require.ErrorContains(t, err, "does not hold the socket", "a live holder whose port another process listens on is not trusted")

	// The holder exits: its pid is no server.
	pid := mine.Process.Pid
	require.NoError(t, mine.Process.Kill())
	_ = mine.Wait()
	err = events.CheckServer(pid, myStart, url(myPort))
	require.Error(t, err)
	require.Regexp(t, "has exited|another process now", err.Error())
}

// TestOwnerChecksRefuseAnotherUsersFiles: a 0700 directory, a 0600 file and
// a shared sticky directory are refused when another uid owns them or can
// write them, naming the path, the owner and the fix; this user's own
// pass. The other uid's files are made by a real process running as it.
func TestOwnerChecksRefuseAnotherUsersFiles(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := reachableDir(t)
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	theirs := filepath.Join(shared, "theirs")
	// The attacker makes a private directory with a file in it, and a
	// file in the shared directory.
	sh := exec.Command("/bin/sh", "-c", `umask 077 && mkdir "$1" && echo forged > "$1/serve.json" && echo forged > "$2/ledger.json"`, "sh", theirs, shared)
	sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: attackerUID, Gid: attackerUID}}
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)

	err = events.CheckPrivateDir(theirs, "data directory")
	require.ErrorContains(t, err, "data directory "+theirs+" is owned by uid 64123, not by this user (uid 0")
	require.ErrorContains(t, err, "chown -R 0 "+theirs)
	var unsafe *events.UnsafePathError
	require.ErrorAs(t, err, &unsafe)

	// Even were the directory passed, the file is the attacker's.
	f, err := os.Open(filepath.Join(shared, "ledger.json"))
	require.NoError(t, err)
	defer f.Close()
	err = events.CheckOwnedFile(f, filepath.Join(shared, "ledger.json"), "ledger")
	require.ErrorContains(t, err, "is owned by uid 64123")

	_, err = events.OpenOwnedFile(filepath.Join(theirs, "serve.json"), "serve.json", "data directory")
	require.ErrorContains(t, err, "data directory "+theirs+" is owned by uid 64123", "the directory is checked before its file is opened")

	err = events.CheckFileDir(shared, "ledger directory")
	require.ErrorContains(t, err, "is writable by other users (mode 0777, sticky)")

	// This user's own private directory and file pass; write access for
	// others does not.
	mine := filepath.Join(base, "mine")
	require.NoError(t, os.Mkdir(mine, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "serve.json"), []byte("{}"), 0o600))
	require.NoError(t, events.CheckPrivateDir(mine, "data directory"))
	require.NoError(t, events.CheckFileDir(mine, "ledger directory"))
	g, err := events.OpenOwnedFile(filepath.Join(mine, "serve.json"), "serve.json", "data directory")
	require.NoError(t, err)
	g.Close()
	require.NoError(t, os.Chmod(filepath.Join(mine, "serve.json"), 0o622))
	_, err = events.OpenOwnedFile(filepath.Join(mine, "serve.json"), "serve.json", "data directory")
	require.ErrorContains(t, err, "writable by other users (mode 0622)")
	require.NoError(t, os.Remove(filepath.Join(mine, "serve.json")))
	require.NoError(t, os.Symlink(filepath.Join(theirs, "serve.json"), filepath.Join(mine, "serve.json")))
	_, err = events.OpenOwnedFile(filepath.Join(mine, "serve.json"), "serve.json", "data directory")
	require.ErrorContains(t, err, "is a symbolic link")
	require.NoError(t, os.Chmod(mine, 0o777))
	err = events.CheckPrivateDir(mine, "data directory")
	require.ErrorContains(t, err, "writable by other users (mode 0777)")
}
