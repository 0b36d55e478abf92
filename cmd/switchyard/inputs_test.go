package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests of the commands' input checks: bad input is refused before
// anything is created, runs are named by a unique prefix, lanes are checked
// against the run's range, and every missing option is named at once.

// requireNoDataDir asserts the sandbox's data directory was never created.
func requireNoDataDir(t *testing.T, s *engineSandbox) {
	t.Helper()
	_, err := os.Stat(s.data)
	require.True(t, os.IsNotExist(err), "the data directory was created: %v", err)
}

// TestRunRefusesBadInputBeforeStarting: an empty prompt, a writer run
// outside a git work tree, a repository without a commit, and a --run-id
// that exists are refused with exit 64 and a message naming the input and
// the fix, before any server starts or any directory is made.
func TestRunRefusesBadInputBeforeStarting(t *testing.T) {
	t.Parallel()
	t.Run("empty prompt", func(t *testing.T) {
		t.Parallel()
		s := newEngineSandbox(t, nil, singleLaneSheet)
		require.NoError(t, os.WriteFile(s.prompt, []byte(" \n\t\n"), 0o600))
		r := s.run(t, 30*time.Second, s.runArgs("hillclimb")...)
		require.Equal(t, 64, r.code, r.stdout)
		require.Empty(t, r.stdout)
		require.Equal(t, "error: --prompt "+s.prompt+" is empty; write the task every attempt receives into it\n"+
			"Run 'switchyard run --help' for usage and examples.\n", r.stderr)
		requireNoDataDir(t, s)
	})
	t.Run("writer outside a git work tree", func(t *testing.T) {
		t.Parallel()
		s := newEngineSandbox(t, nil, singleLaneSheet)
		r := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--mode", "isolated-write")...)
		require.Equal(t, 64, r.code, r.stdout)
		require.Equal(t, "error: --cwd "+s.checkout+" is not inside a git work tree, which --mode isolated-write needs (each writer attempt works in a fresh worktree of it); pass a git checkout, or use --mode read-only\n"+
			"Run 'switchyard run --help' for usage and examples.\n", r.stderr)
		require.NotContains(t, r.stderr, "fatal:", "git's own stderr does not leak")
		require.NotContains(t, r.stderr, "engine:")
		requireNoDataDir(t, s)
	})
	t.Run("writer in a repository without a commit", func(t *testing.T) {
		t.Parallel()
		s := newEngineSandbox(t, nil, singleLaneSheet)
		gitCmd(t, s.checkout, "init", "-q")
		r := s.run(t, 30*time.Second, s.runArgs("hillclimb", "--mode", "isolated-write")...)
		require.Equal(t, 64, r.code, r.stdout)
		require.Contains(t, r.stderr, "error: --cwd "+s.checkout+" is in a git repository with no commit yet; --mode isolated-write starts each writer attempt from HEAD, so commit first\n")
		requireNoDataDir(t, s)
	})
	t.Run("run id that exists", func(t *testing.T) {
		t.Parallel()
		s := newEngineSandbox(t, nil, singleLaneSheet)
		r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "taken")...)
		require.Equal(t, 0, r.code, r.stderr)
		before := treeOf(t, s.data)

		r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "taken")...)
		require.Equal(t, 64, r.code, r.stdout)
		require.Empty(t, r.stdout, "no run line: nothing was submitted")
		require.Equal(t, "error: --run-id taken: run taken already exists in the embedded server of "+s.data+
			"; pass a new id, or leave --run-id out for a fresh one (`switchyard status --run taken --data-dir "+s.data+"` shows the existing run)\n"+
			"Run 'switchyard run --help' for usage and examples.\n", r.stderr)
		require.Equal(t, before, treeOf(t, s.data), "no run files, serve.json or worktree were made")
	})
}

// treeOf lists the files under dir outside the JetStream store (whose
// internals a server start may touch), relative to dir.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "jetstream" {
			return filepath.SkipDir
		}
		out = append(out, rel)
		return nil
	}))
	return out
}

