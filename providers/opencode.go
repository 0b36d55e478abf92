package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// openCodeNativeAuth is the guard's route name for OpenCode: its native
// authentication can route through several upstream providers and
// credentials, so only an explicit --api-spend approved authorizes it;
// deny and an omitted (legacy) policy both block before the CLI starts.
const openCodeNativeAuth = "opencode native authentication (requires api-spend approved)"

// openCodeSubscriptionMisuse is the guard's route name for a ChatGPT
// subscription request outside its one allowed shape (the runner rejects
// that shape as a usage error first; the guard fails closed behind it).
const openCodeSubscriptionMisuse = "opencode chatgpt-subscription mode (requires api-spend deny and " + OpenCodeChatGPTModel + "@default)"

// OpenCodeChatGPTModel is the only model a ChatGPT-subscription attempt
// (--opencode-chatgpt-subscription) may run, at default effort.
const OpenCodeChatGPTModel = "openai/gpt-6.1-sol"

// openCodeChatGPTEndpoint is the endpoint V2's private configuration
// configures for the subscription mode: a configured endpoint, not an
// attestation of the route the CLI finally resolves.
const openCodeChatGPTEndpoint = "https://chatgpt.com/backend-api/codex"

// The native OpenCode contracts a version banner selects
// (Request.Contract).
const (
	openCodeContractV1 = "v1"
	openCodeContractV2 = "v2"
)

// openCodeTitle is the fixed session title: it avoids automatic title
// generation (a model call of its own).
const openCodeTitle = "pstack-worker"

func init() { register(openCodeSpec()) }

// openCodeSpec describes OpenCode on both native contracts, selected once
// per attempt from the `opencode --version` banner by stable major: the
// restored V1 (>=1.18.29 <2; `opencode run --pure --format json`, one
// private opencode.json through OPENCODE_CONFIG, the streamed transcript
// is the delivery) and V2 (>=2.0.0 <3; `opencode run --standalone
// --format json`, a private config/ directory through
// OPENCODE_CONFIG_DIR, delivery from one `opencode session export
// --standalone` after the workload).
//
// The private directory <receipt>.opencode-config exists (0700, created
// exclusively by the runner) before the version probe, which runs with
// private configuration discovery and no contract-specific pointer. The
// banner's continuation then writes the contract's files (0600), switches
// the environment and runs `debug config`, which must report exactly the
// private configuration; a ChatGPT-subscription attempt adds its auth
// listing and a second configuration check. The files and the directory
// are checked once more immediately before the invocation.
//
// Writers get edit (and, on V2, write with .git denied) and a shell that
// runs only inside the sandbox runtime (opencode_sandbox.go); read-only
// lanes get no shell.
func openCodeSpec() *Spec {
	s := &Spec{
		Provider:      policy.OpenCode,
		Binaries:      []string{"opencode"},
		Install:       "install OpenCode (npm i -g opencode-ai)",
		PrivateSuffix: ".opencode-config",
		Writer: WriterTools{Shell: true, Guidance: "Tools: read, glob and grep to inspect, edit (and write on OpenCode 2.x) to change files, " +
			"and the shell (bash on 1.x) for local checks: it runs every command inside a sandbox with writes limited to the worktree and no network, " +
			"so run commands in the foreground and treat a denied write or connection as final."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "opencode's shell runs inside the sandbox runtime (worktree writes only, no network), but its file tools are tool policy with no OS sandbox: shell confinement, not whole-provider isolation"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "opencode has no native sandbox: the agent permission rules allow only read, glob and grep, which is tool policy, not containment"},
		},
		// The verified releases: the conformance suite runs the pinned
		// npm release (testdata/realcli). The seed's fixture versions
		// (1.18.32; 2.0.0, 2.0.25-2.0.27) were never run here, and no V2
		// release is pinned, so none of them is listed.
		KnownVersions:     []string{"1.18.33"},
		QuotaSource:       QuotaUnsupported,
		ModelEvidence:     policy.EvidencePinnedArgv,
		Classify:          classifyOpenCodeStream, // classify_stream.go
		CLIModel:          slugModel(policy.OpenCode),
		SubscriptionModel: OpenCodeChatGPTModel,
		OwnEnv:            []string{}, // native login only: inherited API keys never reach the child
		RemoveEnv:         removeEnv("OPENCODE_*"),
		KeepEnv:           []string{"XDG_DATA_HOME"}, // the native login's data location
		Guard:             openCodeGuard,
		Parse:             parseOpenCodeContract,
		Export:            openCodeExportArgv,
		Check:             openCodeCheck,

		// Classification, model proof, discovery and sandbox scope. The
		// listing is `opencode models` (1.18.33 has no `debug models`); no
		// quota envelope was captured, so no adapter proves exhaustion.
		ModelMatch:     ModelMatchRevision,
		Models:         ModelsProbe{Argv: []string{"models"}, Read: readOpenCodeModels},
		QuotaAdapter:   noProvenQuota,
		TerminalFields: openCodeTerminalFields,
		// Its XDG data, config, state and cache directories; opencode.ai
		// (Zen/Go), models.dev and models.opencode.ai (its model lists;
		// 1.18.33 asks the latter at start) and the ChatGPT subscription
		// route.
		StateDirs: xdgDirs("opencode", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"),
		APIHosts:  https("opencode.ai", "models.dev", "models.opencode.ai", "chatgpt.com", "auth.openai.com"),
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		if err := openCodeModel(req.CLIModel); err != nil {
			return nil, nil, err
		}
		return nil, openCodeProbeOverlay(req), nil
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "--version")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n == 0 {
			return readOpenCodeVersion(s, req, c)
		}
		return readOpenCodeProbe(req, n, c)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := openCodeModel(req.CLIModel); err != nil {
			return Command{}, err
		}
		switch req.Contract {
		case openCodeContractV1:
			argv := cliArgv(s, req, "run", "--pure", "--format", "json", "--model", req.CLIModel,
				"--agent", OpenCodeAgentName(req), "--dir", req.Cwd, "--title", openCodeTitle)
			return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
		case openCodeContractV2:
			argv := cliArgv(s, req, "run", "--standalone", "--format", "json", "--model", req.CLIModel,
				"--agent", OpenCodeAgentName(req), "--title", openCodeTitle)
			return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
		}
		return Command{}, fmt.Errorf("opencode: no contract was selected by the version banner (got %q)", req.Contract)
	}
	return s
}

