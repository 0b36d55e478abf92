package main

import (
	"strings"
	"testing"
)

// TestEngineCommandGolden pins what the engine commands print for bad
// command lines (each error names the bad input and the fix, with the exit
// code) and their help. None of these cases reaches a server or the data
// directory.
func TestEngineCommandGolden(t *testing.T) {
	t.Parallel()
	run := func(extra ...string) []string {
		return append([]string{"run", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude",
			"--prompt", "README.md", "--cwd", "."}, extra...)
	}
	cases := []cliCase{
		// run
		{name: "run-help", args: []string{"run", "--help"}},
		{name: "run-missing-sheet", args: []string{"run", "--role", "swarm workers", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-unknown-flag", args: run("--bogus")},
		{name: "run-positional-argument", args: run("extra")},
		{name: "run-bad-mode", args: run("--mode", "write")},
		{name: "run-bad-parent", args: []string{"run", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "gemini", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-bad-timeout", args: run("--timeout", "soon")},
		{name: "run-bad-fsync", args: run("--fsync", "never")},
		{name: "run-bad-run-id", args: run("--run-id", "a.b")},
		{name: "run-replicas-without-nats", args: run("--replicas", "3")},
		{name: "run-unreadable-sheet", args: []string{"run", "--sheet", "missing.sheet", "--role", "bug-fix", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-invalid-sheet", args: []string{"run", "--sheet", invalidSheet, "--role", "how explorer", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-role-missing", args: []string{"run", "--sheet", partialSheet, "--role", "bug-fix", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-role-unconfigured-legacy", args: []string{"run", "--sheet", legacySheet, "--role", "bug-fix", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-missing-prompt", args: []string{"run", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude", "--prompt", "missing.md", "--cwd", "."}},
		{name: "run-bad-log-format", args: run("--log-format", "xml")},
		{name: "run-unknown-allow-unknown-quota", args: run("--allow-unknown-quota", "codex,gpt")},
		{name: "run-empty-allow-unknown-quota", args: run("--allow-unknown-quota", ",")},
		{name: "run-unknown-allow-unverified-containment", args: run("--allow-unverified-containment", "grok,gemini")},
		{name: "run-allow-unverified-containment-strict", args: run("--allow-unverified-containment", "grok", "--contract", "strict")},
		{name: "run-opencode-chatgpt-subscription-without-opencode", args: run("--opencode-chatgpt-subscription")},
		{name: "run-short-quota-refresh", args: run("--quota-refresh", "1s")},
		{name: "run-zero-stall-timeout", args: run("--stall-timeout", "0s")},
		{name: "run-negative-stall-timeout", args: run("--stall-timeout", "-5m")},
		{name: "run-sub-millisecond-stall-timeout", args: run("--stall-timeout", "1500us")},
		{name: "run-bad-stall-timeout", args: run("--stall-timeout", "soon")},
		{name: "run-refused-at-launch-devin-low", args: []string{"run", "--sheet", "cmd/switchyard/testdata/sheets/devin-low.sheet", "--role", "bug-fix", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-refused-at-launch-antigravity-no-spend", args: []string{"run", "--sheet", legacyAntigravitySheet, "--role", "how explorer", "--parent", "claude", "--prompt", "README.md", "--cwd", "."}},
		{name: "run-stall-timeout-off-with-for", args: run("--stall-timeout", "off", "--stall-timeout-for", "codex=5m")},
		{name: "run-stall-timeout-for-unknown-provider", args: run("--stall-timeout-for", "gpt=5m")},
		{name: "run-stall-timeout-for-no-equals", args: run("--stall-timeout-for", "codex")},
		{name: "run-stall-timeout-for-bad-duration", args: run("--stall-timeout-for", "codex=soon")},
		{name: "run-stall-timeout-for-zero", args: run("--stall-timeout-for", "codex=0")},
		{name: "run-stall-timeout-for-twice", args: run("--stall-timeout-for", "codex=5m,cursor=1m", "--stall-timeout-for", "codex=6m")},
		{name: "run-cwd-not-a-directory", args: []string{"run", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude", "--prompt", "README.md", "--cwd", "README.md"}},

		// serve and worker
		{name: "serve-help", args: []string{"serve", "--help"}},
		{name: "console-url-help", args: []string{"console-url", "--help"}},
		{name: "serve-not-loopback", args: []string{"serve", "--listen", "0.0.0.0:4222"}},
		{name: "serve-listen-with-nats", args: []string{"serve", "--nats", "nats://127.0.0.1:1", "--listen", "127.0.0.1:0"}},
		{name: "serve-fsync-with-nats", args: []string{"serve", "--nats", "nats://127.0.0.1:1", "--fsync", "interval"}},
		{name: "serve-cap-unknown-provider", args: []string{"serve", "--cap", "gpt=3"}},
		{name: "serve-cap-zero", args: []string{"serve", "--cap", "codex=4,grok=0"}},
		{name: "serve-cap-over-max", args: []string{"serve", "--cap", "grok=65"}},
		{name: "serve-cap-no-number", args: []string{"serve", "--cap", "grok"}},
		{name: "serve-cap-twice", args: []string{"serve", "--cap", "grok=1", "--cap", "grok=3"}},
		{name: "run-cap-not-a-number", args: run("--cap", "codex=many")},
		{name: "worker-help", args: []string{"worker", "--help"}},
		{name: "worker-missing-provider", args: []string{"worker"}},
		{name: "worker-unknown-provider", args: []string{"worker", "--provider", "codex,gpt"}},
		{name: "worker-bad-concurrency", args: []string{"worker", "--provider", "codex", "--concurrency", "0"}},
		{name: "worker-empty-nats", args: []string{"worker", "--provider", "codex", "--nats", ","}},
		{name: "worker-bin-bad-format", args: []string{"worker", "--provider", "codex", "--bin", "/usr/bin/codex"}},
		{name: "worker-bin-other-provider", args: []string{"worker", "--provider", "codex", "--bin", "grok=/bin/sh"}},
		{name: "worker-bin-relative", args: []string{"worker", "--provider", "codex", "--bin", "codex=bin/codex"}},
		{name: "worker-bin-directory", args: []string{"worker", "--provider", "codex", "--bin", "codex=/"}},
		{name: "worker-bin-missing", args: []string{"worker", "--provider", "codex", "--bin", "codex=/nonexistent/switchyard-test/codex"}},
		{name: "worker-bin-twice", args: []string{"worker", "--provider", "codex", "--bin", "codex=/bin/sh", "--bin", "codex=/bin/sh"}},

		{name: "worker-short-quota-refresh", args: []string{"worker", "--provider", "codex", "--quota-refresh", "500ms"}},

		// usage
		{name: "usage-help", args: []string{"usage", "--help"}},
		{name: "usage-unknown-provider", args: []string{"usage", "--provider", "codex,gpt"}},
		{name: "usage-empty-provider", args: []string{"usage", "--provider", ","}},
		{name: "usage-bad-wait", args: []string{"usage", "--refresh", "--wait", "0s"}},
		{name: "usage-fsync-refused", args: []string{"usage", "--fsync", "always"}},

		// status, replay
		{name: "status-help", args: []string{"status", "--help"}},
		{name: "status-bad-run-id", args: []string{"status", "--run", "a b"}},
		{name: "status-bad-state", args: []string{"status", "--state", "final,done"}},
		{name: "status-bad-limit", args: []string{"status", "--limit", "-3"}},
		{name: "status-limit-with-run", args: []string{"status", "--run", "r1", "--limit", "5"}},
		{name: "status-fsync-refused", args: []string{"status", "--fsync", "always"}},
		{name: "report-help", args: []string{"report", "--help"}},
		{name: "report-missing-run", args: []string{"report", "--json"}},
		{name: "prune-help", args: []string{"prune", "--help"}},
		{name: "prune-bad-older-than", args: []string{"prune", "--older-than", "-2d"}},
		{name: "worker-bad-log-level", args: []string{"worker", "--provider", "codex", "--log-level", "verbose"}},
		{name: "replay-help", args: []string{"replay", "--help"}},
		{name: "replay-missing-run", args: []string{"replay", "--verify"}},
		{name: "history-help", args: []string{"history", "--help"}},
		{name: "history-missing-run", args: []string{"history", "--json"}},
		{name: "history-bad-lane", args: []string{"history", "--run", "r1", "--lane", "first"}},
		{name: "history-bad-type", args: []string{"history", "--run", "r1", "--type", "launch,started"}},

		// the parent's answers
		{name: "inspect-help", args: []string{"inspect", "--help"}},
		{name: "inspect-bad-state", args: []string{"inspect", "--run", "r1", "--lane", "0", "--state", "maybe", "--evidence", "notes.md"}},
		{name: "inspect-missing-evidence", args: []string{"inspect", "--run", "r1", "--lane", "0", "--state", "clear"}},
		{name: "inspect-negative-lane", args: []string{"inspect", "--run", "r1", "--lane", "-1", "--state", "clear", "--evidence", "x"}},
		{name: "inspect-from-unsafe", args: []string{"inspect", "--run", "r1", "--lane", "0", "--state", "unsafe", "--evidence", "x", "--from", "HEAD"}},
		{name: "cancel-help", args: []string{"cancel", "--help"}},
		{name: "cancel-missing-run", args: []string{"cancel", "--lane", "1"}},
		{name: "operation-no-command", args: []string{"operation"}},
		{name: "operation-unknown-command", args: []string{"operation", "undo"}},
		{name: "operation-done-help", args: []string{"operation", "done", "--help"}},
		{name: "operation-done-bad-result", args: []string{"operation", "done", "--run", "r1", "--lane", "0", "--result", "ok"}},
		{name: "recover-help", args: []string{"recover", "--help"}},
		{name: "recover-missing-evidence", args: []string{"recover", "--run", "r1", "--lane", "0", "--decline"}},
		{name: "recover-neither", args: []string{"recover", "--run", "r1", "--lane", "0", "--evidence", "x"}},
		{name: "recover-clear-without-recovery", args: []string{"recover", "--run", "r1", "--lane", "0", "--evidence", "x", "--clear", "--correction", "fixed"}},
		{name: "recover-decline-with-recovery", args: []string{"recover", "--run", "r1", "--lane", "0", "--evidence", "x", "--decline", "--snapshot-ref", "HEAD"}},
		{name: "native-no-command", args: []string{"native"}},
		{name: "native-next-help", args: []string{"native", "next", "--help"}},
		{name: "native-next-bad-parent", args: []string{"native", "next", "--parent", "cursor"}},
		{name: "native-report-help", args: []string{"native", "report", "--help"}},
		{name: "native-report-bad-status", args: []string{"native", "report", "--execution", "e1", "--status", "done"}},
		{name: "native-report-bad-process-started", args: []string{"native", "report", "--execution", "e1", "--status", "complete", "--process-started", "yes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, tc.args...)
			if !strings.HasSuffix(tc.name, "-help") && r.code == 0 {
				t.Errorf("exit 0 for a bad command line")
			}
			checkGolden(t, "engine/"+tc.name, r.render(tc.args, ""))
		})
	}
}
