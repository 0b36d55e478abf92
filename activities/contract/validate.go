package contract

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// MaxFileSize bounds one file of a checkpoint; a larger file is refused.
const MaxFileSize = 64 << 20

// Refusal is a handoff op-validate refuses: the reason names the bad input.
// It is the fail-closed answer, distinct from an I/O or usage failure.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

func refusef(format string, a ...any) error {
	return &Refusal{Reason: fmt.Sprintf(format, a...)}
}

// IsRefusal reports whether err is a *Refusal.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}

// ValidateRequest is op-validate's input: the worker's final response and
// the parent's own assignment.
type ValidateRequest struct {
	Response     []byte
	Repo         string // the canonical worktree the worker wrote in.
	Task         string
	Checkpoint   string
	ExpectedHead string
	Files        []string // allowed repository-relative files.
	Checks       []string // allowed check ids.
}

// ValidatedFile is one approved file of a validated handoff.
type ValidatedFile struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Validation is a handoff op-validate accepted: its scope and digest.
type Validation struct {
	Valid      bool                 `json:"valid"`
	Digest     string               `json:"digest"`
	Head       string               `json:"head"`
	Repo       string               `json:"repo"`
	Task       string               `json:"task"`
	Checkpoint string               `json:"checkpoint"`
	Operation  policy.OperationKind `json:"operation"`
	Files      []ValidatedFile      `json:"files"`
	Checks     []string             `json:"checks"`
	Summary    string               `json:"summary"`
}

// CheckRequest reports a usage problem in the parent's own arguments (not
// the worker's handoff): missing scope, a malformed expected HEAD or an
// allowed file that is no repository-relative path.
func CheckRequest(r ValidateRequest) error {
	switch {
	case strings.TrimSpace(r.Task) == "":
		return policy.Usagef("--task must be the assigned task id")
	case strings.TrimSpace(r.Checkpoint) == "":
		return policy.Usagef("--checkpoint must be the assigned checkpoint id")
	case !fullSHA(r.ExpectedHead):
		return policy.Usagef("--expected-head %q: want the full lowercase commit id (40 or 64 hex digits), e.g. from git rev-parse HEAD", r.ExpectedHead)
	case strings.TrimSpace(r.Repo) == "":
		return policy.Usagef("--repo must name the worktree the worker wrote in")
	}
	for _, f := range r.Files {
		if !safeRepoPath(f) {
			return policy.Usagef("--file %q: want a clean repository-relative path with no .git segment", f)
		}
	}
	for _, c := range r.Checks {
		if strings.TrimSpace(c) == "" || strings.ContainsAny(c, "\x00\r\n") {
			return policy.Usagef("--check %q: want a non-blank single-line check id", c)
		}
	}
	return nil
}

func fullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// safeRepoPath is the handoff parser's repository-relative path rule plus
// a case-insensitive .git segment ban (a case-folding filesystem maps
// ".GIT" onto the metadata).
func safeRepoPath(p string) bool {
	if !providers.RepoRelativePath(p) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.EqualFold(strings.TrimRight(seg, ". "), ".git") {
			return false
		}
	}
	return true
}

// Validate checks a handoff before the parent acts on it: one well-formed
// handoff whose task and checkpoint are exactly the assignment's, whose
// files and checks are within the allowed sets, in a worktree with
// canonical Git metadata at exactly the expected HEAD, naming only
// regular, singly linked files reached without a symlink and outside any
// Git metadata. It returns the checkpoint digest. A refused handoff is a
// *Refusal; git or I/O trouble is another error.
func Validate(ctx context.Context, r ValidateRequest) (*Validation, error) {
	if err := CheckRequest(r); err != nil {
		return nil, err
	}
	v := Interpret(r.Response)
	switch v.Verdict {
	case VerdictComplete:
		return nil, refusef("the final response carries no pstack-handoff block: it is an ordinary completion, not a request for a parent operation")
	case VerdictMalformed:
		return nil, refusef("the final response fails closed: %s", v.Error)
	}
	h := v.Handoff
	if h.Task != r.Task {
		return nil, refusef("handoff task %q is not the assigned task %q", providers.CapText(h.Task, 100), r.Task)
	}
	if h.Checkpoint != r.Checkpoint {
		return nil, refusef("handoff checkpoint %q is not the assigned checkpoint %q", providers.CapText(h.Checkpoint, 100), r.Checkpoint)
	}
	if err := withinScope(h, r); err != nil {
		return nil, err
	}
	repo, err := canonicalRepo(ctx, r.Repo)
	if err != nil {
		return nil, err
	}
	head, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return nil, refusef("the worktree has no readable HEAD commit: %v", err)
	}
	if head != r.ExpectedHead {
		return nil, refusef("HEAD moved: the worktree is at %s, the assignment expects %s", head, r.ExpectedHead)
	}
	files := make([]DigestFile, 0, len(h.Files))
	out := &Validation{
		Valid: true, Head: head, Repo: repo, Task: h.Task, Checkpoint: h.Checkpoint,
		Operation: h.Operation, Files: []ValidatedFile{}, Checks: append([]string{}, slices.Sorted(slices.Values(h.Checks))...), Summary: h.Summary,
	}
	sorted := slices.Sorted(slices.Values(h.Files))
	for _, p := range sorted {
		f, err := readRepoFile(repo, p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		sum := sha256.Sum256(f.Content)
		out.Files = append(out.Files, ValidatedFile{Path: p, Mode: f.Mode, Size: int64(len(f.Content)), SHA256: hex.EncodeToString(sum[:])})
	}
	out.Digest = Digest(head, string(h.Operation), h.Checks, files)
	return out, nil
}

