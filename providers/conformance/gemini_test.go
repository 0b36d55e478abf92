package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// The signed-out Gemini CLI's own words: the sign-in error it prints
// before any model request (then exits 41), naming the settings file under
// the child's HOME, and the warning it prints when it drops a requested
// approval mode in a folder it does not trust.
const (
	geminiSignedOutExit = 41
	geminiOverridden    = `Approval mode overridden to "default" because the current folder is not trusted.`
	geminiPlanDisabled  = `Approval mode "plan" is disabled in your settings. Falling back to "default".`
)

func geminiSignedOutLine(home string) string {
	return "Please set an Auth method in your " + filepath.Join(home, ".gemini", "settings.json") +
		" or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"
}

// geminiUsageError is what the CLI's argument parser (yargs) prints for a
// flag or value it does not accept.
var geminiUsageError = regexp.MustCompile(`(?m)^(Unknown argument|Not enough arguments|Invalid values:|Missing required argument|Usage: gemini)`)

// geminiRun is one real gemini child: stdout and stderr apart, exit code.
type geminiRun struct {
	Argv           []string
	Stdout, Stderr string
	Exit           int
}

// runGemini runs argv (argv[0] the real binary) in dir with env and stdin,
// bounded by attemptTimeout.
func runGemini(t *testing.T, dir string, env []string, stdin []byte, argv []string) geminiRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s: %q did not finish within %s", cli(t, "gemini"), argv, attemptTimeout)
	r := geminiRun{Argv: argv, Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %q: %v", cli(t, "gemini"), argv, err)
	}
	return r
}

// geminiAccepted says why run is not the signed-out CLI having accepted its
// argv, nil when it is: no usage error, the sign-in stop (exit 41) with
// its exact line once on stderr, nothing on stdout, and the requested
// approval mode not overridden. A misspelled flag or value fails it: the
// parser refuses the argv (exit 1, "Unknown arguments", usage) before the
// sign-in check.
func geminiAccepted(run geminiRun, home string) error {
	lines := strings.Split(strings.TrimRight(run.Stderr, "\n"), "\n")
	switch {
	case geminiUsageError.MatchString(run.Stderr):
		return fmt.Errorf("usage error (exit %d): %s", run.Exit, geminiUsageError.FindString(run.Stderr)+
			strings.SplitN(run.Stderr[geminiUsageError.FindStringIndex(run.Stderr)[1]:], "\n", 2)[0])
	case run.Exit != geminiSignedOutExit:
		return fmt.Errorf("exit %d, want the sign-in stop's %d; stderr: %s", run.Exit, geminiSignedOutExit, run.Stderr)
	case strings.TrimSpace(run.Stdout) != "":
		return fmt.Errorf("stdout not empty: %s", run.Stdout)
	case slices.Contains(lines, geminiOverridden) || slices.Contains(lines, geminiPlanDisabled):
		return fmt.Errorf("the CLI overrode the approval mode: %s", run.Stderr)
	case !slices.Equal(lines, []string{geminiSignedOutLine(home)}):
		return fmt.Errorf("stderr is not exactly the sign-in error: %q", run.Stderr)
	}
	return nil
}

// geminiRequest is the request the runner would build for mode on host h;
// the private directory is created.
func geminiRequest(t *testing.T, h *host, mode policy.Access) providers.Request {
	t.Helper()
	priv, err := os.MkdirTemp(h.Work, "gemini-private-")
	require.NoError(t, err)
	return providers.Request{
		Parent: policy.ParentCodex, Provider: policy.Gemini, Model: "gemini-2.5-pro", CLIModel: "gemini-2.5-pro",
		Effort: policy.EffortHigh, Mode: mode, Cwd: h.Repo, Prompt: []byte("Reply with the word ready.\n"),
		Output: filepath.Join(h.Work, "output.md"), Receipt: filepath.Join(h.Work, "receipt.json"),
		PrivateDir: priv, APISpend: policy.APISpendDeny, Home: h.Home, Executable: realcli.Bin(t, "gemini"),
		ParentEnv: h.Env,
	}
}

// geminiPrepared writes the spec's private files for req and returns the
// child environment the runner would build.
func geminiPrepared(t *testing.T, spec *providers.Spec, h *host, req providers.Request) []string {
	t.Helper()
	files, overlay, err := spec.Prepare(req)
	require.NoError(t, err)
	for _, f := range files {
		if f.Dir {
			require.NoError(t, os.MkdirAll(f.Path, os.FileMode(f.Mode)))
			continue
		}
		require.NoError(t, os.WriteFile(f.Path, f.Content, os.FileMode(f.Mode)))
	}
	return providers.ChildEnv(spec, h.Env, req, overlay)
}

func geminiSpec(t *testing.T) *providers.Spec {
	t.Helper()
	spec, err := providers.Lookup(policy.Gemini)
	require.NoError(t, err)
	return spec
}

