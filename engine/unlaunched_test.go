package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestUnlaunchedExecutionsAreRemovedBeforeRunFinal: what an engine killed
// between preparing an attempt and recording its launch leaves behind (an
// execution directory holding the prompt copy, a fresh writer worktree) is
// removed before run-final; a directory or worktree holding anything more
// is left in place, and so is everything of the executions the log
// launched.
func TestUnlaunchedExecutionsAreRemovedBeforeRunFinal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high"), "bug-fix", policy.IsolatedWrite)

	execDir := func(id string) string { return filepath.Join(h.data, "runs", run, "L0", id) }
	worktree := func(id string) string { return filepath.Join(h.data, "worktrees", run, "L0", id) }
	gitIn := func(dir string, args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	prepared := func(id string, extra ...string) {
		require.NoError(t, os.MkdirAll(execDir(id), 0o700))
		for _, name := range append([]string{"prompt.md"}, extra...) {
			require.NoError(t, os.WriteFile(filepath.Join(execDir(id), name), []byte("x"), 0o600))
		}
	}
	prepared("x-orphan-clean")
	require.NoError(t, os.MkdirAll(execDir("x-orphan-empty"), 0o700)) // died before the prompt copy
	prepared("x-orphan-with-output", "output.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(worktree("x")), 0o700))
	gitIn(h.repo, "worktree", "add", "--detach", "--quiet", worktree("x-orphan-clean"), "HEAD")
	gitIn(h.repo, "worktree", "add", "--detach", "--quiet", worktree("x-orphan-changed"), "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(worktree("x-orphan-changed"), "new.txt"), []byte("work"), 0o600))

	h.run()
	h.startWorker(map[string]string{"codex": "success"})
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	launch := ofType(envs, events.TypeLaunch)[0].Payload.(events.Launch)

	require.NoDirExists(t, execDir("x-orphan-clean"), "a prompt copy never launched is removed")
	require.NoDirExists(t, execDir("x-orphan-empty"), "an empty execution directory never launched is removed")
	require.NoDirExists(t, worktree("x-orphan-clean"), "an unmodified worktree never launched is removed")
	require.NotContains(t, gitIn(h.repo, "worktree", "list"), "x-orphan-clean")
	require.FileExists(t, filepath.Join(execDir("x-orphan-with-output"), "output.md"), "more than a prompt: left in place")
	require.FileExists(t, filepath.Join(worktree("x-orphan-changed"), "new.txt"), "a changed worktree: left in place")
	require.DirExists(t, execDir(launch.ExecutionID), "the launched execution's files are kept")
	require.DirExists(t, launch.Paths.Worktree, "the launched execution's worktree is kept")
	require.True(t, strings.HasPrefix(launch.Paths.Worktree, filepath.Join(h.data, "worktrees", run)))
	h.verifyReplay(run)
}
