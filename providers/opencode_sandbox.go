package providers

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// OpenCode writers run their shell (V1 bash, V2 shell) only through the
// Anthropic sandbox runtime (`srt`, npm @anthropic-ai/sandbox-runtime):
// SHELL (and V2's `shell` setting) points at a wrapper script that execs
// `srt --settings <policy> -c <command>`, so every command the worker runs
// is confined. The wrapper and its policy live in a control directory
// inside the attempt's private directory (outside the worktree), are
// checked with the rest of the private files before the invocation, and
// are removed with it. A sandboxed startup probe (`<wrapper> -c true`)
// must pass before inference; a missing runtime or a failed probe stops the
// attempt, never retrying unsandboxed.

// SandboxRuntimeBinEnv pins the sandbox runtime executable (absolute);
// otherwise `srt` is looked up on PATH.
const SandboxRuntimeBinEnv = "SWITCHYARD_SRT_BIN"

// sandboxRuntimeInstall is the fix for a missing sandbox runtime.
const sandboxRuntimeInstall = "install the Anthropic sandbox runtime (npm i -g @anthropic-ai/sandbox-runtime) with its Linux or macOS dependencies, or set " + SandboxRuntimeBinEnv + "=/path/to/srt"

// openCodeControlDir is the writer's control directory.
func openCodeControlDir(req Request) string { return inPrivate(req, "control") }

// openCodeShellPath is the wrapper SHELL points at.
func openCodeShellPath(req Request) string { return filepath.Join(openCodeControlDir(req), "shell") }

// openCodeSandboxSettings is the sandbox runtime policy file.
func openCodeSandboxSettings(req Request) string {
	return filepath.Join(openCodeControlDir(req), "srt-settings.json")
}

// openCodeShellTmp and openCodeShellCache are the private temporary and
// cache directories shell commands may write.
func openCodeShellTmp(req Request) string   { return inPrivate(req, "tmp") }
func openCodeShellCache(req Request) string { return inPrivate(req, "cache") }

// findSandboxRuntime resolves the sandbox runtime from the parent
// environment: SWITCHYARD_SRT_BIN (absolute) or `srt` on PATH. The startup
// probe proves it runs.
func findSandboxRuntime(req Request) (string, error) {
	if v, ok := req.ParentEnv[SandboxRuntimeBinEnv]; ok {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("%s must be an absolute path; fix: %s", SandboxRuntimeBinEnv, sandboxRuntimeInstall)
		}
		return filepath.Clean(v), nil
	}
	for _, dir := range filepath.SplitList(req.ParentEnv["PATH"]) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, "srt"); executableFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("opencode writers run their shell only inside the sandbox runtime, and srt is not on PATH; fix: %s", sandboxRuntimeInstall)
}

// shellQuote single-quotes a path for the wrapper script; a path holding a
// quote or a newline is refused rather than escaped.
func shellQuote(p string) (string, error) {
	if strings.ContainsAny(p, "'\n\r\x00") {
		return "", fmt.Errorf("path %q cannot be used in the sandbox shell wrapper", p)
	}
	return "'" + p + "'", nil
}

// openCodeSandboxFiles are a writer's control files: the directories, the
// wrapper (0700) and the runtime policy (0600).
func openCodeSandboxFiles(req Request) ([]File, error) {
	srt, err := findSandboxRuntime(req)
	if err != nil {
		return nil, err
	}
	policyDoc, err := openCodeSandboxPolicy(req)
	if err != nil {
		return nil, err
	}
	var quoted []string
	for _, p := range []string{srt, openCodeSandboxSettings(req), openCodeShellTmp(req), openCodeShellCache(req)} {
		q, err := shellQuote(p)
		if err != nil {
			return nil, err
		}
		quoted = append(quoted, q)
	}
	script := "#!/bin/sh\n" +
		"# Switchyard OpenCode writer shell: every command runs inside the sandbox runtime.\n" +
		"# There is no unsandboxed path; a failure here is the command's failure.\n" +
		"if [ \"$#\" -ne 2 ] || [ \"$1\" != \"-c\" ]; then\n" +
		"  echo \"switchyard sandbox shell: only '-c COMMAND' is supported\" >&2\n" +
		"  exit 2\n" +
		"fi\n" +
		"# The runtime makes its bridge sockets in TMPDIR, and a Unix socket path\n" +
		"# holds at most 107 bytes (srt 0.0.83: \"Failed to create bridge sockets\"):\n" +
		"# it keeps the short TMPDIR the runner gives every contained child, or a\n" +
		"# fresh one under /tmp. The command itself gets the attempt's private TMPDIR.\n" +
		"if [ -n \"${TMPDIR:-}\" ] && [ \"${#TMPDIR}\" -le 60 ]; then\n" +
		"  srt_tmp=$TMPDIR\n" +
		"else\n" +
		"  srt_tmp=$(mktemp -d /tmp/switchyard-srt.XXXXXXXX) || exit 1\n" +
		"  trap 'rm -rf \"$srt_tmp\"' EXIT\n" +
		"  trap 'exit 130' INT\n" +
		"  trap 'exit 143' TERM\n" +
		"fi\n" +
		"XDG_CACHE_HOME=" + quoted[3] + "; export XDG_CACHE_HOME\n" +
		"TMPDIR=$srt_tmp " + quoted[0] + " --settings " + quoted[1] + " -c \"TMPDIR=" + quoted[2] + "; export TMPDIR; $2\"\n"
	return []File{
		privateDir(openCodeControlDir(req)),
		privateDir(openCodeShellTmp(req)),
		privateDir(openCodeShellCache(req)),
		{Path: openCodeShellPath(req), Mode: 0o700, Content: []byte(script)},
		privateFile(openCodeSandboxSettings(req), policyDoc),
	}, nil
}

