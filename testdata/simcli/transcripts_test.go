package main_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// The tests in this file hold the transcripts to the provider specs: each
// scenario is replayed by the simulator with the spec's own preflight
// probes and workload argv, environment and private files, then read by the
// spec's parser and the one classifier. They are not the runner's
// end-to-end tests; they prove the transcripts say what their names claim.

// specModel is the descriptor each provider is exercised with.
var specModel = map[policy.Provider]struct {
	model, cli string
	effort     policy.Effort
}{
	policy.Claude:      {"opus", "opus", policy.EffortHigh},
	policy.Codex:       {"gpt-5.6-sol", "gpt-5.6-sol", policy.EffortHigh},
	policy.Grok:        {"grok-4.7", "grok-4.7", policy.EffortXHigh},
	policy.Devin:       {"swe-2", "swe-2-high", policy.EffortHigh},
	policy.Cursor:      {"composer-2.5", "composer-2.5", policy.EffortDefault},
	policy.Antigravity: {"gemini-3.1-pro-high", "gemini-3.1-pro-high", policy.EffortDefault},
	policy.OpenCode:    {"openai/gpt-6.1-sol", "openai/gpt-6.1-sol", policy.EffortDefault},
	policy.Gemini:      {"gemini-2.5-pro", "gemini-2.5-pro", policy.EffortHigh},
}

// attempt is what replaying one scenario through a spec produced.
type attempt struct {
	preflightStatus policy.ReceiptStatus // "" when every probe passed
	class           providers.Classification
	parsed          providers.Parsed
	capture         providers.Capture
}

// replayThroughSpec runs the spec's probes (with Grok's one retry) and,
// when they pass, its workload against the simulated CLI.
func replayThroughSpec(t *testing.T, provider policy.Provider, scenario string, mode policy.Access) attempt {
	t.Helper()
	spec, err := providers.Lookup(provider)
	require.NoError(t, err)
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{string(provider): scenario}))
	work := t.TempDir()
	cwd := filepath.Join(work, "checkout")
	if provider == policy.Grok && mode == policy.ReadOnly {
		// A read-only Grok lane must see a real checkout: providers refuses
		// one under a temporary directory (provider-dispatch.md).
		cwd = simenv.Checkout(t)
	}
	home := filepath.Join(work, "home")
	receipt := filepath.Join(work, "receipt.json")
	private := receipt + cmp.Or(spec.PrivateSuffix, ".private")
	for _, d := range []string{cwd, home} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Mkdir(private, 0o700))
	m := specModel[provider]
	exe, err := exec.LookPath(filepath.Join(bin, spec.Binaries[0]))
	require.NoError(t, err)
	req := providers.Request{
		Parent:     policy.ParentCodex,
		Provider:   provider,
		Model:      m.model,
		CLIModel:   m.cli,
		Effort:     m.effort,
		Mode:       mode,
		Cwd:        cwd,
		Prompt:     []byte("## Worker contract\nThe parent owns Git.\n\nAssigned task:\nSummarize README.md.\n"),
		Output:     filepath.Join(work, "out.md"),
		Receipt:    receipt,
		PrivateDir: private,
		APISpend:   policy.APISpendApproved,
		Home:       home,
		Executable: exe,
	}
	if mode == policy.IsolatedWrite && provider == policy.OpenCode {
		gitInit(t, cwd) // OpenCode writers run only at a worktree root, with the sandbox runtime
		srt := filepath.Join(work, "srt")
		require.NoError(t, os.WriteFile(srt, []byte("#!/bin/sh\n[ \"$1\" = --settings ] && [ -f \"$2\" ] && [ \"$3\" = -c ] || exit 1\nexec /bin/sh -c \"$4\"\n"), 0o755))
		req.ParentEnv = map[string]string{providers.SandboxRuntimeBinEnv: srt}
	}
	files, overlay, err := spec.Prepare(req)
	require.NoError(t, err)
	writeFiles(t, files)
	parent := map[string]string{"PATH": bin + ":/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"}
	env := providers.ChildEnv(spec, parent, req, overlay)

	var a attempt
	check := func() bool {
		if spec.Check == nil {
			return true
		}
		if err := spec.Check(req); err != nil {
			a.preflightStatus = policy.StatusUnavailableCLI
			var pe *providers.PreflightError
			if errors.As(err, &pe) {
				a.preflightStatus = pe.Status
			}
			return false
		}
		return true
	}
	if !check() {
		return a
	}
	probes := spec.Preflight(req)
	for i := 0; i < len(probes); i++ {
		argv := probes[i]
		v := spec.ReadPreflight(req, i, runCommand(t, providers.Command{Argv: argv, Dir: cwd, Env: env}, nil))
		if v.Status != "" && v.Retry {
			v = spec.ReadPreflight(req, i, runCommand(t, providers.Command{Argv: argv, Dir: cwd, Env: env}, nil))
		}
		if v.Status != "" {
			a.preflightStatus = v.Status
			return a
		}
		if v.Then != nil { // the runner's continuation: contract, files, environment, probes
			req.Contract = v.Then.Contract
			writeFiles(t, v.Then.Files)
			env = providers.ChildEnv(spec, parent, req, v.Then.Overlay)
			probes = append(probes[:i+1:i+1], v.Then.Probes...)
		}
	}
	if !check() {
		return a
	}
	cmd, err := spec.Invocation(req)
	require.NoError(t, err)
	cmd.Env = env
	a.capture = runCommand(t, cmd, req.Prompt)
	if spec.Export != nil {
		if argv := spec.Export(req, a.capture); argv != nil {
			exp := runCommand(t, providers.Command{Argv: argv, Dir: cmd.Dir, Env: env}, nil)
			a.capture.Export = &exp
		}
	}
	a.parsed = spec.Parse(req, a.capture)
	a.class = providers.Classify(spec, req, a.capture, a.parsed)
	return a
}

