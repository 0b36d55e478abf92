package contract

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerifyCommit proves a succeeded commit-checkpoint is accepted only
// when the commit records exactly the validated checkpoint on top of the
// validated HEAD.
func TestVerifyCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (string, string, *Validation) {
		repo, head := newRepo(t)
		write(t, repo, "src/a.txt", "alpha, fixed\n", 0o644)
		v, err := Validate(ctx, baseRequest(repo, head))
		require.NoError(t, err)
		return repo, head, v
	}
	check := func(repo, head, commit string, v *Validation) CommitCheck {
		return CommitCheck{Repo: repo, Commit: commit, Head: head, Operation: string(v.Operation), Checks: v.Checks,
			Files: []string{"run.sh", "src/a.txt"}, Digest: v.Digest}
	}

	repo, head, v := setup(t)
	runGit(t, repo, "add", "--", "src/a.txt", "run.sh")
	runGit(t, repo, "commit", "-q", "-m", "checkpoint")
	commit := runGit(t, repo, "rev-parse", "HEAD")
	got, err := VerifyCommit(ctx, check(repo, head, "HEAD", v))
	require.NoError(t, err)
	require.Equal(t, commit, got)

	for name, c := range map[string]struct {
		mutate func(t *testing.T, repo string)
		want   string
	}{
		"an extra file": {func(t *testing.T, repo string) {
			write(t, repo, "README.md", "also changed\n", 0o644)
			runGit(t, repo, "commit", "-q", "-am", "checkpoint plus")
		}, `changes "README.md"`},
		"other content": {func(t *testing.T, repo string) {
			write(t, repo, "src/a.txt", "something else\n", 0o644)
			runGit(t, repo, "commit", "-q", "-am", "other")
		}, "the committed files differ"},
		"other mode": {func(t *testing.T, repo string) {
			write(t, repo, "src/a.txt", "alpha, fixed\n", 0o755)
			runGit(t, repo, "commit", "-q", "-am", "mode")
		}, "the committed files differ"},
		"two commits": {func(t *testing.T, repo string) {
			runGit(t, repo, "add", "--", "src/a.txt")
			runGit(t, repo, "commit", "-q", "-m", "one")
			write(t, repo, "run.sh", "#!/bin/sh\necho run\n", 0o755)
			runGit(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
		}, "exactly one parent"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			repo, head, v := setup(t)
			c.mutate(t, repo)
			_, err := VerifyCommit(ctx, check(repo, head, "HEAD", v))
			require.True(t, IsRefusal(err), "%v", err)
			require.ErrorContains(t, err, c.want)
		})
	}

	repo, head, v = setup(t)
	runGit(t, repo, "commit", "-q", "-am", "checkpoint")
	runGit(t, repo, "checkout", "-q", "--detach", head)
	_, err = VerifyCommit(ctx, check(repo, head, "main", v))
	require.ErrorContains(t, err, "the worktree's HEAD is")
}
