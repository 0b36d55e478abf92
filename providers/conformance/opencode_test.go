package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// The OpenCode conformance suite. OpenCode has no single signed-out answer
// (V1 runs no login probe), so its bar is: every argv the spec builds is
// accepted (opencode prints its usage on stderr and exits 1 for an unknown
// flag or subcommand, which fails every check below; each test runs one
// misspelled argv as a control to show it), the probes pass, and a
// signed-out attempt reaches its invocation with the private configuration
// intact, where the CLI answers with one error event. V1 builds no
// continuation or session argv, so there is none to check.

// TestConformanceOpenCodeVersionBanner: the real `opencode --version`
// banner parses with the spec's parser, names the installed release and
// selects the V1 contract.
func TestConformanceOpenCodeVersionBanner(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	out, code := h.command(t, h.Repo, "opencode", "--version")
	require.Equal(t, 0, code, "%s: opencode --version: %s", cli(t, "opencode"), out)
	v, contract, err := providers.ParseOpenCodeBanner(out)
	require.NoError(t, err, "%s: banner %q", cli(t, "opencode"), out)
	require.Equal(t, realcli.Installed(t, "opencode"), v.String(), "%s: banner %q", cli(t, "opencode"), out)
	require.Equal(t, providers.OpenCodeV1, contract, "%s: banner %q", cli(t, "opencode"), out)
}

// TestConformanceOpenCodeKnownVersions: the pinned release is one of the
// spec's known (verified) versions.
func TestConformanceOpenCodeKnownVersions(t *testing.T) {
	t.Parallel()
	spec, err := providers.Lookup(policy.OpenCode)
	require.NoError(t, err)
	require.Contains(t, spec.KnownVersions, realcli.Pinned(t, "opencode"))
}

// TestConformanceOpenCodeReadOnlyProbes: the read-only probes the spec
// builds (`--version`, then `--pure debug config` under the private V1
// configuration) are accepted and pass, and what the CLI writes into the
// private directory (its global configuration directory and .gitignore)
// leaves the configuration intact. Control: `--pur debug config` is
// refused.
func TestConformanceOpenCodeReadOnlyProbes(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	spec, _ := providers.Lookup(policy.OpenCode)
	steps, req, overlay := runOpenCodeProbes(t, h, openCodeRequest(t, h, policy.ReadOnly))
	require.Len(t, steps, 2, "%s: probes %v", cli(t, "opencode"), stepArgvs(steps))
	require.Equal(t, []string{req.Executable, "--version"}, steps[0].Argv)
	require.Equal(t, []string{req.Executable, "--pure", "debug", "config"}, steps[1].Argv)
	for _, s := range steps {
		require.True(t, openCodeAccepted(s.Capture), "%s refused %q: %s", cli(t, "opencode"), argvString(s.Argv), s.Capture.Stderr)
		require.Empty(t, s.Verdict.Status, "%s: %q: %s", cli(t, "opencode"), argvString(s.Argv), s.Verdict.Evidence)
	}
	require.Contains(t, steps[1].Verdict.Evidence, "V1 configuration verified")
	require.NoError(t, spec.Check(req), "%s: the private configuration after the probes", cli(t, "opencode"))

	global, err := os.ReadDir(filepath.Join(req.PrivateDir, "opencode"))
	require.NoError(t, err, "%s creates its global configuration directory in the private directory", cli(t, "opencode"))
	require.Len(t, global, 1, "%s writes only its .gitignore there", cli(t, "opencode"))
	require.Equal(t, ".gitignore", global[0].Name())

	bad := misspell(steps[1].Argv, 1, "--pur")
	c := runCapture(t, h, req.Cwd, bad, providers.ChildEnv(spec, h.Env, req, overlay))
	require.False(t, openCodeAccepted(c), "control: %s accepted the misspelled %q", cli(t, "opencode"), argvString(bad))
}

// TestConformanceOpenCodeSubscriptionProbes: a ChatGPT-subscription
// attempt's probes add `--pure auth list`; the real CLI accepts it and,
// signed out, lists no credential, which the spec answers
// billing-policy-blocked before any model call. Control: `auth lst` is
// refused.
func TestConformanceOpenCodeSubscriptionProbes(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	spec, _ := providers.Lookup(policy.OpenCode)
	steps, req, overlay := runOpenCodeProbes(t, h, openCodeRequest(t, h, policy.ReadOnly, func(r *providers.Request) {
		r.ChatGPTSubscription, r.APISpend = true, policy.APISpendDeny
		r.Model, r.CLIModel = providers.OpenCodeChatGPTModel, providers.OpenCodeChatGPTModel
	}))
	require.Len(t, steps, 3, "%s: probes %v", cli(t, "opencode"), stepArgvs(steps))
	auth := steps[2]
	require.Equal(t, []string{req.Executable, "--pure", "auth", "list"}, auth.Argv)
	for _, s := range steps {
		require.True(t, openCodeAccepted(s.Capture), "%s refused %q: %s", cli(t, "opencode"), argvString(s.Argv), s.Capture.Stderr)
	}
	require.Contains(t, string(auth.Capture.Stdout), "0 credentials", "%s: %q signed out", cli(t, "opencode"), argvString(auth.Argv))
	require.Equal(t, policy.StatusBillingPolicyBlocked, auth.Verdict.Status, "%s: %q: %s", cli(t, "opencode"), argvString(auth.Argv), auth.Verdict.Evidence)
	t.Logf("%s signed out: %q answers %s: %s", cli(t, "opencode"), argvString(auth.Argv), auth.Verdict.Status, auth.Verdict.Evidence)

	bad := misspell(auth.Argv, 3, "lst")
	c := runCapture(t, h, req.Cwd, bad, providers.ChildEnv(spec, h.Env, req, overlay))
	require.False(t, openCodeAccepted(c), "control: %s accepted the misspelled %q", cli(t, "opencode"), argvString(bad))
}

