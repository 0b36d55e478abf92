package contract

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// baseRequest validates a commit-checkpoint of src/a.txt and run.sh with
// check "unit" in repo at head.
func baseRequest(repo, head string) ValidateRequest {
	return ValidateRequest{
		Response: handoffResponse("T-1", "C-1", "commit-checkpoint", `["src/a.txt","run.sh"]`, `["unit"]`),
		Repo:     repo, Task: "T-1", Checkpoint: "C-1", ExpectedHead: head,
		Files: []string{"run.sh", "src/a.txt", "README.md"}, Checks: []string{"unit", "lint"},
	}
}

// TestValidateDigestGolden pins the checkpoint digest of a fixed
// repository and recomputes it from the framing docs/CONTRACT.md
// documents, written out byte by byte here as a second implementation.
func TestValidateDigestGolden(t *testing.T) {
	t.Parallel()
	repo, head := newRepo(t)
	require.Equal(t, "0f848e97e8437ab55e133a19a5587045a9daaaa8", head, "the pinned commit depends on fixed identity and dates")
	write(t, repo, "src/a.txt", "alpha, fixed\n", 0o644)

	v, err := Validate(context.Background(), baseRequest(repo, head))
	require.NoError(t, err)
	require.True(t, v.Valid)
	require.Equal(t, head, v.Head)
	require.Equal(t, repo, v.Repo)
	require.Equal(t, []ValidatedFile{
		{Path: "run.sh", Mode: "100755", Size: 19, SHA256: sha256Hex("#!/bin/sh\necho run\n")},
		{Path: "src/a.txt", Mode: "100644", Size: 13, SHA256: sha256Hex("alpha, fixed\n")},
	}, v.Files)
	require.Equal(t, []string{"unit"}, v.Checks)

	var b []byte
	u64 := func(n int) { b = binary.BigEndian.AppendUint64(b, uint64(n)) }
	str := func(s string) { u64(len(s)); b = append(b, s...) }
	str("switchyard-checkpoint-digest/v1")
	str(head)
	str("commit-checkpoint")
	u64(1)
	str("unit")
	u64(2)
	str("run.sh")
	str("100755")
	str("#!/bin/sh\necho run\n")
	str("src/a.txt")
	str("100644")
	str("alpha, fixed\n")
	sum := sha256.Sum256(b)
	require.Equal(t, hex.EncodeToString(sum[:]), v.Digest, "the digest follows the documented framing")
	require.Equal(t, "becbe687a36ce14a227fcf92ec2c3b5694d17f49ddb900a3e26a86c6b576e9a7", v.Digest, "golden digest")

	// Any change of content or mode changes the digest.
	write(t, repo, "src/a.txt", "alpha, fixed!\n", 0o644)
	v2, err := Validate(context.Background(), baseRequest(repo, head))
	require.NoError(t, err)
	require.NotEqual(t, v.Digest, v2.Digest)
	write(t, repo, "src/a.txt", "alpha, fixed\n", 0o755)
	v3, err := Validate(context.Background(), baseRequest(repo, head))
	require.NoError(t, err)
	require.NotEqual(t, v.Digest, v3.Digest)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestValidateLinkedWorktree(t *testing.T) {
	t.Parallel()
	repo, head := newRepo(t)
	wt := filepath.Join(filepath.Dir(repo), "wt")
	runGit(t, repo, "worktree", "add", "-q", "--detach", wt, head)
	write(t, wt, "src/a.txt", "from the worktree\n", 0o644)
	v, err := Validate(context.Background(), baseRequest(wt, head))
	require.NoError(t, err)
	require.Equal(t, wt, v.Repo)
	require.Equal(t, sha256Hex("from the worktree\n"), v.Files[1].SHA256)
}

// TestValidateRefuses proves each fail-closed case with a real repository:
// the handoff is refused with a reason that names the problem.
func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, repo, head string, r *ValidateRequest)
		want  string
	}{
		{"ordinary completion", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = []byte("done\n")
		}, "ordinary completion"},
		{"malformed block", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = append(r.Response, r.Response...)
		}, "fails closed"},
		{"other task", func(t *testing.T, repo, head string, r *ValidateRequest) { r.Task = "T-2" }, `is not the assigned task "T-2"`},
		{"other checkpoint", func(t *testing.T, repo, head string, r *ValidateRequest) { r.Checkpoint = "C-0" }, "is not the assigned checkpoint"},
		{"file not allowed", func(t *testing.T, repo, head string, r *ValidateRequest) { r.Files = []string{"src/a.txt"} }, `"run.sh" is not an allowed file`},
		{"check not allowed", func(t *testing.T, repo, head string, r *ValidateRequest) { r.Checks = []string{"lint"} }, `check "unit" is not an allowed check`},
		{"head moved", func(t *testing.T, repo, head string, r *ValidateRequest) {
			write(t, repo, "README.md", "moved\n", 0o644)
			runGit(t, repo, "commit", "-q", "-am", "moved")
		}, "HEAD moved"},
		{"symlink file", func(t *testing.T, repo, head string, r *ValidateRequest) {
			outside := filepath.Join(filepath.Dir(repo), "secret")
			require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(repo, "src/a.txt")))
			require.NoError(t, os.Symlink(outside, filepath.Join(repo, "src/a.txt")))
		}, `"src/a.txt" is a symlink`},
		{"symlinked directory", func(t *testing.T, repo, head string, r *ValidateRequest) {
			outside := filepath.Join(filepath.Dir(repo), "elsewhere")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "a.txt"), []byte("x"), 0o644))
			require.NoError(t, os.RemoveAll(filepath.Join(repo, "src")))
			require.NoError(t, os.Symlink(outside, filepath.Join(repo, "src")))
		}, "src is a symlink"},
		{"hardlink", func(t *testing.T, repo, head string, r *ValidateRequest) {
			require.NoError(t, os.Link(filepath.Join(repo, "src/a.txt"), filepath.Join(filepath.Dir(repo), "hard")))
		}, "has 2 hard links"},
		{".git path", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = handoffResponse("T-1", "C-1", "commit-checkpoint", `[".git/config"]`, `[]`)
		}, "not a repository-relative path"},
		{"case-folded .git path", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = handoffResponse("T-1", "C-1", "commit-checkpoint", `[".GIT/config"]`, `[]`)
			r.Files = append(r.Files, "src/x")
		}, "outside .git"},
		{"outside the repository", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = handoffResponse("T-1", "C-1", "commit-checkpoint", `["../secret"]`, `[]`)
		}, "not a repository-relative path"},
		{"nested repository", func(t *testing.T, repo, head string, r *ValidateRequest) {
			runGit(t, filepath.Join(repo, "src"), "init", "-q")
		}, "src is another Git repository"},
		{"missing file", func(t *testing.T, repo, head string, r *ValidateRequest) {
			require.NoError(t, os.Remove(filepath.Join(repo, "run.sh")))
		}, `file "run.sh"`},
		{"directory", func(t *testing.T, repo, head string, r *ValidateRequest) {
			require.NoError(t, os.Remove(filepath.Join(repo, "run.sh")))
			require.NoError(t, os.Mkdir(filepath.Join(repo, "run.sh"), 0o755))
		}, "is a directory"},
		{"non-canonical repo path", func(t *testing.T, repo, head string, r *ValidateRequest) {
			link := filepath.Join(filepath.Dir(repo), "link")
			require.NoError(t, os.Symlink(repo, link))
			r.Repo = link
		}, "is not canonical"},
		{"subdirectory", func(t *testing.T, repo, head string, r *ValidateRequest) { r.Repo = filepath.Join(repo, "src") }, "not the worktree's top level"},
		{"core.worktree", func(t *testing.T, repo, head string, r *ValidateRequest) {
			runGit(t, repo, "config", "core.worktree", repo)
		}, "core.worktree is set"},
		{"alternates", func(t *testing.T, repo, head string, r *ValidateRequest) {
			require.NoError(t, os.WriteFile(filepath.Join(repo, ".git/objects/info/alternates"), []byte("/tmp/x\n"), 0o644))
		}, "alternates"},
		{"symlinked .git", func(t *testing.T, repo, head string, r *ValidateRequest) {
			moved := filepath.Join(filepath.Dir(repo), "moved.git")
			require.NoError(t, os.Rename(filepath.Join(repo, ".git"), moved))
			require.NoError(t, os.Symlink(moved, filepath.Join(repo, ".git")))
		}, ".git"},
		{"gitdir file pointing at another repository", func(t *testing.T, repo, head string, r *ValidateRequest) {
			moved := filepath.Join(filepath.Dir(repo), "moved.git")
			require.NoError(t, os.Rename(filepath.Join(repo, ".git"), moved))
			require.NoError(t, os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: "+moved+"\n"), 0o644))
		}, "is not a worktree record"},
		{"run-checks without checks", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = handoffResponse("T-1", "C-1", "run-checks", `[]`, `[]`)
		}, "names no check"},
		{"file named twice", func(t *testing.T, repo, head string, r *ValidateRequest) {
			r.Response = handoffResponse("T-1", "C-1", "commit-checkpoint", `["run.sh","run.sh"]`, `[]`)
		}, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo, head := newRepo(t)
			r := baseRequest(repo, head)
			c.setup(t, repo, head, &r)
			v, err := Validate(context.Background(), r)
			require.Nil(t, v)
			require.Error(t, err)
			require.True(t, IsRefusal(err), "refusal, not an operational error: %v", err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestValidateUsage(t *testing.T) {
	t.Parallel()
	repo, head := newRepo(t)
	for name, mut := range map[string]func(*ValidateRequest){
		"short head":  func(r *ValidateRequest) { r.ExpectedHead = head[:12] },
		"upper head":  func(r *ValidateRequest) { r.ExpectedHead = "ABCDEF" + head[6:] },
		"blank task":  func(r *ValidateRequest) { r.Task = " " },
		"bad --file":  func(r *ValidateRequest) { r.Files = []string{"../x"} },
		"git --file":  func(r *ValidateRequest) { r.Files = []string{".git/HEAD"} },
		"blank check": func(r *ValidateRequest) { r.Checks = []string{""} },
	} {
		r := baseRequest(repo, head)
		mut(&r)
		_, err := Validate(context.Background(), r)
		require.Error(t, err, name)
		require.False(t, IsRefusal(err), name)
	}
}
