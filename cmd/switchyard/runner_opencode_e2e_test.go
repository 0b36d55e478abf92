package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// openCodeE2E is one OpenCode attempt through `switchyard runner` against
// the simulated CLI: the scenario, spending policy and extra flags, and
// what the receipt and the simulator's invocation log must show.
type openCodeE2E struct {
	name, scenario, spend string
	flags                 []string
	env                   []string
	status                policy.ReceiptStatus
	exit                  int
	kinds                 []string // invocation kinds in order
	evidence              string   // in preflight evidence (or the error when the attempt failed in preflight)
	errorHas              string   // in error.message + evidence
	terminalSuccess       *bool
	check                 func(t *testing.T, l *e2eLane, rc *policy.Receipt, invs []simlog.Invocation)
}

const (
	kVersion = simlog.KindVersion
	kDebug   = simlog.KindDebugConfig
	kAuth    = simlog.KindStatus
	kWork    = simlog.KindWorkload
	kExport  = simlog.KindSessionExport
)

var subscription = []string{"--opencode-chatgpt-subscription"}

func boolp(b bool) *bool { return &b }

// TestRunnerOpenCodeContracts runs each OpenCode contract and every
// refusal path end to end through the runner binary and the simulated
// opencode (both majors), checking the receipt, the exit code and exactly
// which CLI commands ran.
func TestRunnerOpenCodeContracts(t *testing.T) {
	t.Parallel()
	const final = "The README describes a small example project; nothing needed changing."
	cases := []openCodeE2E{
		{name: "v1 runs the restored contract", scenario: "success", spend: "approved", status: policy.StatusComplete,
			kinds: []string{kVersion, kDebug, kWork}, evidence: "opencode 1.18.32 selects the V1 contract",
			check: func(t *testing.T, l *e2eLane, rc *policy.Receipt, invs []simlog.Invocation) {
				w := invs[2]
				require.Contains(t, w.Argv, "--pure")
				require.Contains(t, w.Argv, "--dir")
				require.Contains(t, w.Env, "OPENCODE_CONFIG")
				require.NotContains(t, w.Env, "OPENCODE_CONFIG_DIR")
				require.NotContains(t, invs[0].Env, "OPENCODE_CONFIG", "the version probe has no contract-specific pointer")
				require.Equal(t, []string{"--pure", "debug", "config"}, invs[1].Argv[1:])
				requireOutput(t, l, final)
			}},
		{name: "v2 runs standalone and delivers from the session export", scenario: "v2-success", spend: "approved", status: policy.StatusComplete,
			kinds: []string{kVersion, kDebug, kWork, kExport}, evidence: "opencode 2.0.27 selects the V2 contract",
			check: func(t *testing.T, l *e2eLane, rc *policy.Receipt, invs []simlog.Invocation) {
				w := invs[2]
				require.Equal(t, []string{"run", "--standalone", "--format", "json", "--model", "openai/gpt-6.1-sol",
					"--agent", w.Argv[8], "--title", "pstack-worker"}, w.Argv[1:])
				require.Contains(t, w.Env, "OPENCODE_CONFIG_DIR")
				require.Contains(t, w.Env, "PWD")
				require.NotContains(t, w.Env, "OPENCODE_CONFIG")
				require.Equal(t, []string{"debug", "config"}, invs[1].Argv[1:])
				require.Equal(t, []string{"session", "export", "--standalone", rcSession(t, rc)}, invs[3].Argv[1:])
				require.Equal(t, w.Env, invs[3].Env, "the export runs with the workload's frozen environment")
				require.Equal(t, w.Cwd, invs[3].Cwd)
				require.Equal(t, simlog.StdinDevNull, invs[3].StdinKind, "the export supplies no prompt")
				requireOutput(t, l, final)
				require.NotNil(t, rc.Usage)
				require.EqualValues(t, 24346, *rc.Usage.InputTokens, "usage comes from the export, summed once")
				require.Nil(t, rc.ReportedModel)
				require.False(t, rc.ModelVerified)
			}},
		{name: "a bare v2 banner selects v2", scenario: "v2-bare-banner", spend: "approved", status: policy.StatusComplete,
			kinds: []string{kVersion, kDebug, kWork, kExport}, evidence: "opencode 2.0.25 selects the V2 contract"},
		{name: "a prerelease banner is refused before anything else", scenario: "prerelease-banner", spend: "approved",
			status: policy.StatusUnavailableCLI, exit: 69, kinds: []string{kVersion}, errorHas: "prerelease"},
		{name: "trailing noise after the banner is refused", scenario: "trailing-noise", spend: "approved",
			status: policy.StatusUnavailableCLI, exit: 69, kinds: []string{kVersion}, errorHas: "trailing noise"},
		{name: "an unknown major is refused", scenario: "unknown-major", spend: "approved",
			status: policy.StatusUnavailableCLI, exit: 69, kinds: []string{kVersion}, errorHas: "major version 3 is unknown"},
		{name: "a foreign v2 configuration source is refused", scenario: "v2-config-mismatch", spend: "approved",
			status: policy.StatusUnavailableCLI, exit: 69, kinds: []string{kVersion, kDebug}, errorHas: "foreign",
			check: func(t *testing.T, _ *e2eLane, rc *policy.Receipt, _ []simlog.Invocation) {
				require.NotContains(t, rc.Error.Evidence, "gateway.example.test", "raw configuration is withheld")
			}},
		{name: "a foreign v1 configuration is refused", scenario: "config-mismatch", spend: "approved",
			status: policy.StatusUnavailableCLI, exit: 69, kinds: []string{kVersion, kDebug}, errorHas: "does not carry the private model"},
		{name: "ordinary native auth under deny is blocked before any CLI", scenario: "success", spend: "deny",
			status: policy.StatusBillingPolicyBlocked, exit: 78, kinds: []string{}, errorHas: "requires api-spend approved"},
		{name: "v2 chatgpt subscription runs under deny", scenario: "v2-subscription", spend: "deny", flags: subscription,
			env:    []string{"HTTPS_PROXY=http://proxy.example.test:3128", "NODE_EXTRA_CA_CERTS=/etc/ssl/corp.pem", "OPENAI_API_KEY=sk-planted"},
			status: policy.StatusComplete, kinds: []string{kVersion, kDebug, kAuth, kDebug, kWork, kExport},
			evidence: "ChatGPT subscription login verified",
			check: func(t *testing.T, l *e2eLane, rc *policy.Receipt, invs []simlog.Invocation) {
				require.Equal(t, policy.APISpendDeny, rc.APISpend, "funding intent stays deny")
				require.Contains(t, rc.Preflight.Evidence, "configured endpoint https://chatgpt.com/backend-api/codex")
				require.Equal(t, []string{"auth", "list", "--standalone", "--format", "json"}, invs[2].Argv[1:])
				// HTTPS_PROXY is present: the sandbox's own egress proxy
				// replaces the planted one (activities/sandbox).
				for _, inv := range invs {
					for _, n := range []string{"NODE_EXTRA_CA_CERTS", "OPENAI_API_KEY"} {
						require.NotContains(t, inv.Env, n, "the subscription mode drops %s from the %s child", n, inv.Kind)
					}
				}
				raw, err := os.ReadFile(l.path("receipt.json"))
				require.NoError(t, err)
				for _, hidden := range []string{"con_01JZ8Q", "dev@example.com", "ChatGPT Pro"} {
					require.NotContains(t, string(raw), hidden, "raw auth output is withheld")
				}
				requireOutput(t, l, final)
			}},
		{name: "v2 without credential-method metadata is refused with the upgrade named", scenario: "v2-no-method", spend: "deny", flags: subscription,
			status: policy.StatusBillingPolicyBlocked, exit: 78, kinds: []string{kVersion, kDebug, kAuth}, errorHas: "upgrade OpenCode"},
		{name: "v2 with an API key connection is refused", scenario: "v2-api-key", spend: "deny", flags: subscription,
			status: policy.StatusBillingPolicyBlocked, exit: 78, kinds: []string{kVersion, kDebug, kAuth}, errorHas: "not an OAuth login"},
		{name: "v2 with OpenCode Console also signed in is refused", scenario: "v2-console", spend: "deny", flags: subscription,
			status: policy.StatusBillingPolicyBlocked, exit: 78, kinds: []string{kVersion, kDebug, kAuth}, errorHas: "2 authenticated integrations"},
		{name: "v1 chatgpt subscription runs under deny", scenario: "v1-subscription", spend: "deny", flags: subscription,
			status: policy.StatusComplete, kinds: []string{kVersion, kDebug, kAuth, kDebug, kWork},
			evidence: "ChatGPT subscription login verified",
			check: func(t *testing.T, l *e2eLane, rc *policy.Receipt, invs []simlog.Invocation) {
				require.Equal(t, []string{"--pure", "auth", "list"}, invs[2].Argv[1:])
				require.Contains(t, rc.Preflight.Evidence, "no configured endpoint")
			}},
		{name: "v1 listing with a second credential is refused", scenario: "v1-subscription-extra", spend: "deny", flags: subscription,
			status: policy.StatusBillingPolicyBlocked, exit: 78, kinds: []string{kVersion, kDebug, kAuth}, errorHas: "not exactly one credentials block",
			check: func(t *testing.T, _ *e2eLane, rc *policy.Receipt, _ []simlog.Invocation) {
				require.NotContains(t, rc.Error.Evidence, "auth.json", "credential paths are withheld")
			}},
		{name: "an export for another agent is not delivered but vetoes replay", scenario: "v2-export-foreign", spend: "approved",
			status: policy.StatusMalformedOutput, exit: 65, kinds: []string{kVersion, kDebug, kWork, kExport},
			errorHas: "another agent", terminalSuccess: boolp(true)},
		{name: "a failed export is not delivered; the strict stream still vetoes replay", scenario: "v2-export-fails", spend: "approved",
			status: policy.StatusMalformedOutput, exit: 65, kinds: []string{kVersion, kDebug, kWork, kExport},
			errorHas: "session export failed", terminalSuccess: boolp(true)},
		{name: "a completed export keeps terminal success after a nonzero exit", scenario: "v2-exit-after-completion", spend: "approved",
			status: policy.StatusChildFailed, exit: 70, kinds: []string{kVersion, kDebug, kWork, kExport}, terminalSuccess: boolp(true)},
		{name: "a final assistant with an unsettled tool is not delivered", scenario: "v2-final-tool", spend: "approved",
			status: policy.StatusMalformedOutput, exit: 65, kinds: []string{kVersion, kDebug, kWork, kExport}, errorHas: "unsettled tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newE2ELane(t, policy.OpenCode, tc.scenario, tc.spend, tc.env, tc.flags...)
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, tc.exit, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
			raw, err := os.ReadFile(l.path("receipt.json"))
			require.NoError(t, err)
			rc, err := policy.DecodeReceipt(raw)
			require.NoError(t, err)
			require.Equal(t, tc.status, rc.Status, "receipt %s", raw)
			invs := simenv.Invocations(t, l.bin)
			var kinds []string
			for _, inv := range invs {
				kinds = append(kinds, inv.Kind)
			}
			require.Equal(t, tc.kinds, append([]string{}, kinds...), "the CLI commands that ran, in order")
			if tc.evidence != "" {
				require.Contains(t, rc.Preflight.Evidence, tc.evidence)
			}
			if tc.errorHas != "" {
				require.NotNil(t, rc.Error)
				require.Contains(t, rc.Error.Message+"\n"+rc.Error.Evidence, tc.errorHas)
			}
			if tc.status == policy.StatusComplete {
				require.Nil(t, rc.Error)
			}
			if !slices.Contains(kinds, kWork) {
				require.NotNil(t, rc.ProcessStarted)
				require.False(t, *rc.ProcessStarted, "no workload started")
			}
			if tc.terminalSuccess != nil {
				require.NotNil(t, rc.TerminalSuccess)
				require.Equal(t, *tc.terminalSuccess, *rc.TerminalSuccess)
			}
			requireGonePath(t, l.path("receipt.json")+".opencode-config")
			if tc.check != nil {
				tc.check(t, l, rc, invs)
			}
		})
	}
}

