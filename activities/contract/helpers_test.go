package contract

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitTestEnv pins identity and dates so a test repository's commits have
// the same ids on every machine (the digest golden depends on HEAD).
func gitTestEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_AUTHOR_NAME=Parent", "GIT_AUTHOR_EMAIL=parent@example.com", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z",
		"GIT_COMMITTER_NAME=Parent", "GIT_COMMITTER_EMAIL=parent@example.com", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+os.TempDir())
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Env = gitTestEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// newRepo makes a real repository in a canonical temporary directory with
// one commit: README.md, src/a.txt and run.sh (executable).
func newRepo(t *testing.T) (repo, head string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo = filepath.Join(base, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "src"), 0o755))
	runGit(t, repo, "init", "-q")
	write(t, repo, "README.md", "readme\n", 0o644)
	write(t, repo, "src/a.txt", "alpha\n", 0o644)
	write(t, repo, "run.sh", "#!/bin/sh\necho run\n", 0o755)
	runGit(t, repo, "add", "--", "README.md", "src/a.txt", "run.sh")
	runGit(t, repo, "commit", "-q", "-m", "base")
	return repo, runGit(t, repo, "rev-parse", "HEAD")
}

func write(t *testing.T, repo, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(repo, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
}

// handoffResponse is a final response ending with a handoff block.
func handoffResponse(task, checkpoint, op, filesJSON, checksJSON string) []byte {
	return []byte("I changed src/a.txt and ran the unit tests: 12 passed.\n\n```pstack-handoff\n" +
		`{"task":"` + task + `","checkpoint":"` + checkpoint + `","operation":"` + op + `","files":` + filesJSON +
		`,"checks":` + checksJSON + `,"summary":"commit the parser fix"}` + "\n```\n")
}