// TestConformanceOpenCodeModelsListing: the discovery probe
// (`opencode models`) is accepted and its output reads as provider/model
// IDs. Control: `debug models`, which the seed named, is not a command.
func TestConformanceOpenCodeModelsListing(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	probe := providers.ModelsProbeFor(policy.OpenCode)
	argv := append([]string{"opencode"}, probe.Argv...)
	c := runSplit(t, h, argv)
	require.True(t, openCodeAccepted(c), "%s refused %q: %s", cli(t, "opencode"), argvString(argv), c.Stderr)
	require.Empty(t, c.Stderr, "%s: %q", cli(t, "opencode"), argvString(argv))
	ids, err := probe.Read(c.Stdout)
	require.NoError(t, err, "%s: %q", cli(t, "opencode"), argvString(argv))
	require.NotEmpty(t, ids, "%s: %q listed nothing", cli(t, "opencode"), argvString(argv))

	_, code := h.command(t, h.Repo, "opencode", "debug", "models")
	require.NotEqual(t, 0, code, "control: %s accepted `opencode debug models`", cli(t, "opencode"))
}

// TestConformanceOpenCodeInvocationAccepted: the read-only V1 invocation
// the spec builds, run directly after its probes with the prompt on stdin,
// is accepted: signed out the CLI creates its session and prints one error
// event (exit 1). Control: `--formt json` is refused with no event.
func TestConformanceOpenCodeInvocationAccepted(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	spec, _ := providers.Lookup(policy.OpenCode)
	steps, req, overlay := runOpenCodeProbes(t, h, openCodeRequest(t, h, policy.ReadOnly))
	require.Empty(t, steps[len(steps)-1].Verdict.Status, "%s: probes %v", cli(t, "opencode"), stepArgvs(steps))
	cmd, err := spec.Invocation(req)
	require.NoError(t, err)
	require.Equal(t, []string{req.Executable, "run", "--pure", "--format", "json", "--model", openCodeModel,
		"--agent", providers.OpenCodeAgentName(req), "--dir", req.Cwd, "--title", "pstack-worker"}, cmd.Argv)
	env := providers.ChildEnv(spec, h.Env, req, overlay)
	c := runCaptureStdin(t, h, cmd.Dir, cmd.Argv, env, req.Prompt)
	require.True(t, openCodeRunAccepted(c), "%s refused %q (exit %v): stdout %q stderr %q", cli(t, "opencode"), argvString(cmd.Argv), *c.ExitCode, c.Stdout, c.Stderr)
	require.NoError(t, spec.Check(req), "%s: the private configuration after the invocation", cli(t, "opencode"))

	bad := misspell(cmd.Argv, 3, "--formt")
	c = runCaptureStdin(t, h, cmd.Dir, bad, env, req.Prompt)
	require.False(t, openCodeRunAccepted(c), "control: %s accepted the misspelled %q", cli(t, "opencode"), argvString(bad))
}

// TestConformanceOpenCodeSignedOutAttempt: a signed-out read-only V1
// attempt through the runner passes its preflight with the private
// configuration intact, starts the invocation the spec builds, and ends
// child-failed with the CLI's own words: "UnknownError: Unexpected server
// error. Check server logs for details.".
func TestConformanceOpenCodeSignedOutAttempt(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	res := h.attempt(t, runner.Options{Provider: policy.OpenCode, Model: openCodeModel, Effort: policy.EffortDefault,
		Mode: policy.ReadOnly, APISpend: policy.APISpendApproved, AllowUnverifiedContainment: true})
	rc := res.Receipt
	what := cli(t, "opencode") + ": " + argvString(rc.Argv)
	require.Equal(t, policy.PreflightPassed, rc.Preflight.Status, "%s: preflight %q: %s", what, argvString(rc.Preflight.Argv), rc.Preflight.Evidence)
	require.Contains(t, rc.Preflight.Evidence, "opencode "+realcli.Installed(t, "opencode")+" selects the V1 contract", what)
	require.Contains(t, rc.Preflight.Evidence, "V1 configuration verified", what)
	require.NotNil(t, rc.ProcessStarted, what)
	require.True(t, *rc.ProcessStarted, what)
	require.Equal(t, []string{"run", "--pure", "--format", "json", "--model", openCodeModel}, rc.Argv[1:7], what)
	require.Equal(t, policy.StatusChildFailed, rc.Status, "%s: %s", what, res.Bytes)
	require.NotNil(t, rc.Error, what)
	require.Contains(t, rc.Error.Message, "UnknownError: Unexpected server error. Check server logs for details.", what)
}

// runSplit runs argv (argv[0] a command of the real install) in the
// host's checkout with its environment, stdout and stderr apart.
func runSplit(t *testing.T, h *host, argv []string) providers.Capture {
	t.Helper()
	return runCapture(t, h, h.Repo, append([]string{filepath.Join(h.BinDir, argv[0])}, argv[1:]...), h.environ())
}

// runCaptureStdin is runCapture with stdin.
func runCaptureStdin(t *testing.T, h *host, dir string, argv, env []string, stdin []byte) providers.Capture {
	t.Helper()
	f := filepath.Join(h.Work, "stdin-"+strings.ReplaceAll(t.Name(), "/", "-"))
	require.NoError(t, os.WriteFile(f, stdin, 0o600))
	return runCaptureFrom(t, dir, argv, env, f)
}
