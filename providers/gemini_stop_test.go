package providers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// geminiCapture reads a workload transcript of testdata/transcripts/gemini
// (the signed-out captures of gemini 0.61.0) as a settled capture; missing
// files read as empty, a missing exit as 0.
func geminiCapture(t *testing.T, scenario string) Capture {
	t.Helper()
	dir := filepath.Join("..", "testdata", "transcripts", "gemini", scenario, "workload")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		return b
	}
	c := Capture{Stdout: read("stdout"), Stderr: read("stderr"), ExitCode: new(int)}
	if base := strings.TrimSpace(string(read("base"))); base != "" && c.Stdout == nil {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "transcripts", "gemini", base, "stdout"))
		require.NoError(t, err)
		c.Stdout = []byte(strings.NewReplacer("{{session}}", "s-1", "{{model}}", "gemini-2.5-pro",
			"{{reported_model}}", "gemini-2.5-pro", "{{cwd}}", "/work/repo").Replace(string(b)))
	}
	if e := strings.TrimSpace(string(read("exit"))); e != "" {
		var code int
		for _, r := range e {
			require.True(t, r >= '0' && r <= '9', "exit %q", e)
			code = code*10 + int(r-'0')
		}
		c.ExitCode = &code
	}
	return c
}

func classifyGemini(t *testing.T, mode policy.Access, c Capture) Classification {
	t.Helper()
	req := testRequest(policy.Gemini, "gemini-2.5-pro", mode)
	got := Classify(&Spec{Provider: policy.Gemini}, req, c, parseGemini(req, c))
	requireClassificationShape(t, got)
	return got
}

const capturedSignedOut = "Please set an Auth method in your /home/sim/.gemini/settings.json or specify one of the " +
	"following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"

// TestGeminiClassifySignedOutCapture: the captured signed-out run (exit 41
// and the sign-in error) is unauthenticated, with the CLI's words as
// evidence.
func TestGeminiClassifySignedOutCapture(t *testing.T) {
	t.Parallel()
	c := geminiCapture(t, "unauthenticated")
	require.Equal(t, capturedSignedOut+"\n", string(c.Stderr), "the capture changed")
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		got := classifyGemini(t, mode, c)
		require.Equal(t, policy.StatusUnauthenticated, got.Status, "%s: %+v", mode, got.Error)
		require.Equal(t, policy.PhaseInvocation, got.Phase)
		require.False(t, *got.TerminalSuccess)
		require.Contains(t, got.Error.Message, capturedSignedOut)
		require.Contains(t, got.Error.Evidence, "diagnostic: gemini_no_auth_method")
		require.Contains(t, got.Error.Evidence, `"stderr":"`+capturedSignedOut+`"`)
		require.Empty(t, got.QuotaCode)
	}
}

// TestGeminiClassifyUntrustedFolderCapture: the captured runs whose
// approval mode the CLI replaced (an untrusted folder; plan turned off in
// the checkout's settings), the warning then the sign-in error, fail
// closed as unsupported-capability: the override wins over the sign-in
// stop. So does the override over a successful stream (the composed
// scenario): a success under the default approval mode never counts.
func TestGeminiClassifyUntrustedFolderCapture(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario, line string
		phase          policy.FailurePhase
		success        bool
	}{
		{"untrusted-folder", geminiModeOverridden, policy.PhaseInvocation, false},
		{"untrusted-folder-success", geminiModeOverridden, policy.PhasePostprocess, true},
		{"plan-disabled", geminiPlanDisabled, policy.PhaseInvocation, false},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			c := geminiCapture(t, tc.scenario)
			require.True(t, strings.HasPrefix(string(c.Stderr), tc.line+"\n"), "the capture changed: %q", c.Stderr)
			got := classifyGemini(t, policy.ReadOnly, c)
			require.Equal(t, policy.StatusUnsupportedCapability, got.Status, "%+v", got.Error)
			require.Equal(t, tc.phase, got.Phase)
			require.Equal(t, tc.success, *got.TerminalSuccess, "the parser's assessment is kept so a success is never replayed")
			require.Contains(t, got.Error.Evidence, "diagnostic: gemini_approval_mode_overridden")
			require.Contains(t, got.Error.Evidence, `"stderr":"`+strings.ReplaceAll(tc.line, `"`, `\"`)+`"`)
			require.Contains(t, got.Error.Message, tc.line)
		})
	}
}

