package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// openCodeModel is the model the OpenCode conformance attempts pin: any
// exact provider/model slug; signed out, no model is ever reached.
const openCodeModel = "openai/gpt-5.5"

// openCodeStep is one probe the OpenCode spec built, as the real CLI ran
// it, and the spec's verdict on it.
type openCodeStep struct {
	Argv    []string
	Capture providers.Capture
	Verdict providers.PreflightVerdict
}

// openCodeRequest is the request the runner builds for one OpenCode
// attempt on the host: its private directory created (0700) beside a
// receipt path in the host's work directory, the real binary resolved.
func openCodeRequest(t *testing.T, h *host, mode policy.Access, adjust ...func(*providers.Request)) providers.Request {
	t.Helper()
	dir, err := os.MkdirTemp(h.Work, "opencode-probe-")
	require.NoError(t, err)
	req := providers.Request{
		Parent: policy.Parent("codex"), Provider: policy.OpenCode, Model: openCodeModel, CLIModel: openCodeModel,
		Effort: policy.EffortDefault, Mode: mode, Cwd: h.Repo, Prompt: []byte("Reply with the word ready.\n"),
		Output: filepath.Join(dir, "output.md"), Receipt: filepath.Join(dir, "receipt.json"),
		APISpend: policy.APISpendApproved, Home: h.Home, Executable: realcli.Bin(t, "opencode"), ParentEnv: h.Env,
	}
	req.PrivateDir = req.Receipt + ".opencode-config"
	for _, a := range adjust {
		a(&req)
	}
	require.NoError(t, os.Mkdir(req.PrivateDir, 0o700))
	return req
}

// runOpenCodeProbes runs the spec's preflight probes against the real CLI
// as the runner does: Prepare's overlay, each probe in the cwd with the
// constructed child environment, a passed probe's continuation (contract,
// private files, overlay, further probes) applied. It stops after the
// first probe the spec fails and returns every step, the request as the
// probes left it (Contract set) and the overlay of later children.
func runOpenCodeProbes(t *testing.T, h *host, req providers.Request) ([]openCodeStep, providers.Request, []string) {
	t.Helper()
	spec, err := providers.Lookup(policy.OpenCode)
	require.NoError(t, err)
	files, overlay, err := spec.Prepare(req)
	require.NoError(t, err)
	writeOpenCodeFiles(t, files)
	require.NoError(t, spec.Check(req))
	probes := spec.Preflight(req)
	var steps []openCodeStep
	for i := 0; i < len(probes); i++ {
		c := runCapture(t, h, req.Cwd, probes[i], providers.ChildEnv(spec, h.Env, req, overlay))
		v := spec.ReadPreflight(req, i, c)
		steps = append(steps, openCodeStep{Argv: probes[i], Capture: c, Verdict: v})
		if v.Status != "" {
			break
		}
		if v.Then != nil {
			req.Contract, overlay = v.Then.Contract, v.Then.Overlay
			writeOpenCodeFiles(t, v.Then.Files)
			probes = append(probes[:i+1:i+1], v.Then.Probes...)
		}
	}
	return steps, req, overlay
}

// writeOpenCodeFiles creates a spec's private files exclusively, as the
// runner does.
func writeOpenCodeFiles(t *testing.T, files []providers.File) {
	t.Helper()
	for _, f := range files {
		if f.Dir {
			require.NoError(t, os.Mkdir(f.Path, os.FileMode(f.Mode)))
			continue
		}
		fh, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(f.Mode))
		require.NoError(t, err)
		_, err = fh.Write(f.Content)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
}

// runCapture runs argv (an absolute path first) in dir with env and
// stdin from /dev/null, bounded by attemptTimeout, and captures it.
func runCapture(t *testing.T, h *host, dir string, argv, env []string) providers.Capture {
	t.Helper()
	return runCaptureFrom(t, dir, argv, env, "")
}

// runCaptureFrom is runCapture with stdin read from the file stdin ("" is
// /dev/null).
func runCaptureFrom(t *testing.T, dir string, argv, env []string, stdin string) providers.Capture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		f, err := os.Open(stdin)
		require.NoError(t, err)
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s (opencode %s): %q did not finish within %s", filepath.Base(argv[0]), realcli.Installed(t, "opencode"), argv, attemptTimeout)
	}
	c := providers.Capture{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%q could not start: %v", argv, err)
	}
	c.ExitCode = &code
	return c
}

// limitedBuffer keeps the first MiB a probe writes.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 1<<20 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte { return l.b }

// openCodeAccepted reports whether the real CLI accepted a probe's argv:
// it exited 0. An unknown flag or subcommand makes opencode print its
// usage on stderr and exit 1.
func openCodeAccepted(c providers.Capture) bool { return c.ExitCode != nil && *c.ExitCode == 0 }

// openCodeRunAccepted reports whether the real CLI accepted a `run`
// argv: signed out it exits 1 too, but only after parsing the argv and
// creating a session, so stdout holds JSON events naming that session. A
// usage error prints nothing on stdout.
func openCodeRunAccepted(c providers.Capture) bool {
	lines := strings.Split(strings.TrimSpace(string(c.Stdout)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return false
	}
	for _, l := range lines {
		var ev struct {
			Type      string `json:"type"`
			SessionID string `json:"sessionID"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil || ev.Type == "" || !strings.HasPrefix(ev.SessionID, "ses_") {
			return false
		}
	}
	return true
}

// stepArgvs lists the steps' argv for failure messages.
func stepArgvs(steps []openCodeStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, argvString(s.Argv))
	}
	return out
}

// misspell returns argv with its element i replaced.
func misspell(argv []string, i int, with string) []string {
	out := slices.Clone(argv)
	out[i] = with
	return out
}
