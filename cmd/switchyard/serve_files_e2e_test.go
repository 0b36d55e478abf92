package main

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStatusFailsFastOnBrokenServeFiles (issue 28, finding 9): with the
// running serve's serve.json corrupt, or its serve.auth deleted, status
// fails at once (not after the 30 s wait for a holder that does not
// listen) and says what is wrong and how to fix it, without calling the
// serve a process "which does not serve it"; put back, status works.
func TestStatusFailsFastOnBrokenServeFiles(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info := waitServeInfo(t, s.data, serve)
	infoPath, authPath := filepath.Join(s.data, "serve.json"), filepath.Join(s.data, "serve.auth")
	good, err := os.ReadFile(infoPath)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(infoPath, []byte("{garbage"), 0o600))
	start := time.Now()
	r := s.run(t, 10*time.Second, "status", "--data-dir", s.data)
	t.Logf("corrupt serve.json: status failed in %s", time.Since(start).Round(time.Millisecond))
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "serve.json: not a valid serve.json")
	require.Contains(t, r.stderr, "restart that process (stop pid "+strconv.Itoa(info.PID)+", then `switchyard serve --data-dir "+s.data+"`)")
	require.NotContains(t, r.stderr, "which does not serve it")
	require.NoError(t, os.WriteFile(infoPath, good, 0o600))

	auth, err := os.ReadFile(authPath)
	require.NoError(t, err)
	require.NoError(t, os.Remove(authPath))
	start = time.Now()
	r = s.run(t, 10*time.Second, "status", "--data-dir", s.data)
	t.Logf("deleted serve.auth: status failed in %s", time.Since(start).Round(time.Millisecond))
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "its credentials file "+authPath+" is gone")
	require.Contains(t, r.stderr, "restart it (stop pid "+strconv.Itoa(info.PID)+", then `switchyard serve --data-dir "+s.data+"`)")
	require.NoError(t, os.WriteFile(authPath, auth, 0o600))

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 0, serve.stop(t))
}

// TestServeBusyPortCreatesNothing (issue 28, finding 22): a busy --http
// port fails before the banner with the fix, exit 1, and leaves no data
// directory; so does a busy --listen port, whose failure comes after the
// data directory was made: the serve removes what it created.
func TestServeBusyPortCreatesNothing(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	addr := busy.Addr().String()

	r := s.run(t, 30*time.Second, "serve", "--data-dir", s.data, "--http", addr)
	require.Equal(t, 1, r.code, r.stderr)
	require.Empty(t, r.stdout, "no banner before the port is known to be free")
	require.Contains(t, r.stderr, "--http "+addr+": the address is already in use")
	require.Contains(t, r.stderr, "pick another port, for example --http 127.0.0.1:0")
	_, err = os.Lstat(s.data)
	require.True(t, errors.Is(err, fs.ErrNotExist), "a failed serve leaves no data directory: %v", err)

	r = s.run(t, 30*time.Second, "serve", "--data-dir", s.data, "--listen", addr)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "address already in use")
	_, err = os.Lstat(s.data)
	require.True(t, errors.Is(err, fs.ErrNotExist), "a failed serve leaves no data directory: %v", err)
}

// TestRunAgainstServeRefusesSelfContainedOptions (issue 28, finding 19):
// against a serve, --fsync and --quota-refresh are refused like --cap
// (exit 64, naming the serve's or worker's option to use instead), and
// nothing is submitted.
func TestRunAgainstServeRefusesSelfContainedOptions(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fsync", "interval"}, "--fsync applies to a self-contained run; this run goes to"},
		{[]string{"--quota-refresh", "1m"}, "--quota-refresh applies to a self-contained run's own workers; this run goes to"},
		{[]string{"--cap", "grok=1"}, "--cap applies to a self-contained run"},
	} {
		r := s.run(t, 30*time.Second, s.runArgs("hillclimb", append([]string{"--detach"}, tc.args...)...)...)
		require.Equal(t, exitUsage, r.code, "%q: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want)
		require.Empty(t, r.stdout, "no run id: nothing submitted")
	}
	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, `"run":`, "no run was submitted")
	require.Equal(t, 0, serve.stop(t))
}
