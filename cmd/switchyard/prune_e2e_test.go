package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
)

// pruneSheet: a grok writer role that completes (its run accepts grok's
// UNVERIFIED writer containment), and a codex role whose attempt runs until
// stopped.
const pruneSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
hillclimb: grok:grok-4.7@xhigh
bug-fix: codex:gpt-5.6-sol@high
`

// TestPruneRemovesFinalRunsOnly: prune removes a final writer run's
// worktree (git forgets it too) and attempt files, leaves a live run and
// the checkout alone, lists the same under --dry-run without removing
// anything, and the run's report still prints, naming no output.
func TestPruneRemovesFinalRunsOnly(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "long-running"}, pruneSheet)
	gitInit(t, s.checkout)
	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "done", "--mode", "isolated-write", "--allow-unverified-containment", "grok")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	r = s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "done", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	tree, output := rep.Lanes[0].Attempts[0].Worktree, rep.Lanes[0].Attempts[0].Output
	require.DirExists(t, tree)
	require.FileExists(t, output)

	live := s.start(t, s.runArgs("bug-fix", "--run-id", "live")...)
	waitOutput(t, live, "bug-fix#1 (lane 0): running codex:gpt-5.6-sol@high\n")
	liveFiles := filepath.Join(s.data, "runs", "live")
	require.DirExists(t, liveFiles)

	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "run done: would remove 1 worktree(s) and its attempt files ("+filepath.Join(s.data, "runs", "done")+")")
	require.Contains(t, r.stdout, "  worktree "+tree+"\n")
	require.Contains(t, r.stdout, "nothing was removed (drop --dry-run); 1 unfinished run(s) left alone\n")
	require.DirExists(t, tree)
	require.FileExists(t, output)

	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "live")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "run live is not final (running); prune never touches a live run's files")
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--older-than", "7d")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing to prune; 1 unfinished run(s) left alone\n")
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--older-than", "soon")
	require.Equal(t, 64, r.code, r.stderr)

	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var out pruneOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Len(t, out.Pruned, 1)
	require.Equal(t, "done", out.Pruned[0].Run)
	require.Equal(t, []string{tree}, out.Pruned[0].Worktrees)
	require.Equal(t, 1, out.Unfinished)
	require.Positive(t, out.Bytes)

	require.NoDirExists(t, tree)
	require.NoDirExists(t, filepath.Join(s.data, "runs", "done"))
	require.NoDirExists(t, filepath.Join(s.data, "worktrees", "done"))
	require.DirExists(t, liveFiles, "a live run's files stay")
	require.FileExists(t, filepath.Join(s.checkout, "README.md"), "the checkout stays")
	cmd := exec.Command("git", "worktree", "list", "--porcelain")
	cmd.Dir = s.checkout
	list, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", list)
	require.Equal(t, 1, strings.Count(string(list), "worktree "), "git forgot the removed worktree:\n%s", list)

	r = s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "done", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, `"output"`, "a pruned run's report names no output")
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "done")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nothing to prune\n", r.stdout)
	_, err = os.Stat(s.checkout)
	require.NoError(t, err)
}
