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
)

// sandboxGit runs git in dir with a fixed identity and no user config.
func sandboxGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=parent@example.com", "-c", "user.name=parent", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// laneWorktree is the worktree (or cwd) of run's lane, from status --json.
func (s *engineSandbox) laneWorktree(t *testing.T, run string, lane int) string {
	t.Helper()
	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		Lanes []struct {
			Paths struct{ Cwd, Worktree string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	if w := st.Lanes[lane].Paths.Worktree; w != "" {
		return w
	}
	return st.Lanes[lane].Paths.Cwd
}

// operateCLI is the parent's path for the simulated README.md handoff
// through the binary: validate, begin, git commit, done. It returns the
// commit.
func (s *engineSandbox) operateCLI(t *testing.T, run string, lane int) string {
	t.Helper()
	wt := s.laneWorktree(t, run, lane)
	head := sandboxGit(t, wt, "rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "README.md"), []byte("# Checkout, heading updated by the worker\n"), 0o644))
	r := s.run(t, 30*time.Second, "operation", "validate", "--data-dir", s.data, "--run", run, "--lane", "0",
		"--expected-head", head, "--file", "README.md", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	requireJSONDoc(t, "operation validate --json", r.stdout)
	var v struct{ Digest string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	require.Len(t, v.Digest, 64)
	require.Eventually(t, func() bool {
		st := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run, "--json")
		return strings.Contains(st.stdout, v.Digest)
	}, 30*time.Second, 100*time.Millisecond, "the validation is recorded")
	r = s.run(t, 60*time.Second, "operation", "begin", "--data-dir", s.data, "--run", run, "--lane", "0", "--digest", v.Digest)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "begun for run "+run+" lane 0: pending, digest "+v.Digest)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", run)
	require.Contains(t, r.stdout, "PENDING since it was begun: digest "+v.Digest, "a crashed parent finds its pending operation in status")
	sandboxGit(t, wt, "add", "--", "README.md")
	sandboxGit(t, wt, "commit", "-q", "-m", "checkpoint C-1")
	commit := sandboxGit(t, wt, "rev-parse", "HEAD")
	r = s.run(t, 30*time.Second, "operation", "done", "--data-dir", s.data, "--run", run, "--lane", "0", "--result", "succeeded", "--ref", "HEAD~1")
	require.Equal(t, 65, r.code, "a ref that is not the checkpoint commit is refused: %s", r.stdout)
	r = s.run(t, 30*time.Second, "operation", "done", "--data-dir", s.data, "--run", run, "--lane", "0", "--result", "succeeded", "--ref", commit)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "operation succeeded recorded for run "+run+" lane 0\n", r.stdout)
	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", run, "--type", "operation-step,operation-done")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "commit-checkpoint validated (task T-1, checkpoint C-1)")
	require.Contains(t, r.stdout, "commit-checkpoint begun (task T-1, checkpoint C-1)")
	require.Contains(t, r.stdout, "commit-checkpoint succeeded, ref "+commit+"; ledger complete")
	return commit
}
