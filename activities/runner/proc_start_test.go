package runner

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The ps -o lstart probe is what non-Linux hosts use for a process's start
// identity; ps is on Linux too, so it is checked here against real
// processes: a live child, a zombie, a reaped pid.
func TestPSStartTokenIdentifiesRealProcesses(t *testing.T) {
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("no ps on this host")
	}
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	tok, v := psStartToken(pid)
	require.Equal(t, procLive, v, "a running child is live")
	require.True(t, strings.HasPrefix(tok, "ps-lstart:"), tok)
	again, v := psStartToken(pid)
	require.Equal(t, procLive, v)
	require.Equal(t, tok, again, "the same process has the same start token")

	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return exitedUnreaped(pid) }, 30*time.Second, 10*time.Millisecond, "the killed child becomes a zombie")
	_, v = psStartToken(pid)
	require.Equal(t, procAbsent, v, "a zombie is not a live process")

	_ = cmd.Wait()
	_, v = psStartToken(pid)
	require.Equal(t, procAbsent, v, "a reaped pid is absent")
}