// openCodeSandboxPolicy is the runtime policy: writes allowed in the
// worktree and the private temporary and cache directories, denied to the
// control directory and the worktree's .git entry; no network domain, no
// Unix socket, no local binding; weaker nested sandboxing off. Reads follow
// the runtime's defaults.
func openCodeSandboxPolicy(req Request) ([]byte, error) {
	doc := jsonObject{
		{"network", jsonObject{
			{"allowedDomains", []string{}},
			{"deniedDomains", []string{}},
			{"allowUnixSockets", []string{}},
			{"allowLocalBinding", false},
		}},
		{"filesystem", jsonObject{
			{"denyRead", []string{}},
			{"allowWrite", []string{req.Cwd, openCodeShellTmp(req), openCodeShellCache(req)}},
			{"denyWrite", []string{openCodeControlDir(req), filepath.Join(req.Cwd, ".git")}},
		}},
		{"enableWeakerNestedSandbox", false},
	}
	return renderJSON(doc)
}

// readOpenCodeSandboxProbe judges the sandboxed startup probe. When the
// runtime refused to start for missing dependencies (bubblewrap, socat,
// ripgrep on Linux), the evidence names them.
func readOpenCodeSandboxProbe(c Capture) PreflightVerdict {
	if !exited0(c) {
		why := ""
		if missing, other := srtMissingDependencies(c.Stderr); len(missing) > 0 || other {
			why = ": the sandbox runtime's dependencies are not available"
			if len(missing) > 0 {
				why += " (missing " + strings.Join(missing, ", ") + ")"
			}
			if other {
				why += " (and another dependency problem it reports)"
			}
		}
		return fail(policy.StatusUnavailableCLI, "the sandboxed shell startup probe failed (%s)%s; opencode writers never run an unsandboxed shell; fix: %s", exitText(c), why, sandboxRuntimeInstall)
	}
	return pass("sandboxed shell startup probe passed")
}

// srtDependencyError opens the sandbox runtime's refusal to start for
// missing dependencies (srt 0.0.83 prints "Error: Sandbox dependencies not
// available: <item>, <item>" on stderr and exits 1).
const srtDependencyError = "Sandbox dependencies not available: "

// srtMissingItem is one missing dependency as srt names it: "ripgrep (rg)
// not found", "bubblewrap (bwrap) not installed", "socat not installed".
var srtMissingItem = regexp.MustCompile(`^([a-z][a-z0-9-]{0,31})( \([a-z0-9._-]{1,32}\))? not (?:found|installed)$`)

// srtMissingDependencies reads srt's dependency refusal from its stderr:
// the dependencies it names as missing (name and command, as srt spells
// them), and whether it reported anything else (an item of another shape,
// which may carry a path, is never copied). Nothing when the refusal is
// absent.
func srtMissingDependencies(stderr []byte) (missing []string, other bool) {
	for _, line := range strings.Split(string(stderr), "\n") {
		_, list, ok := strings.Cut(strings.TrimSpace(line), srtDependencyError)
		if !ok {
			continue
		}
		for _, item := range strings.Split(list, ", ") {
			m := srtMissingItem.FindStringSubmatch(strings.TrimSpace(item))
			if m == nil {
				other = true
				continue
			}
			missing = append(missing, m[1]+m[2])
		}
		return missing, other
	}
	return nil, false
}