// TestConformanceGeminiKnownVersion: the pinned, verified release is one of
// the spec's known versions.
func TestConformanceGeminiKnownVersion(t *testing.T) {
	pinned := realcli.Pinned(t, "gemini")
	require.Contains(t, geminiSpec(t).KnownVersions, pinned,
		"gemini %s is pinned in testdata/realcli and checked here, so providers/gemini.go KnownVersions must list it", pinned)
}

// TestConformanceGeminiPreflight: every preflight probe the spec builds
// runs against the real CLI and the spec reads its banner as the installed
// version.
func TestConformanceGeminiPreflight(t *testing.T) {
	h := newHost(t)
	spec := geminiSpec(t)
	version := realcli.Installed(t, "gemini")
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		req := geminiRequest(t, h, mode)
		env := geminiPrepared(t, spec, h, req)
		probes := spec.Preflight(req)
		require.NotEmpty(t, probes)
		for i, argv := range probes {
			run := runGemini(t, h.Repo, env, nil, argv)
			c := providers.Capture{Stdout: []byte(run.Stdout), Stderr: []byte(run.Stderr), ExitCode: &run.Exit}
			v := spec.ReadPreflight(req, i, c)
			require.Empty(t, v.Status, "gemini %s: %q: %s (stdout %q, stderr %q)", version, argv, v.Evidence, run.Stdout, run.Stderr)
			require.Contains(t, v.Evidence, "gemini "+version+" runs", "gemini %s: %q", version, argv)
		}
	}
}

// TestConformanceGeminiInvocationAccepted: the workload argv of each mode,
// with the runner's private configuration and environment, reaches the
// signed-out CLI's sign-in check with no usage error and without the
// approval mode being overridden (the private trusted-folders file holds).
// Two controls keep the check honest: a misspelled flag fails it, and the
// same argv without the private file shows the override the runner would
// fail closed on.
func TestConformanceGeminiInvocationAccepted(t *testing.T) {
	h := newHost(t)
	spec := geminiSpec(t)
	version := realcli.Installed(t, "gemini")
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		t.Run(string(mode), func(t *testing.T) {
			req := geminiRequest(t, h, mode)
			env := geminiPrepared(t, spec, h, req)
			cmd, err := spec.Invocation(req)
			require.NoError(t, err)
			require.Equal(t, providers.StdinPrompt, cmd.Stdin)
			run := runGemini(t, cmd.Dir, env, req.Prompt, cmd.Argv)
			require.NoError(t, geminiAccepted(run, h.Home), "gemini %s: %q", version, cmd.Argv)

			misspelled := slices.Clone(cmd.Argv)
			i := slices.Index(misspelled, "--approval-mode")
			require.Positive(t, i, "gemini %s: %q has no --approval-mode", version, cmd.Argv)
			misspelled[i] = "--aproval-mode"
			bad := runGemini(t, cmd.Dir, env, req.Prompt, misspelled)
			require.Error(t, geminiAccepted(bad, h.Home), "gemini %s: a misspelled flag passed the acceptance check: %q", version, misspelled)
			require.NotEqual(t, geminiSignedOutExit, bad.Exit, "gemini %s: %q", version, misspelled)

			untrusted := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
				return strings.HasPrefix(kv, "GEMINI_CLI_TRUSTED_FOLDERS_PATH=")
			})
			require.Len(t, untrusted, len(env)-1, "the runner's environment names the private trusted-folders file")
			open := runGemini(t, cmd.Dir, untrusted, req.Prompt, cmd.Argv)
			require.Contains(t, strings.Split(open.Stderr, "\n"), geminiOverridden,
				"gemini %s: %q in an untrusted folder no longer prints the override warning the classifier pins", version, cmd.Argv)
			require.Equal(t, geminiSignedOutExit, open.Exit)
		})
	}
}

// TestConformanceGeminiSignedOutAttempt: a signed-out attempt through the
// runner ends unauthenticated (exit 77) in each mode, with the CLI's own
// sign-in error as evidence, and its plan or auto_edit mode was not
// overridden.
func TestConformanceGeminiSignedOutAttempt(t *testing.T) {
	h := newHost(t)
	version := realcli.Installed(t, "gemini")
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		res := h.attempt(t, runner.Options{Provider: policy.Gemini, Model: "gemini-2.5-pro", Effort: policy.EffortHigh,
			Mode: mode, APISpend: policy.APISpendDeny, AllowUnverifiedContainment: true})
		rc := res.Receipt
		where := fmt.Sprintf("gemini %s: %s: %s", version, argvString(rc.Argv), res.Bytes)
		require.Equal(t, policy.StatusUnauthenticated, rc.Status, where)
		require.Equal(t, 77, res.ExitCode, where)
		require.NotNil(t, rc.ExitCode, where)
		require.Equal(t, geminiSignedOutExit, *rc.ExitCode, where)
		require.Equal(t, policy.PhaseInvocation, *rc.FailurePhase, where)
		require.Contains(t, rc.Error.Evidence, "diagnostic: gemini_no_auth_method", where)
		require.Contains(t, rc.Error.Evidence, geminiSignedOutLine(h.Home), where)
		require.NotContains(t, string(res.Bytes), "overridden", where)
		for name, value := range h.Env {
			if name != "HOME" && len(value) > 8 {
				require.NotContains(t, rc.Error.Evidence, value, "%s: the evidence carries $%s", where, name)
			}
		}
	}
}