// gitCmd runs git args in dir, with no user or system configuration.
func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// TestRunSheetLinesMustParse: run refuses a line that is neither blank, a
// comment nor a row (here a row that lost its colon), naming its number
// and content; a UTF-8 byte-order mark at the start is accepted (the
// sheet's first line is still read as the access fact it is). policy
// validate keeps the reference's lenient reading.
func TestRunSheetLinesMustParse(t *testing.T) {
	t.Parallel()
	bad := "# access: {\"provider\":\"grok\",\"funding\":\"included\",\"capacity\":\"standard\",\"apiSpend\":\"approved\",\"provenance\":\"user\"}\n" +
		"hillclimb: grok:grok-4.7@xhigh\n" +
		"\n" +
		"bug-fix grok:grok-4.7@high\n"
	s := newEngineSandbox(t, nil, bad)
	r := s.run(t, 30*time.Second, s.runArgs("hillclimb")...)
	require.Equal(t, 65, r.code, r.stdout)
	require.Equal(t, "invalid model sheet:\n"+
		`line 4: "bug-fix grok:grok-4.7@high" is neither blank, a # comment nor a role row (header: attempts); add the missing colon, or start it with # to keep it as a comment`+"\n", r.stderr)
	requireNoDataDir(t, s)

	// The policy drop-in keeps reading such a line as prose.
	r = s.run(t, 30*time.Second, "policy", "validate", "--sheet", s.sheetPath(), "--parent", "claude")
	require.NotContains(t, r.stderr, "line 4")

	// A byte-order mark is dropped: the access fact on line 1 still counts
	// (without it grok's approved API spend would be lost and the lane
	// blocked), and the frozen sheet has no mark.
	require.NoError(t, os.WriteFile(s.sheetPath(), []byte("\ufeff"+singleLaneSheet), 0o600))
	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "bom")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "lane 0 hillclimb#1: complete via grok:grok-4.7@xhigh")
	r = s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "bom", "--type", "run-created", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, `\ufeff`)
	require.NotContains(t, r.stdout, "\ufeff")
}

// TestRunUnknownRoleSuggests: a role the sheet does not configure names
// the closest configured ones.
func TestRunUnknownRoleSuggests(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, panelSheet3)
	r := s.run(t, 30*time.Second, s.runArgs("swarm worker")...)
	require.Equal(t, 65, r.code, r.stdout)
	require.Equal(t, "invalid model sheet:\n"+
		`policy-enabled sheet `+s.sheetPath()+` has no role "swarm worker"; did you mean "swarm workers"? (name a configured role, or repair the sheet through setup before dispatch)`+"\n", r.stderr)

	r = s.run(t, 30*time.Second, s.runArgs("Swarm")...)
	require.Equal(t, 65, r.code, r.stdout)
	require.Contains(t, r.stderr, `did you mean "swarm workers"?`)

	r = s.run(t, 30*time.Second, s.runArgs("architect")...)
	require.Equal(t, 65, r.code, r.stdout)
	require.Contains(t, r.stderr, `has no role "architect"; it configures "swarm workers" (`)
	requireNoDataDir(t, s)
}

// TestMissingOptionsReportedAtOnce: every missing required option is named
// in one error.
func TestMissingOptionsReportedAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--role", "bug-fix"}, "missing required options --sheet, --parent, --prompt and --cwd"},
		{[]string{"inspect", "--lane", "0"}, "missing required options --run, --state and --evidence"},
		{[]string{"operation", "done"}, "missing required options --run, --lane and --result"},
		{[]string{"native", "report"}, "missing required options --execution and --status"},
		{[]string{"recover", "--clear", "--lane", "0", "--correction", "x"}, "missing required options --run, --evidence, --blockage-id, --snapshot-ref, --snapshot-digest, --partial-work-ref, --side-effects-ref and --stopped-writers-ref"},
		{[]string{"history"}, "missing required option --run"},
	} {
		r := runBinary(t, tc.args...)
		require.Equal(t, 64, r.code, "%q: %s", tc.args, r.stderr)
		require.True(t, strings.HasPrefix(r.stderr, "error: "+tc.want+"\n"), "%q: %s", tc.args, r.stderr)
	}
}