// openCodeGuard blocks ordinary native authentication unless spending is
// approved, and lets a ChatGPT-subscription attempt through only in its
// one allowed shape (deny, the seed's model, default effort).
func openCodeGuard(_ map[string]string, req Request) []string {
	if req.ChatGPTSubscription {
		if req.APISpend == policy.APISpendDeny && req.CLIModel == OpenCodeChatGPTModel && req.Effort == policy.EffortDefault {
			return nil
		}
		return []string{openCodeSubscriptionMisuse}
	}
	if req.APISpend == policy.APISpendApproved {
		return nil
	}
	return []string{openCodeNativeAuth}
}

// OpenCodeAgentName is the attempt's agent:
// pstack-<first 24 hex digits of sha256(receipt path)>.
func OpenCodeAgentName(req Request) string { return "pstack-" + receiptDigest(req.Receipt, 24) }

// openCodeModel checks an exact provider/model slug: at least two non-empty
// path segments (more are preserved), and never the auto selector.
func openCodeModel(model string) error {
	parts := strings.Split(model, "/")
	if len(parts) < 2 || model == "auto" || strings.TrimSpace(model) != model {
		return fmt.Errorf("opencode: model must be an exact provider/model slug, got %q", model)
	}
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("opencode: model %q has an empty path segment", model)
		}
	}
	return nil
}

// openCodeWorktreeRoot checks a writer's cwd is the real root of a Git
// worktree: a directory reached without symlinks that holds .git itself (a
// directory, or the pointer file of a linked worktree).
func openCodeWorktreeRoot(cwd string) error {
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil || real != filepath.Clean(cwd) {
		return fmt.Errorf("opencode writers need the real Git worktree root as --cwd; %s is reached through a symlink or cannot be resolved (pass the resolved path)", cwd)
	}
	fi, err := os.Lstat(filepath.Join(cwd, ".git"))
	if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return fmt.Errorf("opencode writers need the real Git worktree root as --cwd; %s has no .git entry (pass the worktree's top directory, as `git rev-parse --show-toplevel` prints it)", cwd)
	}
	return nil
}

// openCodeProbeOverlay is the environment of the version probe: private
// configuration discovery (XDG_CONFIG_HOME is the private directory), no
// project configuration and no self-update, and no contract-specific
// configuration pointer. Every inherited OPENCODE_* is already removed.
func openCodeProbeOverlay(req Request) []string {
	return []string{
		"XDG_CONFIG_HOME=" + req.PrivateDir,
		"OPENCODE_DISABLE_PROJECT_CONFIG=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
	}
}

// openCodeContractOverlay is the environment of every later child of the
// selected contract. V1 points OPENCODE_CONFIG at the single private file
// and disables external skills, Claude Code compatibility, autocompaction
// and LSP downloads; V2 points OPENCODE_CONFIG_DIR at the private config/
// directory, pins PWD to the cwd and disables file watching.
func openCodeContractOverlay(req Request, contract string) []string {
	out := openCodeProbeOverlay(req)
	switch contract {
	case openCodeContractV1:
		out = append(out, "OPENCODE_CONFIG="+openCodeV1ConfigPath(req))
		for _, flag := range []string{"EXTERNAL_SKILLS", "CLAUDE_CODE", "AUTOCOMPACT", "LSP_DOWNLOAD"} {
			out = append(out, "OPENCODE_DISABLE_"+flag+"=1")
		}
	case openCodeContractV2:
		out = append(out, "OPENCODE_CONFIG_DIR="+openCodeV2ConfigDir(req), "PWD="+req.Cwd, "OPENCODE_DISABLE_FILEWATCHER=1")
	}
	if req.Mode == policy.IsolatedWrite {
		out = append(out, "SHELL="+openCodeShellPath(req)) // both contracts pin SHELL to the sandbox wrapper
	}
	return out
}

