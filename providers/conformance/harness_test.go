package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// attemptTimeout bounds one signed-out attempt of a real CLI. A signed-out
// CLI answers in seconds; the bound is generous because CI shares two cores.
const attemptTimeout = 3 * time.Minute

// host is a fresh, signed-out machine for one test: an empty HOME (and XDG
// directories inside it), PATH holding the real CLIs before the system's,
// a git checkout to work in, and a scratch directory for attempt files.
type host struct {
	Home, Repo, Work, BinDir string
	Env                      map[string]string
}

// newHost builds a fresh host. Nothing of the caller's environment reaches
// it but the system PATH entries, so a developer's own logins and API keys
// never sign a real CLI in.
func newHost(t *testing.T) *host {
	t.Helper()
	bin := realcli.BinDir(t)
	root := t.TempDir()
	h := &host{Home: filepath.Join(root, "home"), Repo: filepath.Join(root, "repo"), Work: filepath.Join(root, "work"), BinDir: bin}
	for _, d := range []string{h.Home, h.Repo, h.Work} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	h.Env = map[string]string{
		"HOME":            h.Home,
		"PATH":            bin + string(os.PathListSeparator) + "/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME": filepath.Join(h.Home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(h.Home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(h.Home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(h.Home, ".local", "state"),
		"TMPDIR":          filepath.Join(root, "tmp"),
		"LANG":            "C.UTF-8",
	}
	require.NoError(t, os.MkdirAll(h.Env["TMPDIR"], 0o700))
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.Repo
		cmd.Env = h.environ()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(h.Repo, "README.md"), []byte("# conformance checkout\n"), 0o600))
	git("init", "-q")
	git("add", ".")
	git("-c", "user.name=conformance", "-c", "user.email=conformance@invalid", "commit", "-qm", "init")
	return h
}

// environ is the host's environment in os/exec form.
func (h *host) environ() []string {
	env := make([]string, 0, len(h.Env))
	for k, v := range h.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// cli describes one real CLI for failure messages: name, installed version.
func cli(t *testing.T, name string) string {
	t.Helper()
	return fmt.Sprintf("%s %s", name, realcli.Installed(t, name))
}

// command runs the real CLI with argv (argv[0] is the command name, found on
// the host's PATH) in dir, bounded by attemptTimeout, and returns its
// combined output and exit code. Stdin is empty.
func (h *host) command(t *testing.T, dir string, argv ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(h.BinDir, argv[0]), argv[1:]...)
	cmd.Dir = dir
	cmd.Env = h.environ()
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "%s: %q did not finish within %s: %s", cli(t, argv[0]), argv, attemptTimeout, out)
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		require.True(t, ok, "%s: %q: %v", cli(t, argv[0]), argv, err)
		code = exit.ExitCode()
	}
	return string(out), code
}

// attempt runs one attempt through the runner's typed core against the real
// CLI on the host's PATH and returns its settled result. o needs Provider,
// Model, Effort and Mode; the rest is filled: parent codex (claude for a
// codex attempt, which a native codex lane would cover), a one-line
// prompt, the host's checkout as cwd, fresh output and receipt paths.
func (h *host) attempt(t *testing.T, o runner.Options) runner.Result {
	t.Helper()
	if o.Parent == "" {
		o.Parent = policy.Parent("codex")
		if o.Provider == policy.Provider("codex") {
			o.Parent = policy.Parent("claude")
		}
	}
	dir, err := os.MkdirTemp(h.Work, string(o.Provider)+"-")
	require.NoError(t, err)
	prompt := filepath.Join(dir, "prompt.md")
	require.NoError(t, os.WriteFile(prompt, []byte("Reply with the word ready.\n"), 0o600))
	o.Prompt = prompt
	if o.Cwd == "" {
		o.Cwd = h.Repo
	}
	o.Output = filepath.Join(dir, "output.md")
	o.Receipt = filepath.Join(dir, "receipt.json")
	o.Progress = filepath.Join(dir, "progress.json")
	var stdout, stderr strings.Builder
	r, err := runner.New(runner.Config{Env: h.Env, Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	res, err := r.Run(ctx, o)
	require.NoError(t, err, "runner refused the options: %s", stderr.String())
	require.NoError(t, ctx.Err(), "%s attempt did not settle within %s", o.Provider, attemptTimeout)
	return res
}

// argvString renders a receipt's argv for a failure message.
func argvString(argv []string) string { return strings.Join(argv, " ") }