// TestRunnerOpenCodeSubscriptionFlagRules: the flag is a usage error
// (exit 64, no receipt, no CLI) outside its one allowed shape.
func TestRunnerOpenCodeSubscriptionFlagRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		spend  string
		extra  []string
		prov   policy.Provider
		wantIn string
	}{
		{name: "approved spending", spend: "approved", prov: policy.OpenCode, wantIn: "requires --api-spend deny"},
		{name: "omitted spending", spend: "", prov: policy.OpenCode, wantIn: "requires --api-spend deny"},
		{name: "another model", spend: "deny", prov: policy.OpenCode, extra: []string{"--model", "openai/gpt-5.5"}, wantIn: "requires exactly --model openai/gpt-6.1-sol"},
		{name: "another provider", spend: "deny", prov: policy.Codex, wantIn: "applies only to --provider opencode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newE2ELane(t, tc.prov, "success", tc.spend, nil, "--opencode-chatgpt-subscription")
			if len(tc.extra) == 2 { // replace --model's value
				i := slices.Index(l.args, tc.extra[0])
				l.args[i+1] = tc.extra[1]
			}
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 64, r.code, "stderr %s", r.stderr)
			require.Contains(t, r.stderr, tc.wantIn)
			requireGonePath(t, l.path("receipt.json"))
			require.Empty(t, simenv.Invocations(t, l.bin))
		})
	}
}