// readOpenCodeVersion judges `opencode --version`: the banner selects the
// contract exactly once, and the verdict's continuation writes that
// contract's private files and names its remaining probes.
func readOpenCodeVersion(s *Spec, req Request, c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "opencode --version failed (%s)", exitText(c))
	}
	v, contract, err := ParseOpenCodeBanner(string(c.Stdout))
	if err != nil {
		var unsupported *UnsupportedVersionError
		if errors.As(err, &unsupported) {
			return fail(policy.StatusUnavailableCLI, "opencode %s is not supported (%s); install a stable 1.x from %s or 2.x release", unsupported.Version, unsupported.Reason, openCodeV1Floor)
		}
		return fail(policy.StatusUnavailableCLI, "opencode --version did not print one stable release banner (a prerelease, malformed output or trailing noise); install a stable 1.x from %s or 2.x release", openCodeV1Floor)
	}
	name := openCodeContractV1
	if contract == OpenCodeV2 {
		name = openCodeContractV2
	}
	req.Contract = name
	files, err := openCodeFiles(req)
	if err != nil {
		return fail(policy.StatusUnavailableCLI, "opencode private configuration cannot be rendered: %v", err)
	}
	v0 := pass("opencode %s selects the %s contract", v, strings.ToUpper(name))
	v0.Then = &Continuation{Contract: name, Files: files, Overlay: openCodeContractOverlay(req, name), Probes: openCodeProbes(s, req)}
	return v0
}

// openCodeProbes are the probes after the version banner: the private
// configuration check, and for a ChatGPT-subscription attempt its auth
// listing and the configuration check again.
func openCodeProbes(s *Spec, req Request) [][]string {
	var out [][]string
	for _, kind := range openCodeProbeKinds(req)[1:] {
		switch {
		case kind == "debug" && req.Contract == openCodeContractV1:
			out = append(out, cliArgv(s, req, "--pure", "debug", "config"))
		case kind == "debug":
			out = append(out, cliArgv(s, req, "debug", "config"))
		case kind == "auth" && req.Contract == openCodeContractV1:
			out = append(out, cliArgv(s, req, "--pure", "auth", "list"))
		case kind == "auth":
			out = append(out, cliArgv(s, req, "auth", "list", "--standalone", "--format", "json"))
		case kind == "sandbox":
			out = append(out, []string{openCodeShellPath(req), "-c", "true"})
		}
	}
	return out
}

// openCodeProbeKinds names the attempt's probes in order: the banner, the
// configuration check, for a subscription attempt its auth listing and the
// configuration check again, and for a writer the sandboxed shell startup
// probe.
func openCodeProbeKinds(req Request) []string {
	kinds := []string{"version", "debug"}
	if req.ChatGPTSubscription {
		kinds = append(kinds, "auth", "debug")
	}
	if req.Mode == policy.IsolatedWrite {
		kinds = append(kinds, "sandbox")
	}
	return kinds
}

// readOpenCodeProbe judges the probes after the banner by kind.
func readOpenCodeProbe(req Request, n int, c Capture) PreflightVerdict {
	kinds := openCodeProbeKinds(req)
	if req.Contract == "" || n <= 0 || n >= len(kinds) {
		return unknownProbe(policy.OpenCode, n)
	}
	switch kinds[n] {
	case "debug":
		return readOpenCodeDebugConfig(req, c)
	case "auth":
		return readOpenCodeAuthList(req, c)
	}
	return readOpenCodeSandboxProbe(c)
}

// openCodeCheck runs before the first probe and immediately before the
// invocation: a writer's cwd must be the real Git worktree root, and once
// the banner selected a contract its private files must still be exactly
// what the runner wrote, with nothing beside them.
func openCodeCheck(req Request) error {
	if req.Mode == policy.IsolatedWrite {
		if err := openCodeWorktreeRoot(req.Cwd); err != nil {
			return &PreflightError{Status: policy.StatusUnsupportedCapability, Evidence: err.Error()}
		}
		if rel, err := filepath.Rel(req.Cwd, req.PrivateDir); err == nil && !strings.HasPrefix(rel, "..") {
			return &PreflightError{Status: policy.StatusUnsupportedCapability, Evidence: "opencode writers keep their sandbox control directory outside the worktree: put --receipt outside " + req.Cwd}
		}
		if _, err := findSandboxRuntime(req); err != nil {
			return &PreflightError{Status: policy.StatusUnavailableCLI, Evidence: err.Error()}
		}
	}
	if req.Contract == "" {
		return nil
	}
	if err := openCodePrivateIntact(req); err != nil {
		return &PreflightError{Status: policy.StatusUnavailableCLI, Evidence: "opencode private configuration changed before the invocation: " + err.Error()}
	}
	return nil
}