// withinScope checks the handoff's files and checks against the parent's
// allowed sets: each named once, each allowed, and something to operate on.
func withinScope(h *policy.ReceiptHandoff, r ValidateRequest) error {
	seen := map[string]bool{}
	for _, f := range h.Files {
		if seen[f] {
			return refusef("handoff names file %q twice", f)
		}
		seen[f] = true
		if !safeRepoPath(f) {
			return refusef("handoff file %q is not a clean repository-relative path outside .git", providers.CapText(f, 100))
		}
		if !slices.Contains(r.Files, f) {
			return refusef("handoff file %q is not an allowed file (pass --file %q only if the assignment allows it)", providers.CapText(f, 100), providers.CapText(f, 100))
		}
	}
	seen = map[string]bool{}
	for _, c := range h.Checks {
		if seen[c] {
			return refusef("handoff names check %q twice", c)
		}
		seen[c] = true
		if !slices.Contains(r.Checks, c) {
			return refusef("handoff check %q is not an allowed check id", providers.CapText(c, 100))
		}
	}
	switch {
	case h.Operation == policy.OpCommitCheckpoint && len(h.Files) == 0:
		return refusef("a commit-checkpoint handoff names no file to commit")
	case h.Operation == policy.OpRunChecks && len(h.Checks) == 0:
		return refusef("a run-checks handoff names no check to run")
	}
	return nil
}

// gitEnv is the environment git runs in: the parent's, without any GIT_*
// variable (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, alternates...) that
// could point git at other metadata, and without optional lock writes.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0")
}

// git runs a read-only git command in repo with fsmonitor off (a worker
// could have configured it to run a program) and returns its trimmed
// standard output.
func git(ctx context.Context, repo string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-C", repo}, args...)...)
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300]
		}
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// canonicalRepo checks that dir is the canonical top level of a non-bare
// Git worktree whose metadata is where Git puts it: dir/.git is a real
// directory (an ordinary repository) or a regular file pointing at
// <common>/worktrees/<name> whose back-pointer names dir/.git (a linked
// worktree); no core.worktree, no object alternates. It returns dir's
// canonical absolute path.
func canonicalRepo(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolve --repo %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", refusef("--repo %s: %v", dir, err)
	}
	if real != abs {
		return "", refusef("--repo %s is not canonical: it resolves to %s; pass the canonical worktree path", dir, real)
	}
	out, err := git(ctx, real, "rev-parse", "--is-bare-repository", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		return "", refusef("--repo %s is not a Git worktree: %v", dir, err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 4 {
		return "", refusef("--repo %s: git rev-parse answered %d lines, want 4", dir, len(lines))
	}
	if lines[0] != "false" {
		return "", refusef("--repo %s is a bare repository", dir)
	}
	if lines[1] != real {
		return "", refusef("--repo %s is not the worktree's top level %s", dir, lines[1])
	}
	gitDir := lines[2]
	common := lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(real, common)
	}
	if common, err = filepath.EvalSymlinks(common); err != nil {
		return "", refusef("--repo %s: the common Git directory does not resolve: %v", dir, err)
	}
	if gitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
		return "", refusef("--repo %s: the Git directory does not resolve: %v", dir, err)
	}
	dotGit := filepath.Join(real, ".git")
	st, err := os.Lstat(dotGit)
	if err != nil {
		return "", refusef("--repo %s has no .git entry: %v", dir, err)
	}
	switch {
	case st.IsDir():
		if gitDir != dotGit || common != dotGit {
			return "", refusef("--repo %s: Git metadata is at %s, not its own .git directory", dir, gitDir)
		}
	case st.Mode().IsRegular():
		if err := linkedWorktree(real, dotGit, gitDir, common); err != nil {
			return "", err
		}
	default:
		return "", refusef("--repo %s: .git is a %s, not a directory or a gitdir file", dir, fileKind(st.Mode()))
	}
	if v, err := git(ctx, real, "config", "--get", "core.worktree"); err == nil {
		return "", refusef("--repo %s: core.worktree is set to %q; canonical metadata has none", dir, v)
	}
	if _, err := os.Lstat(filepath.Join(common, "objects", "info", "alternates")); err == nil {
		return "", refusef("--repo %s: the repository borrows objects through objects/info/alternates", dir)
	}
	return real, nil
}