// TestConformanceGeminiQuotaSignedOut: the quota acquirer reads the login
// file the real CLI keeps (~/.gemini/oauth_creds.json: the installed
// bundle names it), and after a signed-out run, which created ~/.gemini
// without it, says no_credentials without any request.
func TestConformanceGeminiQuotaSignedOut(t *testing.T) {
	h := newHost(t)
	version := realcli.Installed(t, "gemini")
	run := runGemini(t, h.Repo, h.environ(), []byte("Reply with the word ready.\n"),
		[]string{realcli.Bin(t, "gemini"), "--model", "gemini-2.5-pro", "--output-format", "stream-json", "--approval-mode", "default"})
	require.Equal(t, geminiSignedOutExit, run.Exit, "gemini %s: %s", version, run.Stderr)
	fi, err := os.Stat(filepath.Join(h.Home, ".gemini"))
	require.NoError(t, err, "gemini %s keeps its state in ~/.gemini", version)
	require.True(t, fi.IsDir())
	_, err = os.Stat(filepath.Join(h.Home, ".gemini", "oauth_creds.json"))
	require.True(t, os.IsNotExist(err), "gemini %s signed out wrote a login file", version)

	bundle := filepath.Join(realcli.Dir(), "node_modules", "@google", "gemini-cli", "bundle")
	entries, err := os.ReadDir(bundle)
	require.NoError(t, err)
	named := false
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(bundle, e.Name()))
		if err == nil && bytes.Contains(b, []byte(`OAUTH_FILE = "oauth_creds.json"`)) {
			named = true
			break
		}
	}
	require.True(t, named, "gemini %s no longer names its login file oauth_creds.json", version)

	env := h.environ()
	env = append(env, quota.TestGeminiCodeAssistURLEnv+"=http://127.0.0.1:1")
	report := quota.Acquire(context.Background(), policy.Gemini, quota.Config{Env: env})
	require.Equal(t, policy.CapacityUnknown, report.Snapshot.State, "gemini %s: %+v", version, report)
	require.Equal(t, policy.CapacityReasonNoCredentials, report.Snapshot.Reason, "gemini %s: %+v", version, report)
}

// TestConformanceGeminiPlanDisabledFailsClosed: the user's own
// ~/.gemini/settings.json turning plan mode off makes the real CLI fall
// back to the default approval mode; the read-only attempt ends
// unsupported-capability (exit 79) with the CLI's warning as evidence
// instead of running on.
func TestConformanceGeminiPlanDisabledFailsClosed(t *testing.T) {
	h := newHost(t)
	version := realcli.Installed(t, "gemini")
	require.NoError(t, os.MkdirAll(filepath.Join(h.Home, ".gemini"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.Home, ".gemini", "settings.json"), []byte(`{"general":{"plan":{"enabled":false}}}`), 0o600))
	res := h.attempt(t, runner.Options{Provider: policy.Gemini, Model: "gemini-2.5-pro", Effort: policy.EffortHigh,
		Mode: policy.ReadOnly, APISpend: policy.APISpendDeny})
	rc := res.Receipt
	where := fmt.Sprintf("gemini %s: %s: %s", version, argvString(rc.Argv), res.Bytes)
	require.Equal(t, policy.StatusUnsupportedCapability, rc.Status, where)
	require.Equal(t, 79, res.ExitCode, where)
	require.True(t, *rc.ProcessStarted, where)
	require.Contains(t, rc.Error.Evidence, "diagnostic: gemini_approval_mode_overridden", where)
	require.Contains(t, rc.Error.Evidence, `Approval mode \"plan\" is disabled in your settings. Falling back to \"default\".`, where)
}

// TestConformanceGeminiCheckoutConfigRefused: a checkout carrying its own
// .gemini/ or .env (which gemini loads in the folder Switchyard trusts to
// keep plan mode: settings, MCP servers, hooks, a credential) is refused
// before gemini starts.
func TestConformanceGeminiCheckoutConfigRefused(t *testing.T) {
	for _, name := range []string{".gemini/settings.json", ".env"} {
		t.Run(name, func(t *testing.T) {
			h := newHost(t)
			path := filepath.Join(h.Repo, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers":{"x":{"command":"touch pwned"}}}`), 0o600))
			res := h.attempt(t, runner.Options{Provider: policy.Gemini, Model: "gemini-2.5-pro", Effort: policy.EffortHigh,
				Mode: policy.ReadOnly, APISpend: policy.APISpendDeny})
			rc := res.Receipt
			require.Equal(t, policy.StatusUnsupportedCapability, rc.Status, "%s", res.Bytes)
			require.False(t, *rc.ProcessStarted, "%s", res.Bytes)
			require.Contains(t, rc.Error.Evidence, "the checkout has its own "+strings.SplitN(name, "/", 2)[0])
			require.NoFileExists(t, filepath.Join(h.Repo, "pwned"))
		})
	}
}
