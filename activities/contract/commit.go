package contract

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// CommitCheck is a commit-checkpoint a parent says it made for a pending
// operation, checked against the pending record.
type CommitCheck struct {
	Repo      string // the worktree the operation was begun in.
	Commit    string // the commit the parent made (any revision git resolves).
	Head      string // the pending record's HEAD: the commit's only parent.
	Operation string
	Checks    []string
	Files     []string
	Digest    string // the pending record's digest.
}

// VerifyCommit checks that the parent's commit is exactly the pending
// checkpoint: the worktree's HEAD, whose only parent is the pending HEAD,
// changing only the pending files, and recording them with the modes and
// contents the digest was computed over. It returns the full commit id. A
// mismatch is a *Refusal.
func VerifyCommit(ctx context.Context, c CommitCheck) (string, error) {
	repo, err := canonicalRepo(ctx, c.Repo)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(c.Commit, "-") || strings.TrimSpace(c.Commit) == "" {
		return "", refusef("--ref %q is not a commit", c.Commit)
	}
	full, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", c.Commit+"^{commit}")
	if err != nil {
		return "", refusef("--ref %q is not a commit of %s: %v", c.Commit, repo, err)
	}
	head, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return "", refusef("the worktree has no readable HEAD commit: %v", err)
	}
	if head != full {
		return "", refusef("the worktree's HEAD is %s, not the commit %s", head, full)
	}
	parents, err := git(ctx, repo, "rev-list", "--parents", "-n", "1", full)
	if err != nil {
		return "", err
	}
	if f := strings.Fields(parents); len(f) != 2 || f[1] != c.Head {
		return "", refusef("commit %s does not have exactly one parent %s (the HEAD the operation was begun at)", full, c.Head)
	}
	changed, err := git(ctx, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", c.Head, full)
	if err != nil {
		return "", err
	}
	for _, p := range strings.Split(changed, "\x00") {
		if p != "" && !slices.Contains(c.Files, p) {
			return "", refusef("commit %s changes %q, which the pending operation does not cover", full, p)
		}
	}
	files := make([]DigestFile, 0, len(c.Files))
	for _, p := range c.Files {
		entry, err := git(ctx, repo, "ls-tree", "-z", full, "--", p)
		if err != nil {
			return "", err
		}
		meta, path, ok := strings.Cut(strings.TrimSuffix(entry, "\x00"), "\t")
		f := strings.Fields(meta)
		if !ok || path != p || len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			return "", refusef("commit %s does not record %q as a regular file", full, p)
		}
		content, err := gitBytes(ctx, repo, "cat-file", "blob", f[2])
		if err != nil {
			return "", err
		}
		files = append(files, DigestFile{Path: p, Mode: f[0], Content: content})
	}
	if d := Digest(c.Head, c.Operation, c.Checks, files); d != c.Digest {
		return "", refusef("commit %s records checkpoint digest %s, not the pending %s: the committed files differ from the validated ones", full, d, c.Digest)
	}
	return full, nil
}

// gitBytes is git with its untrimmed standard output.
func gitBytes(ctx context.Context, repo string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-C", repo}, args...)...)
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