// fakeSRT writes a simulated sandbox runtime: it insists on `--settings
// <existing policy naming allowWrite> -c <command>` as the real srt does
// for an explicit settings file, logs each command, and runs it with
// /bin/sh (no real confinement: the test checks the routing, not the
// kernel sandbox). failOn makes it exit 1 for that command.
func fakeSRT(t *testing.T, failOn string) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	path, log = filepath.Join(dir, "srt"), filepath.Join(dir, "srt.log")
	script := "#!/bin/sh\n" +
		"[ \"$1\" = --settings ] && [ -f \"$2\" ] && [ \"$3\" = -c ] && [ \"$#\" -eq 4 ] || { echo 'srt: bad usage' >&2; exit 1; }\n" +
		"grep -q '\"allowWrite\"' \"$2\" || { echo 'Error: Could not load settings' >&2; exit 1; }\n" +
		// The runtime's own sockets go in a short fresh directory; the
		// command sets the attempt's private TMPDIR first.
		"case \"$TMPDIR\" in /tmp/switchyard-*) ;; *) echo \"srt: TMPDIR $TMPDIR is not a short socket directory\" >&2; exit 1;; esac\n" +
		"case \"$4\" in \"TMPDIR='\"*\".opencode-config/tmp'; export TMPDIR; \"*) ;; *) echo 'srt: the command does not set the private TMPDIR' >&2; exit 1;; esac\n" +
		"cmd=${4#*; export TMPDIR; }\n" +
		"printf '%s\\n' \"$cmd\" >> '" + log + "'\n" +
		"[ \"$cmd\" = '" + failOn + "' ] && { echo 'sandbox: bwrap not found' >&2; exit 1; }\n" +
		"exec /bin/sh -c \"$4\"\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path, log
}