// linkedWorktree checks a .git file: "gitdir: <abs>" naming gitDir, which
// lies in <common>/worktrees/ and points back at dotGit.
func linkedWorktree(repo, dotGit, gitDir, common string) error {
	b, err := readSmall(dotGit)
	if err != nil {
		return refusef("--repo %s: read .git: %v", repo, err)
	}
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\n"), "gitdir: ")
	if !ok || strings.ContainsAny(target, "\n\x00") {
		return refusef("--repo %s: .git is not a one-line gitdir file", repo)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(repo, target)
	}
	if t, err := filepath.EvalSymlinks(target); err != nil || t != gitDir {
		return refusef("--repo %s: .git points at %s, which is not the Git directory %s", repo, target, gitDir)
	}
	if filepath.Dir(gitDir) != filepath.Join(common, "worktrees") {
		return refusef("--repo %s: Git directory %s is not a worktree record of %s", repo, gitDir, common)
	}
	back, err := readSmall(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return refusef("--repo %s: the worktree record has no back-pointer: %v", repo, err)
	}
	if strings.TrimRight(string(back), "\n") != dotGit {
		return refusef("--repo %s: the worktree record points back at %s, not %s", repo, strings.TrimSpace(string(back)), dotGit)
	}
	if strings.HasPrefix(gitDir, repo+string(filepath.Separator)) {
		return refusef("--repo %s: the Git directory %s lies inside the worktree", repo, gitDir)
	}
	return nil
}

func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4096))
}

// readRepoFile reads one approved file: every directory on the way is a
// real directory (no symlink) that is not another repository, the file is
// a regular file with exactly one link, opened without following a
// symlink and still the same inode when read.
func readRepoFile(repo, rel string) (DigestFile, error) {
	segs := strings.Split(rel, "/")
	dir := repo
	for _, seg := range segs[:len(segs)-1] {
		dir = filepath.Join(dir, seg)
		st, err := os.Lstat(dir)
		if err != nil {
			return DigestFile{}, refusef("file %q: %v", rel, trimPathErr(err))
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return DigestFile{}, refusef("file %q: %s is a symlink; a checkpoint file is reached through real directories only", rel, strings.TrimPrefix(dir, repo+"/"))
		}
		if !st.IsDir() {
			return DigestFile{}, refusef("file %q: %s is not a directory", rel, strings.TrimPrefix(dir, repo+"/"))
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return DigestFile{}, refusef("file %q: %s is another Git repository", rel, strings.TrimPrefix(dir, repo+"/"))
		}
	}
	path := filepath.Join(repo, rel)
	st, err := os.Lstat(path)
	if err != nil {
		return DigestFile{}, refusef("file %q: %v", rel, trimPathErr(err))
	}
	if !st.Mode().IsRegular() {
		return DigestFile{}, refusef("file %q is a %s, not a regular file", rel, fileKind(st.Mode()))
	}
	if n := nlink(st); n != 1 {
		return DigestFile{}, refusef("file %q has %d hard links; a checkpoint file must have exactly one", rel, n)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return DigestFile{}, refusef("file %q: %v", rel, trimPathErr(err))
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return DigestFile{}, fmt.Errorf("file %q: %w", rel, err)
	}
	if !os.SameFile(st, fst) || !fst.Mode().IsRegular() || nlink(fst) != 1 {
		return DigestFile{}, refusef("file %q changed while it was being validated", rel)
	}
	if fst.Size() > MaxFileSize {
		return DigestFile{}, refusef("file %q is %d bytes, over the %d-byte checkpoint file limit", rel, fst.Size(), MaxFileSize)
	}
	content, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return DigestFile{}, fmt.Errorf("file %q: %w", rel, err)
	}
	if len(content) > MaxFileSize {
		return DigestFile{}, refusef("file %q is over the %d-byte checkpoint file limit", rel, MaxFileSize)
	}
	mode := "100644"
	if fst.Mode().Perm()&0o100 != 0 {
		mode = "100755"
	}
	return DigestFile{Path: rel, Mode: mode, Content: content}, nil
}

func nlink(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// trimPathErr drops the absolute path from an *os.PathError so the
// message names the repository-relative file only once.
func trimPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
