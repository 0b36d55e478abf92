package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestReportPrintsTheRunReportAgain: `report` prints exactly the report
// `run` printed, with each attempt's duration, token usage, output and
// cause; its JSON names no output for the exhausted attempt that wrote
// none. The run logs as JSON lines under --log-format json.
func TestReportPrintsTheRunReportAgain(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "usage-exhausted"}, panelSheet3)
	r := s.run(t, 60*time.Second, s.runArgs("swarm workers", "--run-id", "again", "--log-format", "json", "--log-level", "info")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	// Every stderr line is a JSON log record; the engine's info lines are there.
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON log line: %q", line)
		msgs = append(msgs, rec.Msg)
	}
	require.Contains(t, msgs, "run submitted")

	_, runReport, ok := strings.Cut(r.stdout, "\n\nrun again ")
	require.True(t, ok, "no report in run's output:\n%s", r.stdout)
	runReport = "run again " + runReport

	rep := s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "again")
	require.Equal(t, 0, rep.code, rep.stderr)
	require.Equal(t, runReport, rep.stdout, "report prints what run printed")
	require.Contains(t, rep.stdout, "    1. codex:gpt-5.6-sol@high: usage-exhausted: codex reported usage exhaustion")
	require.Regexp(t, `\n       (\d+ms|\d+\.\d+s), no token usage reported, no output, containment READ_ONLY_NO_NETWORK verified by the kernel \(Landlock ABI \d+\)\n       fidelity: model not verified \(no model evidence\); containment verified by the kernel \(Landlock ABI \d+\); no token usage reported; the harness's own reasoning and tool loop are not traced\n    2\. grok:grok-4\.7@xhigh: complete\n`, rep.stdout)
	require.Contains(t, rep.stdout, "       fidelity: model verified by the provider's report; containment verified by the kernel", "grok's report verifies its model")
	require.Contains(t, rep.stdout, "       fidelity: model pinned by argv only (the provider reports none that verifies it)", "devin's model is pinned by argv only")
	require.Regexp(t, `\n       (\d+ms|\d+\.\d+s), tokens 10601 in / 8704 cached in / 0 cache write / 79 out / 312 reasoning / 10992 total, output `+s.data+`/runs/again/L0/[0-9a-f-]+/output\.md, containment READ_ONLY_NO_NETWORK verified by the kernel \(Landlock ABI \d+\)\n`, rep.stdout)

	rep = s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "again", "--json")
	require.Equal(t, 0, rep.code, rep.stderr)
	var got engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(rep.stdout), &got), rep.stdout)
	var raw struct {
		Lanes []struct {
			Attempts []map[string]json.RawMessage `json:"attempts"`
		} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal([]byte(rep.stdout), &raw))
	exhausted, delivered := got.Lanes[0].Attempts[0], got.Lanes[0].Attempts[1]
	require.Equal(t, policy.OutcomeUsageExhausted, exhausted.Outcome)
	require.NotContains(t, raw.Lanes[0].Attempts[0], "output", "an attempt that wrote nothing names no output")
	require.NotNil(t, exhausted.DurationMs)
	require.Nil(t, exhausted.Usage)
	require.NotEmpty(t, exhausted.Receipt)
	require.Equal(t, policy.OutcomeComplete, delivered.Outcome)
	require.NotNil(t, delivered.DurationMs)
	require.NotNil(t, delivered.Usage)
	require.EqualValues(t, 10992, *delivered.Usage.TotalTokens)
	b, err := os.ReadFile(delivered.Output)
	require.NoError(t, err, "the named output exists")
	require.NotEmpty(t, b)

	bad := s.run(t, 30*time.Second, "report", "--data-dir", s.data, "--run", "nosuch")
	require.Equal(t, 64, bad.code, bad.stderr)
	require.Contains(t, bad.stderr, `--run nosuch: no run matches "nosuch"`)
}

// TestRunFailIfUndelivered: a run whose only lane exhausts its chain exits
// 0 by default and 3 under --fail-if-undelivered, after its report.
func TestRunFailIfUndelivered(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "usage-exhausted"}, singleLaneSheet)

	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "plain")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "no provider delivered")

	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "strict", "--fail-if-undelivered", "--json")...)
	require.Equal(t, 3, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "the report still prints: %s", r.stdout)
	require.True(t, rep.Final)
	require.Zero(t, rep.Diversity.Complete)
	require.Contains(t, r.stderr, "no lane of run strict delivered (--fail-if-undelivered)")
}

// TestCompletionAndLogFlags: cobra's completion command works; bad log
// flags are usage errors naming the valid values; query commands neither
// show nor accept the server-only flags.
func TestCompletionAndLogFlags(t *testing.T) {
	t.Parallel()
	r := runBinary(t, "completion", "bash")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "bash completion V2 for switchyard")

	for _, args := range [][]string{
		{"serve", "--log-format", "xml"},
		{"worker", "--provider", "codex", "--log-format", "yaml"},
		{"run", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude", "--prompt", "README.md", "--cwd", ".", "--log-format", "logfmt"},
	} {
		r := runBinary(t, args...)
		require.Equal(t, 64, r.code, "%q: %s", args, r.stderr)
		require.Contains(t, r.stderr, "want text or json", "%q", args)
	}
	r = runBinary(t, "serve", "--log-level", "trace")
	require.Equal(t, 64, r.code, r.stderr)
	require.Contains(t, r.stderr, `--log-level "trace": want debug, info, warn or error`)

	for _, cmd := range []string{"status", "history", "replay", "report", "prune"} {
		r := runBinary(t, cmd, "--help")
		require.Equal(t, 0, r.code, r.stderr)
		require.NotContains(t, r.stdout, "--fsync", cmd)
		require.NotContains(t, r.stdout, "--replicas", cmd)
		require.Contains(t, r.stdout, "--data-dir", cmd)
		r = runBinary(t, cmd, "--fsync", "always")
		require.Equal(t, 64, r.code, "%s --fsync: %s", cmd, r.stderr)
	}
	for _, cmd := range []string{"run", "serve", "worker"} {
		r := runBinary(t, cmd, "--help")
		require.Contains(t, r.stdout, "--log-format", cmd)
		require.Contains(t, r.stdout, "--log-level", cmd)
	}
}