// writeFiles creates spec files the way the runner does (directories
// first, 0600 files).
func writeFiles(t *testing.T, files []providers.File) {
	t.Helper()
	for _, f := range files {
		if f.Dir {
			require.NoError(t, os.MkdirAll(f.Path, os.FileMode(f.Mode)))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(f.Path), 0o700))
		require.NoError(t, os.WriteFile(f.Path, f.Content, os.FileMode(f.Mode)))
	}
}

// gitInit makes dir a Git worktree root.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// runCommand runs one spec command the way the runner does: the complete
// environment given, stdin per its kind, extra files read after it settles.
func runCommand(t *testing.T, c providers.Command, prompt []byte) providers.Capture {
	t.Helper()
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	switch c.Stdin {
	case providers.StdinPrompt:
		cmd.Stdin = bytes.NewReader(prompt)
	case providers.StdinBytes:
		cmd.Stdin = bytes.NewReader(c.StdinBytes)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %q: %v", c.Argv, err)
	}
	capture := providers.Capture{Stdout: out.Bytes(), Stderr: errb.Bytes(), Files: map[string][]byte{}}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		capture.ExitCode = &code
	} else {
		capture.Signal = cmd.ProcessState.String()
	}
	for _, f := range c.Capture {
		if b, err := os.ReadFile(f); err == nil {
			capture.Files[f] = b
		}
	}
	return capture
}