// TestRunnerOpenCodeWriters runs OpenCode writers end to end on both
// contracts: the cwd must be a Git worktree root, the sandbox runtime must
// be present and its startup probe pass before inference, and the
// worker's shell commands go through the wrapper into the runtime.
func TestRunnerOpenCodeWriters(t *testing.T) {
	t.Parallel()
	writerLane := func(t *testing.T, scenario string, env []string, gitRoot bool) *e2eLane {
		l := newE2ELane(t, policy.OpenCode, scenario, "approved", env, "--allow-unverified-containment")
		l.args[slices.Index(l.args, "--mode")+1] = "isolated-write"
		if gitRoot {
			out, err := exec.Command("git", "init", "-q", l.path("checkout")).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		return l
	}
	t.Run("a cwd that is not a worktree root is refused before any CLI", func(t *testing.T) {
		t.Parallel()
		srt, _ := fakeSRT(t, "")
		l := writerLane(t, "writer-check", []string{"SWITCHYARD_SRT_BIN=" + srt, simenv.SandboxWritable + "=" + filepath.Dir(srt)}, false)
		r, err := l.run()
		require.NoError(t, err)
		require.Equal(t, 79, r.code, "stderr %s", r.stderr)
		require.Contains(t, r.stderr, "real Git worktree root")
		require.Empty(t, simenv.Invocations(t, l.bin))
	})
	t.Run("a missing sandbox runtime is refused before any CLI", func(t *testing.T) {
		t.Parallel()
		l := writerLane(t, "writer-check", nil, true)
		r, err := l.run()
		require.NoError(t, err)
		require.Equal(t, 69, r.code, "stderr %s", r.stderr)
		require.Contains(t, r.stderr, "npm i -g @anthropic-ai/sandbox-runtime")
		require.Empty(t, simenv.Invocations(t, l.bin))
	})
	t.Run("a failed sandbox startup probe stops before inference", func(t *testing.T) {
		t.Parallel()
		srt, log := fakeSRT(t, "true")
		l := writerLane(t, "writer-check", []string{"SWITCHYARD_SRT_BIN=" + srt, simenv.SandboxWritable + "=" + filepath.Dir(srt)}, true)
		r, err := l.run()
		require.NoError(t, err)
		require.Equal(t, 69, r.code, "stderr %s", r.stderr)
		require.Contains(t, r.stderr, "sandboxed shell startup probe failed")
		require.Empty(t, simlog.Filter(simenv.Invocations(t, l.bin), "opencode", simlog.KindWorkload), "no inference")
		got, err := os.ReadFile(log)
		require.NoError(t, err)
		require.Equal(t, "true\n", string(got), "one probe, no unsandboxed retry")
	})
	for _, scenario := range []string{"writer-check", "v2-writer-check"} {
		t.Run(scenario+" runs checks through the sandbox", func(t *testing.T) {
			t.Parallel()
			srt, log := fakeSRT(t, "")
			l := writerLane(t, scenario, []string{"SWITCHYARD_SRT_BIN=" + srt, simenv.SandboxWritable + "=" + filepath.Dir(srt)}, true)
			// Under the Landlock sandbox a writer edits existing top-level
			// files of its worktree but cannot add new ones (the root stays
			// read-only to keep .git out of reach: docs/GUARANTEES.md), so
			// the file the check writes exists beforehand.
			require.NoError(t, os.WriteFile(l.path("checkout/sandbox-check.txt"), nil, 0o644))
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 0, r.code, "stderr %s", r.stderr)
			got, err := os.ReadFile(log)
			require.NoError(t, err)
			require.Equal(t, "true\necho checked > sandbox-check.txt\n", string(got), "the startup probe, then the worker's check, both in the runtime")
			out, err := os.ReadFile(l.path("checkout/sandbox-check.txt"))
			require.NoError(t, err)
			require.Equal(t, "checked\n", string(out))
			invs := simenv.Invocations(t, l.bin)
			w := simlog.Filter(invs, "opencode", simlog.KindWorkload)
			require.Len(t, w, 1)
			require.Contains(t, w[0].Env, "SHELL", "SHELL is pinned to the wrapper")
			requireGonePath(t, l.path("receipt.json")+".opencode-config")
		})
	}
}

