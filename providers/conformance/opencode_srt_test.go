package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// srtDependencies are what the sandbox runtime needs on Linux, in the
// order srt 0.0.83 checks and names them: the command looked up on PATH
// and srt's name for it.
var srtDependencies = []struct{ Command, Name string }{
	{"rg", "ripgrep (rg)"},
	{"bwrap", "bubblewrap (bwrap)"},
	{"socat", "socat"},
}

// missingOnPath names the srt dependencies none of pathList's directories
// holds as an executable file.
func missingOnPath(pathList string) []string {
	var out []string
	for _, d := range srtDependencies {
		found := false
		for _, dir := range filepath.SplitList(pathList) {
			if fi, err := os.Stat(filepath.Join(dir, d.Command)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				found = true
				break
			}
		}
		if !found {
			out = append(out, d.Name)
		}
	}
	return out
}

// TestConformanceSrtStartupProbe: the OpenCode writer's sandboxed startup
// probe (`<private>/control/shell -c true`, the wrapper that execs the real
// srt with the attempt's policy) runs against the pinned sandbox runtime
// after the writer's other probes (whose argv the real opencode accepts).
// It passes when bubblewrap, socat and ripgrep are on PATH; otherwise the
// probe, and a writer attempt through the runner, fail unavailable-cli
// naming exactly the missing ones (as `which` finds them), and no model
// is invoked.
func TestConformanceSrtStartupProbe(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	out, code := h.command(t, h.Repo, "srt", "--version")
	require.Equal(t, 0, code, "%s: srt --version: %s", cli(t, "srt"), out)
	require.Equal(t, realcli.Installed(t, "srt"), strings.TrimSpace(out), cli(t, "srt"))

	steps, req, _ := runOpenCodeProbes(t, h, openCodeRequest(t, h, policy.IsolatedWrite))
	require.Len(t, steps, 3, "%s: probes %v", cli(t, "opencode"), stepArgvs(steps))
	for _, s := range steps[:2] {
		require.True(t, openCodeAccepted(s.Capture), "%s refused %q: %s", cli(t, "opencode"), argvString(s.Argv), s.Capture.Stderr)
		require.Empty(t, s.Verdict.Status, "%s: %q: %s", cli(t, "opencode"), argvString(s.Argv), s.Verdict.Evidence)
	}
	probe := steps[2]
	require.Equal(t, []string{filepath.Join(req.PrivateDir, "control", "shell"), "-c", "true"}, probe.Argv)
	missing := missingOnPath(h.Env["PATH"])
	what := cli(t, "srt") + ": " + argvString(probe.Argv)
	if len(missing) == 0 {
		require.Empty(t, probe.Verdict.Status, "%s: %s (stderr %q)", what, probe.Verdict.Evidence, probe.Capture.Stderr)
		return
	}
	t.Logf("%s fails on this host: %s", what, probe.Verdict.Evidence)
	require.Equal(t, policy.StatusUnavailableCLI, probe.Verdict.Status, what)
	require.Contains(t, probe.Verdict.Evidence, "the sandbox runtime's dependencies are not available (missing "+strings.Join(missing, ", ")+")", what)
	require.NotContains(t, probe.Verdict.Evidence, "another dependency problem", what)

	res := h.attempt(t, runner.Options{Provider: policy.OpenCode, Model: openCodeModel, Effort: policy.EffortDefault,
		Mode: policy.IsolatedWrite, APISpend: policy.APISpendApproved, AllowUnverifiedContainment: true})
	rc := res.Receipt
	require.Equal(t, policy.StatusUnavailableCLI, rc.Status, "%s: %s", what, res.Bytes)
	require.Equal(t, probe.Argv[1:], rc.Preflight.Argv[1:], what)
	require.Contains(t, rc.Preflight.Evidence, "(missing "+strings.Join(missing, ", ")+")", what)
	require.Empty(t, rc.Argv, "%s: no invocation", what)
}
