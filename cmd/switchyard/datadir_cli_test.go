package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/policy"
)

// queryCommands are the commands that read or answer stored runs: none of
// them may create a data directory, a store or a lock file.
var queryCommands = [][]string{
	{"status"},
	{"status", "--run", "r1", "--watch"},
	{"history", "--run", "r1"},
	{"replay", "--run", "r1", "--verify"},
	{"inspect", "--run", "r1", "--lane", "0", "--state", "clear", "--evidence", "x"},
	{"cancel", "--run", "r1"},
	{"recover", "--run", "r1", "--lane", "0", "--evidence", "x", "--decline"},
	{"operation", "done", "--run", "r1", "--lane", "0", "--result", "succeeded", "--ref", "x"},
	{"native", "next", "--parent", "claude"},
	{"native", "report", "--execution", "e1", "--status", "complete"},
}

// listTree lists every path under dir (relative), or nil when dir is
// missing.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return out
}

// TestQueryCommandsCreateNothing: a query command pointed at a directory
// without a store (a typo, a missing directory, an empty one, or
// SWITCHYARD_DATA_DIR naming one) creates nothing there and says there is
// no Switchyard data, naming the directory, where it came from and the fix.
func TestQueryCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	missing := filepath.Join(s.dir, "typo", "dir")
	empty := filepath.Join(s.dir, "empty")
	require.NoError(t, os.MkdirAll(empty, 0o755))
	for _, args := range queryCommands {
		for _, dir := range []string{missing, empty} {
			r := s.run(t, 30*time.Second, append(args, "--data-dir", dir)...)
			require.Equal(t, 64, r.code, "%q on %s: %s", args, dir, r.stderr)
			require.True(t, strings.HasPrefix(r.stderr, "error: no Switchyard data in "+dir+" (--data-dir): it holds no store"), "%q: %s", args, r.stderr)
			require.Contains(t, r.stderr, "`switchyard run` and `switchyard serve` create one", args)
		}
		require.NoDirExists(t, missing, "%q created the missing directory", args)
		require.Empty(t, listTree(t, empty), "%q created something in an empty directory", args)
	}

	// The same through SWITCHYARD_DATA_DIR: an operational error (exit 1)
	// naming the variable.
	env := s.env
	s.env = append(append([]string{}, env...), dataDirEnv+"="+missing)
	r := s.run(t, 30*time.Second, "status")
	s.env = env
	require.Equal(t, 1, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "error: no Switchyard data in "+missing+" ($"+dataDirEnv+")"), r.stderr)
	require.NoDirExists(t, missing)
	require.NoDirExists(t, filepath.Join(s.dir, "state", "switchyard"), "the XDG default stays untouched")
}

// TestDataDirEnvAndPasteableCommands: SWITCHYARD_DATA_DIR is the default
// data directory; because another shell may not have it set, every command
// run prints carries --data-dir, quoted, and pastes as is into a shell
// without the variable.
func TestDataDirEnvAndPasteableCommands(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, nativeSheet)
	data := filepath.Join(s.dir, "my data's home")
	quoted := shellQuote(data)
	require.Equal(t, `'`+filepath.Join(s.dir, `my data'\''s home`)+`'`, quoted)
	s.env = append(s.env, dataDirEnv+"="+data)
	args := []string{"run", "--sheet", s.sheetPath(), "--role", "how explorer", "--parent", "claude",
		"--prompt", s.prompt, "--cwd", s.checkout, "--run-id", "envdir"}
	p := s.start(t, args...)
	next := "switchyard native next --parent claude --data-dir " + quoted
	waitOutput(t, p, "  waiting for the parent: "+next+"\n")
	waitOutput(t, p, "  notice: lane 0: native attempt ")
	out, _ := p.output()
	notice := regexp.MustCompile(`(?m)^  notice: .*$`).FindString(out)
	require.Contains(t, notice, ": "+next+", then switchyard native report --execution ", notice)
	require.True(t, strings.HasSuffix(notice, " --status S --data-dir "+quoted), notice)
	require.DirExists(t, filepath.Join(data, storeDirName), "the run's store is in $"+dataDirEnv)
	require.NoDirExists(t, filepath.Join(s.dir, "state", "switchyard"))

	// Pasted into a shell without SWITCHYARD_DATA_DIR, the printed
	// command answers the same store.
	sh := exec.Command("sh", "-c", next+" --json")
	sh.Dir = s.dir
	sh.Env = []string{"PATH=" + filepath.Dir(binPath) + ":/usr/bin:/bin", "HOME=" + filepath.Join(s.dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(s.dir, "state")}
	var stdout, stderr bytes.Buffer
	sh.Stdout, sh.Stderr = &stdout, &stderr
	require.NoError(t, sh.Run(), stderr.String())
	var job engine.NativeJob
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &job), stdout.String())
	require.Equal(t, "envdir", job.Run)
	require.True(t, strings.HasSuffix(job.ReportCommand, " --data-dir "+quoted), job.ReportCommand)

	require.NoError(t, os.WriteFile(job.Paths.Output, []byte("the subagent's answer\n"), 0o600))
	r := s.run(t, 30*time.Second, "native", "report", "--execution", job.ExecutionID, "--status", "complete",
		"--process-started", "true", "--evidence", "host/envelope.json")
	require.Equal(t, 0, r.code, r.stderr)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish after the native report")
	}
	require.Equal(t, 0, p.stop(t))
}

// TestInterruptedRunSaysWhetherFinal: an interrupted run that is final
// after all says so and returns its report; one that is not says it stays
// stored and how to resume it.
func TestInterruptedRunSaysWhetherFinal(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "done")...)
	require.Equal(t, 0, r.code, r.stderr)

	f := engineFlags{dataDir: s.data, fsync: string("always")}
	conn, err := openEngineConn(context.Background(), f, connectOptions{})
	require.NoError(t, err)
	defer conn.Close()
	eng, err := conn.newEngine(f, quietLogger(&bytes.Buffer{}))
	require.NoError(t, err)
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	rep, final, err := interruptedRun(interrupted, &stderr, conn, f, eng, "done", newSelfDrive(context.Background()))
	require.NoError(t, err)
	require.True(t, final)
	require.True(t, rep.Final)
	require.Equal(t, "done", rep.Run)
	require.Equal(t, "switchyard run: interrupted, but run done is final; its report follows\n", stderr.String())

	// A run nobody drives is not final: it stays stored.
	sheet, err := os.ReadFile(s.sheetPath())
	require.NoError(t, err)
	_, err = eng.Submit(context.Background(), engine.RunRequest{RunID: "open", Sheet: sheet, Role: "hillclimb",
		Parent: policy.ParentClaude, Mode: policy.ReadOnly, PromptPath: s.prompt, Cwd: s.checkout})
	require.NoError(t, err)
	stderr.Reset()
	_, final, err = interruptedRun(interrupted, &stderr, conn, f, eng, "open", newSelfDrive(context.Background()))
	require.False(t, final)
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, exitInterrupted, ee.code)
	require.Contains(t, stderr.String(), "switchyard run: run open is not final and stays stored in "+s.data+"\n")
	require.Contains(t, stderr.String(), "resume it with `switchyard serve --data-dir "+s.data+"`")
}