// requireOutput checks the delivered output file.
func requireOutput(t *testing.T, l *e2eLane, want string) {
	t.Helper()
	out, err := os.ReadFile(l.path("out.md"))
	require.NoError(t, err)
	require.Equal(t, want, strings.TrimSpace(string(out)))
}

// rcSession returns the receipt's session ID.
func rcSession(t *testing.T, rc *policy.Receipt) string {
	t.Helper()
	require.NotNil(t, rc.SessionID)
	return *rc.SessionID
}

// requireGonePath fails when anything is at p.
func requireGonePath(t *testing.T, p string) {
	t.Helper()
	_, err := os.Lstat(p)
	require.True(t, os.IsNotExist(err), "%s still exists", filepath.Base(p))
}

// TestRunnerPrivateDirectoriesAreNamedAsTheSeedNamesThem: Cursor's and
// OpenCode's private directories are <receipt>.cursor-config and
// <receipt>.opencode-config; the runner refuses to start when one already
// exists (it is created exclusively), names it, and removes its own after
// the attempt.
func TestRunnerPrivateDirectoriesAreNamedAsTheSeedNamesThem(t *testing.T) {
	t.Parallel()
	for p, suffix := range map[policy.Provider]string{policy.Cursor: ".cursor-config", policy.OpenCode: ".opencode-config"} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			l := newE2ELane(t, p, "success", "approved", nil)
			stale := l.path("receipt.json") + suffix
			require.NoError(t, os.Mkdir(stale, 0o700))
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 64, r.code)
			require.Contains(t, r.stderr, "the private directory "+stale+" already exists")
			require.Empty(t, simenv.Invocations(t, l.bin))

			l = newE2ELane(t, p, "success", "approved", nil)
			r, err = l.run()
			require.NoError(t, err)
			require.Equal(t, 0, r.code, "stderr %s", r.stderr)
			requireGonePath(t, l.path("receipt.json")+suffix)
			requireGonePath(t, l.path("receipt.json")+".private")
		})
	}
}

// TestRunnerDevinDenialEvidence: through the runner, only Devin's final
// direct write with its matching write-access denial is a verified
// permission denial; the stderr notice that a tool call requiring
// confirmation was rejected is recorded unverified with an unknown cause,
// so it can never enable a continuation.
func TestRunnerDevinDenialEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario string
		verified bool
		cause    policy.DenialCause
		code     string
	}{
		{"write-denied", true, policy.DenialPermission, "devin_atif_write_permission_denied"},
		{"confirmation-rejected", false, policy.DenialUnknown, "devin_tool_confirmation_rejected"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			l := newE2ELane(t, policy.Devin, tc.scenario, "approved", nil)
			r, err := l.run()
			require.NoError(t, err)
			require.Equal(t, 65, r.code, "stderr %s", r.stderr)
			raw, err := os.ReadFile(l.path("receipt.json"))
			require.NoError(t, err)
			rc, err := policy.DecodeReceipt(raw)
			require.NoError(t, err)
			require.Equal(t, policy.StatusMalformedOutput, rc.Status)
			require.NotNil(t, rc.ToolDenial)
			require.Equal(t, tc.verified, rc.ToolDenial.Verified)
			require.Equal(t, tc.cause, rc.ToolDenial.Cause)
			require.Equal(t, tc.code, rc.ToolDenial.Evidence)
		})
	}
}
