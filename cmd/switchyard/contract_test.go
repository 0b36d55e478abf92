package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

func TestContractPrepareCLI(t *testing.T) {
	t.Parallel()
	r := runBinary(t, "contract", "prepare", "--parent", "claude", "--provider", "grok", "--route", "external", "--mode", "isolated-write")
	require.Equal(t, 0, r.code, r.stderr)
	want, err := providers.PrepareContract(providers.ContractRequest{Parent: policy.ParentClaude, Provider: policy.Grok,
		Route: providers.RouteExternal, Mode: policy.IsolatedWrite, Contract: policy.ContractLegacy})
	require.NoError(t, err)
	require.Equal(t, want, r.stdout)
	require.Contains(t, r.stdout, "The parent owns the\nrepository")
	require.True(t, strings.HasSuffix(r.stdout, "\nAssigned task:\n"))

	r = runBinary(t, "contract", "prepare", "--parent", "codex", "--provider", "codex", "--route", "native", "--mode", "read-only", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct{ Status, Route, Instructions string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, "ok", out.Status)
	require.Contains(t, out.Instructions, "output location assigned by the parent", "a native read-only lane writes only its own artifact")
	require.NotContains(t, out.Instructions, "the runner saves it")

	r = runBinary(t, "contract", "prepare", "--parent", "claude", "--provider", "claude", "--route", "native", "--mode", "isolated-write", "--contract", "strict", "--json")
	require.Equal(t, 79, r.code)
	require.Contains(t, r.stdout, `"status": "unsupported"`)
	require.Contains(t, r.stdout, `"processStarted": false`)
	require.Contains(t, r.stderr, "strict worker contract is unsupported")

	r = runBinary(t, "contract", "prepare", "--parent", "claude", "--provider", "grok", "--route", "native", "--mode", "read-only")
	require.Equal(t, 64, r.code)
	require.Contains(t, r.stderr, "a claude parent has no native route to grok workers: use --route external")

	r = runBinary(t, "contract", "prepare", "--parent", "claude", "--provider", "claude", "--route", "native")
	require.Equal(t, 64, r.code)
	require.Contains(t, r.stderr, "missing required option --mode")
}

func TestContractInterpretCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	r := runBinary(t, "contract", "interpret", "--response", file("done.md", "All done; go test passed.\n"))
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"verdict":"complete"}`, r.stdout)

	r = runBinary(t, "contract", "interpret", "--response", file("handoff.md", "Edited.\n```pstack-handoff\n"+
		`{"task":"T","checkpoint":"C","operation":"run-checks","files":[],"checks":["unit"],"summary":"run unit"}`+"\n```\n"))
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"verdict":"needs-parent-operation","handoff":{"task":"T","checkpoint":"C","operation":"run-checks","files":[],"checks":["unit"],"summary":"run unit"}}`, r.stdout)

	r = runBinary(t, "contract", "interpret", "--response", file("trunc.md", "Edited.\n```pstack-handoff\n{\"task\":"))
	require.Equal(t, 65, r.code)
	require.Contains(t, r.stdout, `"verdict": "malformed-output"`)
	require.Contains(t, r.stderr, "truncated")

	r = runBinary(t, "contract", "interpret", "--response", filepath.Join(dir, "missing.md"))
	require.Equal(t, 64, r.code)
}

// cliRepo makes a real repository with a deterministic first commit and
// returns it with its HEAD.
func cliRepo(t *testing.T) (string, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo := filepath.Join(base, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "src"), 0o755))
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=P", "GIT_AUTHOR_EMAIL=p@example.com", "GIT_COMMITTER_NAME=P", "GIT_COMMITTER_EMAIL=p@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "src/a.go"), []byte("package a\n"), 0o644))
	git("add", "--", "src/a.go")
	git("commit", "-q", "-m", "base")
	return repo, git("rev-parse", "HEAD")
}

func TestContractOpValidateCLI(t *testing.T) {
	t.Parallel()
	repo, head := cliRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "src/a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))
	resp := filepath.Join(t.TempDir(), "final.md")
	require.NoError(t, os.WriteFile(resp, []byte("Added A.\n```pstack-handoff\n"+
		`{"task":"T-42","checkpoint":"C-1","operation":"commit-checkpoint","files":["src/a.go"],"checks":["unit"],"summary":"commit A"}`+"\n```\n"), 0o644))
	args := []string{"contract", "op-validate", "--response", resp, "--repo", repo, "--task", "T-42", "--checkpoint", "C-1",
		"--expected-head", head, "--file", "src/a.go", "--check", "unit"}
	r := runBinary(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	var v struct {
		Valid  bool
		Digest string
		Head   string
		Files  []struct{ Path, Mode string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	require.True(t, v.Valid)
	require.Len(t, v.Digest, 64)
	require.Equal(t, head, v.Head)
	require.Equal(t, "src/a.go", v.Files[0].Path)

	// A hardlink escape is refused: exit 65, JSON valid:false.
	require.NoError(t, os.Link(filepath.Join(repo, "src/a.go"), filepath.Join(filepath.Dir(repo), "outside.go")))
	r = runBinary(t, args...)
	require.Equal(t, 65, r.code)
	require.Contains(t, r.stdout, `"valid": false`)
	require.Contains(t, r.stderr, "hard links")

	r = runBinary(t, append(args[:len(args)-4:len(args)-4], "--expected-head", head[:7])...)
	require.Equal(t, 64, r.code)
	require.Contains(t, r.stderr, "--expected-head")
}

// TestContractLedgerCLI drives the ledger through the binary: two parent
// processes race to reserve one identity and exactly one wins; op-status
// shows the pending operation until it is settled.
func TestContractLedgerCLI(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "ops.json")
	r := runBinary(t, "contract", "op-status", "--ledger", ledger)
	require.Equal(t, 64, r.code)
	require.Contains(t, r.stderr, "does not exist")

	reserve := func(id string) []string {
		return []string{"contract", "op-record", "--ledger", ledger, "--id", id, "--task", "T-42", "--checkpoint", "C-1",
			"--kind", "commit-checkpoint", "--state", "pending", "--expected", `{"digest":"d1","head":"h1"}`}
	}
	codes := make([]int, 4)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = runBinary(t, reserve("op-"+string(rune('a'+i)))...).code
		}()
	}
	wg.Wait()
	wins := 0
	for _, c := range codes {
		require.Contains(t, []int{0, 65}, c)
		if c == 0 {
			wins++
		}
	}
	require.Equal(t, 1, wins, "exactly one racing parent reserves the operation: %v", codes)

	r = runBinary(t, "contract", "op-status", "--ledger", ledger, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		Pending []struct{ ID, State string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.Len(t, st.Pending, 1)
	id := st.Pending[0].ID

	r = runBinary(t, "contract", "op-status", "--ledger", ledger)
	require.Contains(t, r.stdout, "1 pending")
	require.Contains(t, r.stdout, "inspect the repository")

	r = runBinary(t, "contract", "op-record", "--ledger", ledger, "--id", id, "--task", "T-42", "--checkpoint", "C-1",
		"--kind", "commit-checkpoint", "--state", "complete")
	require.Equal(t, 64, r.code, "complete needs --result")
	r = runBinary(t, "contract", "op-record", "--ledger", ledger, "--id", id, "--task", "T-42", "--checkpoint", "C-1",
		"--kind", "commit-checkpoint", "--state", "complete", "--result", `{"commit":"abc"}`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"state": "complete"`)
	r = runBinary(t, "contract", "op-status", "--ledger", ledger)
	require.Contains(t, r.stdout, "0 pending")
}