func TestTranscriptsClassifyAsNamed(t *testing.T) {
	t.Parallel()
	type row struct {
		provider  policy.Provider
		scenario  string
		preflight policy.ReceiptStatus // the failing probe's status, or ""
		status    policy.ReceiptStatus // the workload's classification when probes pass
	}
	rows := []row{
		{policy.Claude, "success", "", policy.StatusComplete},
		{policy.Claude, "handoff", "", policy.StatusNeedsParentOperation},
		{policy.Claude, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Claude, "unauthenticated", "", policy.StatusUnauthenticated},
		{policy.Claude, "malformed", "", policy.StatusMalformedOutput},

		{policy.Codex, "success", "", policy.StatusComplete},
		{policy.Codex, "reconnect-then-success", "", policy.StatusComplete},
		{policy.Codex, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Codex, "unauthenticated", policy.StatusUnauthenticated, ""},
		{policy.Codex, "malformed", "", policy.StatusMalformedOutput},

		{policy.Grok, "success", "", policy.StatusComplete},
		{policy.Grok, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Grok, "team-credits-403", "", policy.StatusChildFailed},
		{policy.Grok, "unauthenticated", policy.StatusUnauthenticated, ""},
		{policy.Grok, "malformed", "", policy.StatusMalformedOutput},

		{policy.Devin, "success", "", policy.StatusComplete},
		{policy.Devin, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Devin, "unauthenticated", policy.StatusUnauthenticated, ""},
		{policy.Devin, "malformed", "", policy.StatusMalformedOutput},
		{policy.Devin, "write-denied", "", policy.StatusMalformedOutput},
		{policy.Devin, "confirmation-rejected", "", policy.StatusMalformedOutput},

		{policy.Cursor, "success", "", policy.StatusComplete},
		{policy.Cursor, "success-with-model", "", policy.StatusComplete},
		{policy.Cursor, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Cursor, "usage-limit-unclassed", "", policy.StatusChildFailed},
		{policy.Cursor, "unauthenticated", policy.StatusUnauthenticated, ""},
		{policy.Cursor, "malformed", "", policy.StatusMalformedOutput},

		{policy.Antigravity, "success", "", policy.StatusComplete},
		{policy.Antigravity, "usage-exhausted", "", policy.StatusChildFailed},
		{policy.Antigravity, "unauthenticated", policy.StatusUnauthenticated, ""},
		{policy.Antigravity, "malformed", "", policy.StatusMalformedOutput},
		{policy.Antigravity, "denied-actions", "", policy.StatusChildFailed},

		{policy.OpenCode, "success", "", policy.StatusComplete},
		{policy.OpenCode, "usage-exhausted", "", policy.StatusChildFailed},
		{policy.OpenCode, "unauthenticated", "", policy.StatusChildFailed},
		{policy.OpenCode, "signed-out", "", policy.StatusChildFailed},
		{policy.OpenCode, "malformed", "", policy.StatusMalformedOutput},
		{policy.OpenCode, "config-mismatch", policy.StatusUnavailableCLI, ""},
		{policy.OpenCode, "v2-success", "", policy.StatusComplete},
		{policy.OpenCode, "v2-bare-banner", "", policy.StatusComplete},
		{policy.OpenCode, "prerelease-banner", policy.StatusUnavailableCLI, ""},
		{policy.OpenCode, "trailing-noise", policy.StatusUnavailableCLI, ""},
		{policy.OpenCode, "unknown-major", policy.StatusUnavailableCLI, ""},
		{policy.OpenCode, "v2-config-mismatch", policy.StatusUnavailableCLI, ""},
		{policy.OpenCode, "v2-export-foreign", "", policy.StatusMalformedOutput},
		{policy.OpenCode, "v2-export-fails", "", policy.StatusMalformedOutput},
		{policy.OpenCode, "v2-exit-after-completion", "", policy.StatusChildFailed},
		{policy.OpenCode, "v2-final-tool", "", policy.StatusMalformedOutput},

		{policy.Gemini, "success", "", policy.StatusComplete},
		{policy.Gemini, "usage-exhausted", "", policy.StatusUsageExhausted},
		{policy.Gemini, "capacity-exhausted", "", policy.StatusChildFailed},
		{policy.Gemini, "unauthenticated", "", policy.StatusUnauthenticated},
		{policy.Gemini, "untrusted-folder", "", policy.StatusUnsupportedCapability},
		{policy.Gemini, "untrusted-folder-success", "", policy.StatusUnsupportedCapability},
		{policy.Gemini, "plan-disabled", "", policy.StatusUnsupportedCapability},
		{policy.Gemini, "malformed", "", policy.StatusMalformedOutput},
	}
	for _, r := range rows {
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			t.Run(string(r.provider)+"/"+r.scenario+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				a := replayThroughSpec(t, r.provider, r.scenario, mode)
				require.Equal(t, r.preflight, a.preflightStatus, "preflight")
				if r.preflight != "" {
					return
				}
				msg := ""
				if a.class.Error != nil {
					msg = a.class.Error.Message
				}
				require.Equal(t, r.status, a.class.Status, "classification: %s (protocol error: %v)", msg, a.parsed.ProtocolError)
				switch r.status {
				case policy.StatusComplete, policy.StatusNeedsParentOperation:
					assert.NotEmpty(t, strings.TrimSpace(a.parsed.FinalText))
					assert.True(t, a.parsed.TerminalSuccess)
					require.NotNil(t, a.class.ModelEvidence)
				case policy.StatusUsageExhausted:
					assert.NotEmpty(t, a.class.QuotaCode)
				}
			})
		}
	}
}

func TestSuccessTranscriptsProveTheirModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider policy.Provider
		scenario string
		evidence policy.ModelEvidence
		verified bool
		reported string // "" for none
	}{
		{policy.Claude, "success", policy.EvidenceProviderReport, true, "claude-opus-5"},
		{policy.Codex, "success", policy.EvidencePinnedArgv, false, ""},
		{policy.Grok, "success", policy.EvidenceProviderReport, true, "grok-4.7"},
		{policy.Devin, "success", policy.EvidencePinnedArgv, false, ""},
		{policy.Cursor, "success", policy.EvidencePinnedArgv, false, ""},
		{policy.Cursor, "success-with-model", policy.EvidenceProviderReport, true, "composer-2.5"},
		{policy.Antigravity, "success", policy.EvidencePinnedArgv, false, "gemini-3.1-pro-high"},
		{policy.OpenCode, "success", policy.EvidencePinnedArgv, false, ""},
		{policy.Gemini, "success", policy.EvidenceProviderReport, true, "gemini-2.5-pro"},
	} {
		t.Run(string(tc.provider)+"/"+tc.scenario, func(t *testing.T) {
			t.Parallel()
			a := replayThroughSpec(t, tc.provider, tc.scenario, policy.ReadOnly)
			require.Equal(t, policy.StatusComplete, a.class.Status)
			require.NotNil(t, a.class.ModelEvidence)
			assert.Equal(t, tc.evidence, *a.class.ModelEvidence)
			assert.Equal(t, tc.verified, a.class.ModelVerified)
			if tc.reported == "" {
				assert.Nil(t, a.class.ReportedModel)
			} else {
				require.NotNil(t, a.class.ReportedModel)
				assert.Equal(t, tc.reported, *a.class.ReportedModel)
			}
		})
	}
}

func TestLongRunningTranscriptsHangUntilSignalled(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"claude", "codex", "grok", "devin", "cursor", "antigravity", "opencode", "gemini"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{p: "long-running"}))
			cmd := exec.Command(simenv.Binary(t, bin, p), workloadArgv[p]...)
			cmd.Env = minimalEnv(t, bin)
			cmd.Stdin = strings.NewReader("prompt")
			require.NoError(t, cmd.Start())
			// The invocation is logged once stdin is consumed; then it hangs.
			waitFor(t, "invocation logged", func() bool { return len(simenv.Invocations(t, bin)) == 1 })
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 130, ee.ExitCode(), "SIGINT exit code")
		})
	}
}

func TestTranscriptFilesAreWellFormed(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"stdout": true, "stderr": true, "exit": true, "delay_ms": true, "chunk_ms": true,
		"hang": true, "spawn_grandchild": true, "export.json": true, "echo_env": true, "shell_command": true, "base": true, "hook_calls": true,
		"account.json": true, "rate-limits.json": true, "rate-limits-error.json": true, "notify.jsonl": true}
	// App-server files are JSON once their reset placeholders are filled.
	resets := strings.NewReplacer("{{reset_5h}}", "1", "{{reset_7d}}", "1", "{{reset_1h}}", "1", "{{now_unix}}", "1")
	root := simenv.TranscriptsRoot()
	var kinds int
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		switch {
		case d.IsDir() && len(parts) == 3:
			kinds++
			assert.True(t, parts[2] == "workload" || parts[2] == "app-server" || parts[2] == "session-export" || strings.HasPrefix(parts[2], "preflight-"), "kind dir %s", rel)
		case !d.IsDir() && len(parts) == 4:
			assert.True(t, known[parts[3]], "unknown transcript file %s", rel)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			switch parts[3] {
			case "exit":
				v := strings.TrimSpace(string(b))
				if n, err := strconv.Atoi(v); err == nil {
					assert.True(t, n >= 0 && n <= 255, "%s: %d", rel, n)
				} else {
					assert.Contains(t, []string{"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP"}, v, rel)
				}
			case "account.json", "rate-limits.json", "rate-limits-error.json":
				assert.Equal(t, "app-server", parts[2], rel)
				assert.True(t, json.Valid([]byte(resets.Replace(string(b)))), "%s is not JSON", rel)
			case "notify.jsonl":
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					assert.True(t, json.Valid([]byte(resets.Replace(line))), "%s: %q is not JSON", rel, line)
				}
			case "base":
				_, err := os.Stat(filepath.Join(root, parts[0], strings.TrimSpace(string(b))))
				assert.NoError(t, err, "%s names a missing base", rel)
			}
		case !d.IsDir() && len(parts) != 1:
			t.Errorf("unexpected file %s (want <provider>/<scenario>/<kind>/<file>)", rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, kinds, 60)
}
