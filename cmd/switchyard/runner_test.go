package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestRunnerCommandRouting proves cobra hands the runner's argv through
// untouched: help, usage errors and status behave as the runner contract
// says, in process.
func TestRunnerCommandRouting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"help flag", []string{"runner", "--help"}, 0, "Usage: switchyard runner --parent", ""},
		{"help command", []string{"help", "runner"}, 0, "Usage: switchyard runner --parent", ""},
		{"help wins over bad flags", []string{"runner", "--bogus", "-h"}, 0, "Usage: switchyard runner --parent", ""},
		{"status help", []string{"runner", "status", "--help"}, 0, "Usage: switchyard runner status", ""},
		{"flag without value", []string{"runner", "--parent"}, 64, "", "error: --parent requires a value\n"},
		{"no flags", []string{"runner"}, 64, "", "error: --parent is required\n"},
		{"unknown flag", []string{"runner", "--nope", "1"}, 64, "", "error: unknown flag --nope\n"},
		{"status without pairs", []string{"runner", "status"}, 64, "", "error: status needs one or more"},
		{"status of a lane not started", []string{"runner", "status", "--progress", "/nonexistent/p", "--receipt", "/nonexistent/r", "--json"}, 0,
			`{"schemaVersion":1,"lanes":[{"lane":1,"provider":null,"attemptId":null,"kind":"unknown"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			require.Equal(t, tt.wantCode, exitCode(err, &stderr), "stderr: %s", stderr.String())
			require.True(t, strings.HasPrefix(stdout.String(), tt.wantStdout), "stdout: %s", stdout.String())
			require.True(t, strings.HasPrefix(stderr.String(), tt.wantStderr), "stderr: %s", stderr.String())
		})
	}
}

// fakeCodex writes a `codex` shell script that answers the preflight and
// then behaves as exec says (a snippet run after reading the prompt), and
// returns the directory to put first on PATH and the marker the script
// touches once exec starts.
func fakeCodex(t *testing.T, exec string) (dir, started string) {
	t.Helper()
	dir = t.TempDir()
	started = filepath.Join(dir, "started")
	script := `#!/bin/sh
if [ "$1" = login ]; then echo "Logged in using ChatGPT"; exit 0; fi
cat > ` + filepath.Join(dir, "stdin") + `
: > ` + started + `
` + exec + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "codex"), []byte(script), 0o755))
	return dir, started
}

// runnerLane is a prompt, checkout and the runner arguments for one lane.
func runnerLane(t *testing.T) (dir string, args []string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("Review the diff.\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "checkout"), 0o755))
	return dir, []string{"runner", "--parent", "claude", "--provider", "codex", "--model", "gpt-5.5",
		"--effort", "high", "--mode", "read-only", "--prompt", filepath.Join(dir, "prompt.md"),
		"--cwd", filepath.Join(dir, "checkout"), "--output", filepath.Join(dir, "out.md"),
		"--receipt", filepath.Join(dir, "receipt.json"), "--progress", filepath.Join(dir, "progress.json"),
		"--api-spend", "deny"}
}

// binaryEnv is a minimal environment for the switchyard binary with the
// fake CLI first on PATH.
func binaryEnv(fakeDir, home string) []string {
	return []string{"PATH=" + fakeDir + ":/usr/bin:/bin", "HOME=" + home, "LANG=C", simenv.SandboxWritable + "=" + fakeDir}
}

// TestRunnerBinaryComplete runs the real binary against a fake codex: the
// receipt goes to stdout as one line, the final text to the output file.
func TestRunnerBinaryComplete(t *testing.T) {
	t.Parallel()
	fake, _ := fakeCodex(t, `printf '%s\n' '{"type":"thread.started","thread_id":"th-1"}' '{"type":"turn.started"}' '{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"No issues found."}}' '{"type":"turn.completed","usage":{"input_tokens":3,"cached_input_tokens":0,"output_tokens":4}}'`)
	dir, args := runnerLane(t)
	cmd := exec.Command(binPath, args...)
	cmd.Env = binaryEnv(fake, dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	require.Empty(t, stderr.String())
	rc, err := policy.DecodeReceipt(bytes.TrimRight(stdout.Bytes(), "\n"))
	require.NoError(t, err)
	require.Equal(t, policy.StatusComplete, rc.Status)
	require.Equal(t, policy.EvidencePinnedArgv, *rc.ModelEvidence)
	out, err := os.ReadFile(filepath.Join(dir, "out.md"))
	require.NoError(t, err)
	require.Equal(t, "No issues found.", string(out))
	stdin, err := os.ReadFile(filepath.Join(fake, "stdin"))
	require.NoError(t, err)
	require.Contains(t, string(stdin), "## Worker contract")
	require.True(t, strings.HasSuffix(string(stdin), "Assigned task:\nReview the diff.\n"))
	_, err = os.Lstat(filepath.Join(dir, "receipt.json.private"))
	require.True(t, os.IsNotExist(err))
}

// TestRunnerBinarySIGTERM proves SIGTERM to the real binary reaches the
// runner (not only main's context), which forwards it to the live child's
// process group and exits 130 with a cancelled receipt on stderr.
func TestRunnerBinarySIGTERM(t *testing.T) {
	t.Parallel()
	fake, started := fakeCodex(t, `echo '{"type":"thread.started","thread_id":"th-2"}'; exec sleep 60`)
	dir, args := runnerLane(t)
	cmd := exec.Command(binPath, args...)
	cmd.Env = binaryEnv(fake, dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "err %v stderr %s", err, stderr.String())
	require.Equal(t, 130, ee.ExitCode(), "stderr: %s", stderr.String())
	require.Empty(t, stdout.String())
	rc, err := policy.DecodeReceipt(bytes.TrimRight(stderr.Bytes(), "\n"))
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, policy.StatusCancelled, rc.Status)
	require.Equal(t, "SIGTERM", *rc.Signal)
	_, err = os.Lstat(filepath.Join(dir, "out.md"))
	require.True(t, os.IsNotExist(err), "the empty output reservation is removed")

	var so bytes.Buffer
	st := exec.Command(binPath, "runner", "status", "--progress", filepath.Join(dir, "progress.json"),
		"--receipt", filepath.Join(dir, "receipt.json"), "--json")
	st.Stdout = &so
	require.NoError(t, st.Run())
	var doc struct {
		Lanes []struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal(so.Bytes(), &doc))
	require.Equal(t, "terminal", doc.Lanes[0].Kind)
	require.Equal(t, "cancelled", doc.Lanes[0].Status)
}
