package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// The hint names --ref as required: done refuses a succeeded
	// commit-checkpoint without it.
	require.Contains(t, r.stdout, "then: switchyard operation done --run "+run+" --lane 0 --result succeeded --ref COMMIT --data-dir "+s.data+" (or --result failed")
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

// TestCommittedHandoffIsHandedOff (issue 28, finding 17): a writer whose
// handoff the parent committed, and whose continuation the parent then
// declined, stops unsafe-writer in the log; run, report and status show it
// as having handed off the commit, name the worktree holding it and say it
// is the only copy, the summary does not say "no provider delivered", and
// prune keeps that worktree until a branch holds the commit (or --force).
func TestCommittedHandoffIsHandedOff(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"claude": "handoff"}, `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["handoff"]}
bug-fix: claude:opus@high
`)
	gitInit(t, s.checkout)
	args := s.runArgs("bug-fix", "--run-id", "handed", "--mode", "isolated-write", "--allow-unknown-quota", "claude")
	args[slices.Index(args, "--parent")+1] = "codex" // a Claude parent would run opus natively
	p := s.start(t, args...)
	waitOutput(t, p, "waiting for the parent: switchyard inspect --run handed --lane 0")
	r := s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "handed", "--lane", "0", "--state", "clear", "--evidence", "notes/review.md")
	require.Equal(t, 0, r.code, r.stderr)
	waitOutput(t, p, "waiting for the parent: switchyard operation validate --run handed --lane 0")
	wt := s.laneWorktree(t, "handed", 0)
	commit := s.operateCLI(t, "handed", 0)
	waitOutput(t, p, "waiting for the parent: switchyard recover --run handed --lane 0")
	r = s.run(t, 30*time.Second, "recover", "--data-dir", s.data, "--run", "handed", "--lane", "0", "--evidence", "notes/decline.md", "--decline")
	require.Equal(t, 0, r.code, r.stderr)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the decline")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)

	where := "it lives in worktree " + wt + " (a detached HEAD, on no branch) and is the only copy until you merge it: keep it with git -C " + s.checkout + " branch NAME " + commit
	summary := "1 lane: 1 handed off a commit; no lane completed; 1 commit handed off (the only copy until merged; do not prune it): lane 0 claude " + commit[:12]
	require.Contains(t, out, "bug-fix#1 (lane 0): handed-off claude:opus@high (commit "+commit[:12]+", then unsafe-writer)\n")
	require.NotContains(t, out, "stopped (unsafe-writer)")
	require.NotContains(t, out, "no provider delivered")
	require.Contains(t, out, summary+"\n")

	r = s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "handed")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "lane 0 bug-fix#1: handed-off commit "+commit+", then stopped: the parent declined the continuation (recorded reason unsafe-writer); primary claude:opus@high\n")
	require.Contains(t, r.stdout, "    handoff: handed off commit "+commit+" (commit-checkpoint task T-1 checkpoint C-1, from claude:opus@high); "+where)
	require.NotContains(t, r.stdout, "no provider delivered")

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "handed")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  "+summary+"\n")
	require.Regexp(t, `0\s+bug-fix#1\s+handed-off\s+0: claude:opus@high\s+-\s+commit `+commit[:12]+`, then unsafe-writer\n`, r.stdout)
	require.Contains(t, r.stdout, "  lane 0: handed off commit "+commit)
	require.Contains(t, r.stdout, where)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "handed", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		Lanes []struct {
			State, Reason string
			Handoffs      []struct{ Commit, Worktree string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, "stopped", st.Lanes[0].State, "the machine state stays as recorded")
	require.Equal(t, "unsafe-writer", st.Lanes[0].Reason)
	require.Len(t, st.Lanes[0].Handoffs, 1)
	require.Equal(t, commit, st.Lanes[0].Handoffs[0].Commit)
	require.Equal(t, wt, st.Lanes[0].Handoffs[0].Worktree)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Regexp(t, `handed\s+bug-fix\s+final\s+1 handed-off\s`, r.stdout)

	// prune keeps the only copy of the commit.
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "handed")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  kept worktree "+wt+": it holds handed-off commit "+commit+", which no branch or tag of "+s.checkout+" holds: the only copy; keep it with git -C "+s.checkout+" branch NAME "+commit+" (or merge it) and prune again, or pass --force to remove it\n")
	require.Equal(t, commit, sandboxGit(t, wt, "rev-parse", "HEAD"), "the worktree and its commit are still there")
	// Once a branch holds the commit, prune removes the worktree.
	sandboxGit(t, s.checkout, "branch", "checkpoint-c1", commit)
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "handed")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "run handed: removed 1 worktree(s)")
	require.NotContains(t, r.stdout, "kept worktree")
	_, err := os.Stat(wt)
	require.True(t, os.IsNotExist(err), "the worktree is gone: %v", err)
	require.Equal(t, commit, sandboxGit(t, s.checkout, "rev-parse", "checkpoint-c1"))
}

// TestPruneForceRemovesUnmergedHandoff: --force removes a worktree whose
// handed-off commit no branch holds, as it says it will.
func TestPruneForceRemovesUnmergedHandoff(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"claude": "handoff"}, `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
bug-fix: claude:opus@high
`)
	gitInit(t, s.checkout)
	args := s.runArgs("bug-fix", "--run-id", "forced", "--mode", "isolated-write", "--allow-unknown-quota", "claude")
	args[slices.Index(args, "--parent")+1] = "codex"
	p := s.start(t, args...)
	waitOutput(t, p, "waiting for the parent: switchyard inspect --run forced --lane 0")
	r := s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "forced", "--lane", "0", "--state", "clear", "--evidence", "notes/review.md")
	require.Equal(t, 0, r.code, r.stderr)
	waitOutput(t, p, "waiting for the parent: switchyard operation validate --run forced --lane 0")
	wt := s.laneWorktree(t, "forced", 0)
	commit := s.operateCLI(t, "forced", 0)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the operation")
	}
	out, errOut := p.output()
	require.Equal(t, 0, p.stop(t), "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "lane 0 bug-fix#1: handed-off commit "+commit+", then stopped: the sheet's # continuation does not resume a lane after a handoff (recorded reason no-continuation)")

	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "forced", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  kept worktree "+wt+": it holds handed-off commit "+commit)
	r = s.run(t, 30*time.Second, "prune", "--data-dir", s.data, "--run", "forced", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "run forced: removed 1 worktree(s)")
	_, err := os.Stat(wt)
	require.True(t, os.IsNotExist(err), "the worktree is gone: %v", err)
}