// TestRunPrefixAndLaneRange: every command that names a run takes a unique
// prefix of its id; an ambiguous prefix lists the candidates and no match
// says so (exit 64). A --lane outside the run's lanes is exit 64 naming
// the range, on every command that takes --lane, even on a final run.
func TestRunPrefixAndLaneRange(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	for _, id := range []string{"alpha-1", "alpha-2", "beta"} {
		r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", id)...)
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	dd := []string{"--data-dir", s.data}
	cli := func(args ...string) result {
		t.Helper()
		return s.run(t, 30*time.Second, append(args, dd...)...)
	}
	usage := func(r result, command, msg string) {
		t.Helper()
		require.Equal(t, 64, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, "error: "+msg+"\nRun 'switchyard "+command+" --help' for usage and examples.\n", r.stderr)
	}

	// A unique prefix names the run.
	r := cli("status", "--run", "be")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, `run beta: role "hillclimb"`), r.stdout)
	r = cli("replay", "--run", "b", "--verify")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `^run beta: verified: `, r.stdout)
	r = cli("history", "--run", "alpha-2", "--lane", "0")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "finish")
	r = cli("history", "--run", "b", "--type", "run-created")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `role "hillclimb", 1 lane, parent claude`)
	r = cli("report", "--run", "be")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "run beta (role hillclimb"), r.stdout)
	r = cli("prune", "--run", "be", "--dry-run", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"beta"`)
	require.NotContains(t, r.stdout, "alpha")

	// Ambiguous and unknown prefixes.
	ambiguous := "--run alpha is ambiguous: it starts 2 runs (alpha-1, alpha-2); pass more of the id"
	for _, c := range [][]string{
		{"status", "--run", "alpha"},
		{"history", "--run", "alpha"},
		{"replay", "--run", "alpha"},
		{"cancel", "--run", "alpha"},
		{"inspect", "--run", "alpha", "--lane", "0", "--state", "clear", "--evidence", "x"},
		{"operation", "done", "--run", "alpha", "--lane", "0", "--result", "succeeded"},
		{"recover", "--run", "alpha", "--lane", "0", "--evidence", "x", "--decline"},
		{"report", "--run", "alpha"},
		{"prune", "--run", "alpha"},
	} {
		command := c[0]
		if command == "operation" {
			command = "operation done"
		}
		usage(cli(c...), command, ambiguous)
	}
	usage(cli("history", "--run", "gamma"), "history",
		`--run gamma: no run matches "gamma" in the embedded server of `+s.data+"; list runs with `switchyard status --data-dir "+s.data+"`")

	// Lanes out of the run's range, even when the run is final.
	laneErr := func(n string) string {
		return "--lane " + n + ": run beta has lanes 0..0; see them with `switchyard status --run beta --data-dir " + s.data + "`"
	}
	usage(cli("history", "--run", "beta", "--lane", "7"), "history", laneErr("7"))
	usage(cli("cancel", "--run", "be", "--lane", "99"), "cancel", laneErr("99"))
	usage(cli("inspect", "--run", "beta", "--lane", "1", "--state", "clear", "--evidence", "x"), "inspect", laneErr("1"))
	usage(cli("operation", "done", "--run", "beta", "--lane", "2", "--result", "failed"), "operation done", laneErr("2"))
	usage(cli("recover", "--run", "beta", "--lane", "3", "--evidence", "x", "--decline"), "recover", laneErr("3"))

	// In range on a final run: said plainly, without the engine's prefix.
	r = cli("cancel", "--run", "be")
	require.Equal(t, 1, r.code, r.stdout)
	require.Equal(t, "error: run beta is final: nothing in it waits for input any more; see `switchyard status --run beta --data-dir "+s.data+"`\n", r.stderr)
	r = cli("inspect", "--run", "beta", "--lane", "0", "--state", "clear", "--evidence", "x")
	require.Equal(t, 1, r.code, r.stdout)
	require.Equal(t, "error: run beta lane 0 is complete, not inspecting: lane is final; see `switchyard status --run beta --data-dir "+s.data+"`\n", r.stderr)
}

// TestRunHelpFirstExampleWorks runs the first example of `run --help` (on
// the sample sheet it names, with the simulated CLIs, in a sandbox) and
// requires every lane to complete: a new user's first try must not end
// blocked by billing policy.
func TestRunHelpFirstExampleWorks(t *testing.T) {
	t.Parallel()
	help := runBinary(t, "run", "--help")
	require.Equal(t, 0, help.code, help.stderr)
	_, examples, ok := strings.Cut(help.stdout, "Examples:\n")
	require.True(t, ok, help.stdout)
	var line string
	for _, l := range strings.Split(examples, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		line += strings.TrimSuffix(l, `\`) + " "
		if !strings.HasSuffix(l, `\`) {
			break
		}
	}
	args := splitWords(line)
	require.Equal(t, []string{"switchyard", "run"}, args[:2], line)
	s := newEngineSandbox(t, nil, "")
	args = args[1:]
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--sheet":
			args[i+1] = filepath.Join(repoRoot, args[i+1])
		case "--prompt":
			args[i+1] = s.prompt
		case "--cwd":
			args[i+1] = s.checkout
		}
	}
	r := s.run(t, 90*time.Second, append(args, "--data-dir", s.data, "--run-id", "example")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Regexp(t, `\n(\d+) lanes?: \d+ complete; `, r.stdout)
	require.NotRegexp(t, `lanes?: [^\n]*(stopped|cancelled)`, r.stdout, "every lane completes")
}

// splitWords splits a command line on spaces, keeping "double-quoted"
// words whole.
func splitWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// TestRunIDTakenOnAServe: against a serve, run looks --run-id up on the
// connection it submits on (checkRunIDFree opens none of its own), and a
// taken id is still a usage error before anything is submitted.
func TestRunIDTakenOnAServe(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "taken", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)

	onConn, err := checkRunIDFree(t.Context(), engineFlags{dataDir: s.data}, "taken")
	require.NoError(t, err)
	require.True(t, onConn, "a served data directory: the run's own connection looks the id up")

	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "taken", "--detach")...)
	require.Equal(t, 64, r.code, r.stdout)
	require.Empty(t, r.stdout, "no run id printed: nothing was submitted")
	require.Contains(t, r.stderr, "error: --run-id taken: run taken already exists in the serve of "+s.data)
	require.Contains(t, r.stderr, "(`switchyard status --run taken --data-dir "+s.data+"` shows the existing run)")
	require.NotContains(t, r.stderr, "pre-check", "refused before the pre-check")
}
