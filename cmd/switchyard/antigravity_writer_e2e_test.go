package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// agyWriterLane is an Antigravity writer lane through the real binary: the
// simulated agy loads the generated agent and workspace hooks and runs the
// approval hook (this binary's antigravity-hook) for its tool calls.
func agyWriterLane(t *testing.T, scenario string, extraEnv []string) *e2eLane {
	t.Helper()
	l := newE2ELane(t, policy.Antigravity, scenario, "deny", extraEnv, "--allow-unverified-containment")
	for i, a := range l.args {
		if a == "read-only" {
			l.args[i] = "isolated-write"
		}
	}
	return l
}

type agyReceipt struct {
	Status         policy.ReceiptStatus `json:"status"`
	FailurePhase   *string              `json:"failurePhase"`
	ProcessStarted *bool                `json:"processStarted"`
	Argv           []string             `json:"argv"`
	Error          *struct {
		Message  string `json:"message"`
		Evidence string `json:"evidence"`
	} `json:"error"`
	Preflight struct {
		Status   string `json:"status"`
		Evidence string `json:"evidence"`
	} `json:"preflight"`
	TerminalSuccess *bool `json:"terminalSuccess"`
}

func readAgyReceipt(t *testing.T, l *e2eLane) agyReceipt {
	t.Helper()
	b, err := os.ReadFile(l.path("receipt.json"))
	require.NoError(t, err)
	var rc agyReceipt
	require.NoError(t, json.Unmarshal(b, &rc), string(b))
	return rc
}

// requireCleanedUp: the generated agent, hooks and control directory are
// gone after every outcome; the worktree keeps only what the worker made.
func requireCleanedUp(t *testing.T, l *e2eLane) {
	t.Helper()
	_, err := os.Lstat(filepath.Join(l.path("checkout"), ".agents"))
	require.ErrorIs(t, err, os.ErrNotExist, "the generated .agents is removed")
	entries, err := os.ReadDir(l.path("home"))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), ".switchyard-antigravity-"), "control directory %s left behind", e.Name())
	}
}

func TestAntigravityWriterEndToEnd(t *testing.T) {
	t.Parallel()
	l := agyWriterLane(t, "writer-success", nil)
	r, err := l.run()
	require.NoError(t, err)
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	rc := readAgyReceipt(t, l)
	require.Equal(t, policy.StatusComplete, rc.Status)
	argv := strings.Join(rc.Argv, " ")
	require.Contains(t, argv, "--project default-cli-project --mode accept-edits")
	require.Contains(t, rc.Preflight.Evidence, "agy 1.3.5 is in the writer contract")
	out, err := os.ReadFile(l.path("out.md"))
	require.NoError(t, err)
	require.Contains(t, string(out), "go test ./...")

	// The simulated agy ran this binary's approval hook for each call, and
	// it approved all three.
	hooks, err := os.ReadFile(filepath.Join(l.bin, "hooks.jsonl"))
	require.NoError(t, err)
	require.Equal(t, `{"decision":"allow","tool":"write_to_file"}`+"\n"+`{"decision":"allow","tool":"run_command"}`+"\n"+
		`{"decision":"allow","tool":"manage_task"}`+"\n", string(hooks))
	// Preflight ran agy --version before agy models, each once.
	var kinds []string
	for _, inv := range simenv.Invocations(t, l.bin) {
		kinds = append(kinds, inv.Kind)
	}
	require.Equal(t, []string{simlog.KindVersion, simlog.KindModels, simlog.KindWorkload}, kinds)
	requireCleanedUp(t, l)
}

func TestAntigravityWriterRefusalPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario string
		setup          func(t *testing.T, l *e2eLane)
		status         policy.ReceiptStatus
		started        bool
		want           string
	}{
		{name: "hook denial ends the lane although agy says SUCCESS", scenario: "writer-hook-denied",
			status: policy.StatusChildFailed, started: true, want: "cwd_outside_worktree"},
		{name: "a command the hook never approved", scenario: "writer-unhooked-command",
			status: policy.StatusMalformedOutput, started: true, want: "approval hook approved 0"},
		{name: "agy 2.x is outside the writer contract", scenario: "writer-version-2",
			status: policy.StatusUnavailableCLI, want: "outside the writer contract"},
		{name: "a prerelease agy", scenario: "writer-prerelease",
			status: policy.StatusUnavailableCLI, want: "not a bare stable 1.x version"},
		{name: "existing workspace hooks", scenario: "writer-success", status: policy.StatusUnsupportedCapability,
			setup: func(t *testing.T, l *e2eLane) {
				require.NoError(t, os.MkdirAll(filepath.Join(l.path("checkout"), ".agents"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(l.path("checkout"), ".agents", "hooks.json"), []byte(`{"hooks":{}}`), 0o644))
			}, want: "already exists; existing workspace hooks are refused"},
		{name: "symlinked .agents", scenario: "writer-success", status: policy.StatusUnsupportedCapability,
			setup: func(t *testing.T, l *e2eLane) {
				require.NoError(t, os.Symlink(l.path("home"), filepath.Join(l.path("checkout"), ".agents")))
			}, want: ".agents is a symlink"},
		{name: "execution-policy customization", scenario: "writer-success", status: policy.StatusUnsupportedCapability,
			setup: func(t *testing.T, l *e2eLane) {
				dir := filepath.Join(l.path("home"), ".gemini", "antigravity-cli")
				require.NoError(t, os.MkdirAll(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"toolPermission":"always-proceed"}`), 0o600))
			}, want: "key toolPermission customizes execution policy"},
		{name: "an active user plugin", scenario: "writer-success", status: policy.StatusUnsupportedCapability,
			setup: func(t *testing.T, l *e2eLane) {
				dir := filepath.Join(l.path("home"), ".gemini", "antigravity-cli", "plugins", "p")
				require.NoError(t, os.MkdirAll(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"p"}`), 0o600))
			}, want: "active plugins"},
		{name: "a set gateway key under deny", scenario: "writer-success", status: policy.StatusBillingPolicyBlocked,
			setup: func(t *testing.T, l *e2eLane) { l.env = append(l.env, "AGY_GATEWAY_MODE=0") }, want: "AGY_GATEWAY_MODE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := agyWriterLane(t, tc.scenario, nil)
			var before []byte
			if tc.setup != nil {
				tc.setup(t, l)
				before, _ = os.ReadFile(filepath.Join(l.path("checkout"), ".agents", "hooks.json"))
			}
			r, err := l.run()
			require.NoError(t, err)
			require.NotEqual(t, 0, r.code)
			rc := readAgyReceipt(t, l)
			require.Equal(t, tc.status, rc.Status, "receipt error %+v", rc.Error)
			require.NotNil(t, rc.ProcessStarted)
			require.Equal(t, tc.started, *rc.ProcessStarted)
			require.NotNil(t, rc.Error)
			require.Contains(t, rc.Error.Message+rc.Error.Evidence, tc.want)
			_, err = os.Stat(l.path("out.md"))
			if err == nil {
				b, _ := os.ReadFile(l.path("out.md"))
				require.Empty(t, b, "a refused or denied writer delivers nothing")
			}
			if before != nil {
				after, err := os.ReadFile(filepath.Join(l.path("checkout"), ".agents", "hooks.json"))
				require.NoError(t, err)
				require.Equal(t, string(before), string(after), "the user's own hooks are never touched")
				return
			}
			if tc.name != "symlinked .agents" {
				requireCleanedUp(t, l)
			}
			if !tc.started {
				for _, inv := range simenv.Invocations(t, l.bin) {
					require.NotEqual(t, simlog.KindWorkload, inv.Kind, "no model invocation after a refusal")
				}
			}
		})
	}
}

// TestAntigravityWriterThroughTheEngine: `switchyard run` launches an
// Antigravity writer in a fresh git worktree; the simulated agy runs the
// approval hook for its command, task and edit calls and the lane
// completes.
func TestAntigravityWriterThroughTheEngine(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"antigravity": "writer-success"},
		`# access: {"provider":"antigravity","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
bug-fix: antigravity:gemini-3.1-pro-high@default
`)
	gitInit(t, s.checkout)
	r := s.run(t, 120*time.Second, s.runArgs("bug-fix", "--run-id", "agywriter", "--mode", "isolated-write",
		"--allow-unverified-containment", "antigravity")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "complete via antigravity:gemini-3.1-pro-high@default")
	hooks, err := os.ReadFile(filepath.Join(s.bin, "hooks.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(hooks), `"decision":"allow"`), string(hooks))
	var workloads int
	for _, inv := range simlog.Filter(simenv.Invocations(t, s.bin), "antigravity", simlog.KindWorkload) {
		workloads++
		require.Contains(t, strings.Join(inv.Argv, " "), "--project default-cli-project --mode accept-edits")
		require.NotEqual(t, s.checkout, inv.Cwd, "a writer runs in its own worktree, never the checkout")
	}
	require.Equal(t, 1, workloads)
	entries, err := os.ReadDir(filepath.Join(s.dir, "home"))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), ".switchyard-antigravity-"), "control directory left behind")
	}
}
