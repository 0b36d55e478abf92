package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNativeNextSkipsCancelledLaneCLI: the parent cancels a native lane (or
// its whole run) with `switchyard cancel` from one process, while the run
// serves its data directory or after it stopped; `switchyard native next`
// from another process never hands the cancelled lane's job out.
func TestNativeNextSkipsCancelledLaneCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lane     []string
		runStops bool // the run process stops before the cancel
	}{
		{"lane cancel while served", []string{"--lane", "0"}, false},
		{"run cancel while served", nil, false},
		{"lane cancel after the run stopped", []string{"--lane", "0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newEngineSandbox(t, nil, nativeSheet)
			p := s.start(t, s.runArgs("how explorer", "--run-id", "cancelled")...)
			waitOutput(t, p, "waiting for the parent: switchyard native next --parent claude --data-dir "+s.data+"\n")
			if tc.runStops {
				p.stop(t)
			}
			args := append([]string{"cancel", "--run", "cancelled", "--reason", "superseded", "--data-dir", s.data}, tc.lane...)
			r := s.run(t, 30*time.Second, args...)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			r = s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
			require.Equal(t, "none", got["status"], "the cancelled lane's job was handed out: %s", r.stdout)
		})
	}
}

// opusSheet has one lane that a shipped Claude agent covers natively.
const opusSheet = `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
how explorer: claude:opus@max
`

// TestNativeNextNamesAgentAndPreparedPrompt: through real processes,
// native next names the shipped agent covering the descriptor, prints the
// read-only lane's distinct artifact, and hands a prompt file that starts
// with the worker contract and ends with the task.
func TestNativeNextNamesAgentAndPreparedPrompt(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, opusSheet)
	p := s.start(t, s.runArgs("how explorer", "--run-id", "agent")...)
	waitOutput(t, p, "waiting for the parent: switchyard native next --parent claude --data-dir "+s.data+"\n")
	r := s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^  agent +pstack-opus-max \(dispatch through this shipped Claude agent\)$`, r.stdout)
	require.Regexp(t, `(?m)^  contract +legacy$`, r.stdout)
	m := regexp.MustCompile(`(?m)^  artifact +(\S+)$`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	m2 := regexp.MustCompile(`(?m)^  prompt +(\S+) `).FindStringSubmatch(r.stdout)
	require.NotNil(t, m2, r.stdout)
	prompt, err := os.ReadFile(m2[1])
	require.NoError(t, err)
	prep := s.run(t, 30*time.Second, "contract", "prepare", "--parent", "claude", "--provider", "claude", "--route", "native",
		"--mode", "read-only", "--contract", "legacy")
	require.Equal(t, 0, prep.code, prep.stderr)
	require.True(t, strings.HasPrefix(string(prompt), prep.stdout), "the job's prompt starts with what contract prepare prints:\n%s", prompt)
	require.Contains(t, string(prompt), "\nAssigned task:\nAccess mode: read-only\n")
	require.Contains(t, string(prompt), "Output artifact (the only file you may write): "+m[1]+"\n")
	require.True(t, strings.HasSuffix(string(prompt), "\n\nSummarize README.md in one sentence.\n"), string(prompt))
}

// TestRunStrictNativeLaneEndsUnsupported: `switchyard run --contract
// strict` on a native lane ends the lane unsupported by itself: nothing is
// queued for the parent, and the run says why.
func TestRunStrictNativeLaneEndsUnsupported(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, opusSheet)
	r := s.run(t, 60*time.Second, s.runArgs("how explorer", "--run-id", "strict", "--contract", "strict")...)
	require.NotContains(t, r.stdout, "waiting for the parent: switchyard native next", r.stdout)
	require.Contains(t, r.stdout, "stopped", "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	r2 := s.run(t, 30*time.Second, "report", "--run", "strict", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r2.code, r2.stderr)
	require.Contains(t, r2.stdout, "the strict worker contract has no native route", r2.stdout)
	r2 = s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r2.code, r2.stderr)
	var none map[string]any
	require.NoError(t, json.Unmarshal([]byte(r2.stdout), &none), r2.stdout)
	require.Equal(t, "none", none["status"])
}

// TestRunReportsStaleSheetOnce: a sheet with a versioned Claude pin is
// reported stale once by run (a notice) and once in the run's log (a
// stale-sheet audit history shows); the lane runs the family alias.
func TestRunReportsStaleSheetOnce(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, `# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
how explorer: claude:claude-opus-4-5@max
`)
	p := s.start(t, s.runArgs("how explorer", "--run-id", "stale")...)
	waitOutput(t, p, "waiting for the parent: switchyard native next --parent claude --data-dir "+s.data+"\n")
	out, _ := p.output()
	notice := "  notice: " + s.sheetPath() + ": the model sheet is stale: it pins versioned Claude IDs that read-time normalization replaces with their family alias (claude:claude-opus-4-5@max runs as claude:opus@max); the sheet file is not changed: /setup-pstack will rewrite it after its normal probes and confirmation (recorded in run stale as a stale-sheet audit)\n"
	require.Equal(t, 1, strings.Count(out, notice), out)
	require.Contains(t, out, "launching claude:opus@max")

	r := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "stale", "--lane", "run", "--type", "audit", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stdout, `"reason":"stale-sheet"`), r.stdout)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "stale")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "\n  notice: the model sheet is stale: ", r.stdout)
	require.NotContains(t, r.stdout, "audited deliveries", "a stale sheet is no delivery")
	r = s.run(t, 30*time.Second, "cancel", "--run", "stale", "--reason", "test over", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("run did not finish after the cancel")
	}
	out, _ = p.output()
	require.Equal(t, 1, strings.Count(out, "the model sheet is stale"), out)
}
