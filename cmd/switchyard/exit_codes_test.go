package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandPaths lists every visible command of the tree switchyard builds,
// walked from the tree itself (root included), as argv paths.
func commandPaths() [][]string {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Hidden {
			return
		}
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRootCmd(io.Discard, io.Discard), nil)
	return paths
}

// TestExitCodesInHelp: every command's --help, as a user sees it, has an
// "Exit codes" paragraph.
func TestExitCodesInHelp(t *testing.T) {
	paths := commandPaths()
	require.Greater(t, len(paths), 30, "the walk found too few commands")
	for _, path := range paths {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append(append([]string(nil), path...), "--help"), &stdout, &stderr)
		require.NoError(t, err, "switchyard %s --help: %s", strings.Join(path, " "), stderr.String())
		assert.Contains(t, stdout.String(), "Exit codes:", "switchyard %s --help lists no exit codes", strings.Join(path, " "))
	}
}

// TestExitCodes runs the real binary with bad input for each command that
// documents its exit codes, and checks it exits with a code its help names
// and says what was wrong.
func TestExitCodes(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	require.NoError(t, os.Mkdir(empty, 0o700))
	blank := filepath.Join(tmp, "blank.md")
	require.NoError(t, os.WriteFile(blank, []byte(" \n\t\n"), 0o600))
	noSuchRun := []string{"--run", "0123456789abcdef", "--data-dir", empty}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"cancel", "--run", "not a run"}, 64, `--run "not a run" is not a run id`},
		{[]string{"history", "--run", "7f3c2a", "--type", "bogus"}, 64, `--type "bogus" is not an event type`},
		{[]string{"inspect", "--run", "7f3c2a", "--lane", "0", "--state", "maybe", "--evidence", "x"}, 64, `--state "maybe": want clear or unsafe`},
		{[]string{"models", "--provider", "bogus"}, 64, `--provider "bogus": unknown provider`},
		{[]string{"native"}, 64, "needs a subcommand: next or report"},
		{[]string{"native", "next", "--parent", "grok"}, 64, `--parent "grok": want claude or codex`},
		{[]string{"native", "report", "--execution", "x", "--status", "fine"}, 64, `--status "fine": want one of`},
		{[]string{"operation", "bogus"}, 64, `unknown subcommand "bogus"`},
		{[]string{"operation", "validate", "--run", "7f3c2a", "--lane", "0"}, 64, "missing required option --expected-head"},
		{[]string{"operation", "begin", "--run", "7f3c2a", "--lane", "0"}, 64, "missing required option --digest"},
		{[]string{"operation", "done", "--run", "7f3c2a", "--lane", "0", "--result", "maybe"}, 64, `--result "maybe": want succeeded, failed or rejected`},
		{append([]string{"operation", "reject", "--lane", "0"}, noSuchRun...), 64, "no Switchyard data in " + empty},
		{[]string{"recover", "--run", "7f3c2a", "--lane", "0", "--evidence", "x"}, 64, "give exactly one of --clear"},
		{append([]string{"replay"}, noSuchRun...), 64, "no Switchyard data in " + empty},
		{[]string{"serve", "--listen", "0.0.0.0:4222", "--data-dir", empty}, 64, "is not a loopback address"},
		{[]string{"setup"}, 64, "--sheet"},
		{[]string{"worker", "--provider", "bogus", "--data-dir", empty}, 64, `--provider "bogus": unknown provider`},
		{[]string{"contract", "prepare", "--parent", "claude", "--provider", "claude", "--route", "native", "--mode", "read-only", "--contract", "strict"}, 79, "strict"},
		{[]string{"contract", "interpret", "--response", blank}, 65, "only whitespace"},
		{[]string{"contract", "op-validate", "--response", blank}, 64, "missing required options"},
		{[]string{"contract", "op-record", "--ledger", filepath.Join(tmp, "ops.json"), "--id", "op-1", "--task", "T", "--checkpoint", "C", "--kind", "push", "--state", "pending"}, 64, `--kind "push": want commit-checkpoint or run-checks`},
		{[]string{"contract", "op-status", "--ledger", filepath.Join(tmp, "none.json")}, 64, "does not exist"},
		{[]string{"completion", "tcsh"}, 64, `no completion script for shell "tcsh": want one of bash, fish, powershell, zsh`},
		{[]string{"completion"}, 64, "needs a shell: one of bash, fish, powershell, zsh"},
		{[]string{"help", "bogus"}, 64, `no help topic "bogus": switchyard has the commands cancel, completion,`},
		{[]string{"help", "native", "bogus"}, 64, `no help topic "bogus": switchyard native has the commands next, report`},
		{[]string{"runner", "status"}, 64, "status needs one or more --progress F --receipt F pairs"},
	} {
		t.Run(strings.Join(tc.args[:min(2, len(tc.args))], "_"), func(t *testing.T) {
			r := runBinary(t, tc.args...)
			require.Equal(t, tc.code, r.code, "switchyard %q: stderr %s", tc.args, r.stderr)
			require.Contains(t, r.stderr, tc.stderr)
			// The code is one the command's help documents.
			var help, stderr bytes.Buffer
			path := tc.args[:1]
			if len(tc.args) > 1 && !strings.HasPrefix(tc.args[1], "-") {
				path = tc.args[:2]
			}
			require.NoError(t, run(context.Background(), append(append([]string(nil), path...), "--help"), &help, &stderr))
			at := strings.Index(help.String(), "Exit codes:")
			require.GreaterOrEqual(t, at, 0, "switchyard %s --help lists no exit codes", strings.Join(path, " "))
			require.Contains(t, help.String()[at:], strconv.Itoa(tc.code), "switchyard %s --help does not document exit %d", strings.Join(path, " "), tc.code)
		})
	}
}