// TestGeminiStopNeedsTheExactText: anything but the exact known lines with
// the known exit status stays what it was before (child-failed or
// complete).
func TestGeminiStopNeedsTheExactText(t *testing.T) {
	t.Parallel()
	success := geminiCapture(t, "untrusted-folder-success").Stdout
	for _, tc := range []struct {
		name, stdout, stderr string
		exit                 int
		want                 policy.ReceiptStatus
	}{
		{"sign-in text with exit 1", "", capturedSignedOut + "\n", 1, policy.StatusChildFailed},
		{"exit 41 without the text", "", "Error authenticating: something else\n", 41, policy.StatusChildFailed},
		{"sign-in text cut short", "", strings.TrimSuffix(capturedSignedOut, ", GOOGLE_GENAI_USE_GCA") + "\n", 41, policy.StatusChildFailed},
		{"sign-in text inside a longer line", "", "model said: " + capturedSignedOut + "\n", 41, policy.StatusChildFailed},
		{"sign-in text twice", "", capturedSignedOut + "\n" + capturedSignedOut + "\n", 41, policy.StatusChildFailed},
		{"sign-in text on stdout", capturedSignedOut + "\n", "", 41, policy.StatusChildFailed},
		{"sign-in text with a clean exit", "", capturedSignedOut + "\n", 0, policy.StatusMalformedOutput},
		{"override warning in the model's answer", strings.Replace(string(success), "no changes were needed.", strings.ReplaceAll(geminiModeOverridden, `"`, `\"`), 1), "", 0, policy.StatusComplete},
		{"another override warning", string(success), `Approval mode overridden to "plan" because the current folder is not trusted.` + "\n", 0, policy.StatusComplete},
		{"plan-disabled warning over a success", string(success), geminiPlanDisabled + "\n", 0, policy.StatusUnsupportedCapability},
		{"styled override warning", string(success), "\x1b[33m" + geminiModeOverridden + "\x1b[0m\r\n", 0, policy.StatusUnsupportedCapability},
		{"styled sign-in text", "", "\x1b[31m" + capturedSignedOut + "\x1b[0m\n", 41, policy.StatusUnauthenticated},
		{"sign-in text with a spaced home", "", strings.Replace(capturedSignedOut, "/home/sim", "/Users/A User", 1) + "\n", 41, policy.StatusUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code := tc.exit
			got := classifyGemini(t, policy.ReadOnly, Capture{Stdout: []byte(tc.stdout), Stderr: []byte(tc.stderr), ExitCode: &code})
			require.Equal(t, tc.want, got.Status, "%+v", got.Error)
		})
	}
}

// TestGeminiPrepareTrustsOnlyTheCwd: the attempt's private configuration
// holds the only trusted-folders file the child reads, trusting the cwd
// and nothing else; the user's ~/.gemini is not named.
func TestGeminiPrepareTrustsOnlyTheCwd(t *testing.T) {
	t.Parallel()
	spec := geminiSpec()
	req := testRequest(policy.Gemini, "gemini-2.5-pro", policy.ReadOnly)
	req.Cwd, req.PrivateDir, req.Home = "/work/repo", "/work/out/receipt.json.private", "/home/user"
	files, overlay, err := spec.Prepare(req)
	require.NoError(t, err)
	require.Equal(t, []File{{Path: "/work/out/receipt.json.private/trustedFolders.json", Mode: 0o600,
		Content: []byte(`{"/work/repo":"TRUST_FOLDER"}`)}}, files)
	require.Equal(t, []string{"GEMINI_CLI_TRUSTED_FOLDERS_PATH=/work/out/receipt.json.private/trustedFolders.json"}, overlay)
	env := ChildEnv(spec, map[string]string{"PATH": "/bin", "HOME": "/home/user",
		"GEMINI_CLI_TRUSTED_FOLDERS_PATH": "/home/user/.gemini/trustedFolders.json", "GEMINI_CLI_TRUST_WORKSPACE": "false"}, req, overlay)
	require.Contains(t, env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH=/work/out/receipt.json.private/trustedFolders.json")
	for _, kv := range env {
		require.False(t, strings.HasPrefix(kv, "GEMINI_CLI_TRUST_WORKSPACE="), "a parent trust override reached the child: %s", kv)
	}

	req.Cwd = ""
	_, _, err = spec.Prepare(req)
	require.Error(t, err, "no cwd, nothing to trust: refuse rather than trust everything")
}
