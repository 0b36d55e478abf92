package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestRunnerPrivateFiles proves spec files beside the receipt and inside
// the private directory are removed after the attempt, and that a spec
// file whose path already exists stops the attempt before any CLI runs
// without touching that path.
func TestRunnerPrivateFiles(t *testing.T) {
	t.Parallel()
	t.Run("removed after the attempt", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "exit:1")
		sidecar := l.receipt + ".contract-prompt.md"
		l.fake.Files = []providers.File{{Path: sidecar, Mode: 0o600, Content: []byte("copy")}}
		require.Equal(t, 70, l.run(nil))
		requireGone(t, sidecar)
		requireGone(t, l.receipt+".private")
	})
	t.Run("existing path refused", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		existing := filepath.Join(l.dir, "users-file")
		require.NoError(t, os.WriteFile(existing, []byte("keep me"), 0o644))
		l.fake.Files = []providers.File{{Path: existing, Mode: 0o600, Content: []byte("overwrite")}}
		require.Equal(t, 70, l.run(nil))
		rc := l.receiptFile()
		require.Equal(t, policy.StatusChildFailed, rc.Status)
		require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
		require.False(t, *rc.ProcessStarted)
		b, err := os.ReadFile(existing)
		require.NoError(t, err)
		require.Equal(t, "keep me", string(b))
		_, err = os.Stat(l.fake.counter())
		require.True(t, os.IsNotExist(err), "no probe ran")
		requireGone(t, l.receipt+".private")
		require.Equal(t, policy.OutcomeFailed, l.outcome(policy.APISpendUnset))
	})
	t.Run("symlink in place of a directory refused", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		link := filepath.Join(l.dir, "cfg")
		require.NoError(t, os.Symlink(l.cwd, link))
		l.fake.Files = []providers.File{{Path: link, Mode: 0o700, Dir: true}}
		require.Equal(t, 70, l.run(nil))
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink)
	})
}

// TestWorkerPrompt proves the preamble's shape per mode: the ownership
// rules always, writer rules and provider guidance only for writers, the
// handoff format, then the task verbatim.
func TestWorkerPrompt(t *testing.T) {
	t.Parallel()
	devin, err := providers.Lookup(policy.Devin)
	require.NoError(t, err)
	ro := string(workerPrompt(devin.Writer, policy.ReadOnly, []byte("task body")))
	wr := string(workerPrompt(devin.Writer, policy.IsolatedWrite, []byte("task body")))
	for _, p := range []string{ro, wr} {
		require.True(t, strings.HasPrefix(p, "## Worker contract\n"))
		require.True(t, strings.HasSuffix(p, "\n\nAssigned task:\ntask body"))
		require.Contains(t, p, "```pstack-handoff")
		require.Contains(t, p, "commit-checkpoint")
		require.Contains(t, p, "run-checks")
		require.Contains(t, p, ".git")
	}
	require.Contains(t, ro, "read-only assignment")
	require.NotContains(t, ro, "sandboxed exec")
	require.Contains(t, wr, "sandboxed exec")
	require.Contains(t, wr, "run the affected check again")
}

// TestWriterPromptMatchesGrantedTools: a writer whose spec grants no shell
// (OpenCode denies bash, Gemini's auto_edit refuses commands headless) is
// never told to run checks or use a shell; one with a shell (Antigravity's
// writer now has a sandboxed run_command) is told to run them.
func TestWriterPromptMatchesGrantedTools(t *testing.T) {
	t.Parallel()
	for _, p := range providers.Names() {
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		wr := string(workerPrompt(spec.Writer, policy.IsolatedWrite, []byte("task body")))
		if spec.Writer.Guidance != "" {
			require.Contains(t, wr, "\n"+spec.Writer.Guidance+"\n", p)
		}
		switch p {
		case policy.OpenCode, policy.Gemini:
			require.False(t, spec.Writer.Shell, p)
			for _, s := range []string{"run the local checks", "run the affected check", "sandboxed shell", "sandboxed commands", "run checks with", "run checks as"} {
				require.NotContains(t, wr, s, "%s: the prompt must not ask for a denied tool", p)
			}
			require.Contains(t, wr, "do not try to run checks", p)
		default:
			require.True(t, spec.Writer.Shell, p)
			require.Contains(t, wr, "run the local checks that fit the change", p)
			require.NotContains(t, wr, "do not try to run checks", p)
		}
	}
}

// TestExitedUnreaped proves the peek that decides whether a signal would
// reach a live child: false while the child runs, true once it exited, and
// it never reaps (Wait still collects the status).
func TestExitedUnreaped(t *testing.T) {
	t.Parallel()
	sleeper := exec.Command("sleep", "30")
	require.NoError(t, sleeper.Start())
	require.False(t, exitedUnreaped(sleeper.Process.Pid))
	require.NoError(t, sleeper.Process.Kill())
	require.Eventually(t, func() bool { return exitedUnreaped(sleeper.Process.Pid) }, 30*time.Second, time.Millisecond)
	require.Error(t, sleeper.Wait(), "the exit status was left for Wait")
	ws, ok := sleeper.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled(), "Wait saw the real status: killed by a signal")
}
