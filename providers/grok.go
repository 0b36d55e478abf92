package providers

import (
	"regexp"

	"github.com/switchyard-dev/switchyard/policy"
)

// grokGuard lists Grok Build's known API routes.
var grokGuard = envGuard{NonBlank: []string{"XAI_API_KEY", "GROK_CODE_XAI_API_KEY"}}

// grokLoggedIn matches the login banner of `grok models`.
var grokLoggedIn = regexp.MustCompile(`(?i)\blogged in\b`)

func init() { register(grokSpec()) }

// grokSpec describes the Grok Build CLI (`grok --prompt-file`,
// streaming-messages-json on stdout). The prompt travels in a private file
// beside the receipt; read-only lanes run plan mode in Grok's read-only
// sandbox with read-oriented tools, writers acceptEdits in its workspace
// sandbox with search_replace added. Under --api-spend deny a Grok lane is
// always blocked after its preflight: the login banner cannot prove
// subscription routing because per-model BYOK takes precedence over OAuth.
func grokSpec() *Spec {
	s := &Spec{
		Provider: policy.Grok,
		Binaries: []string{"grok"},
		Install:  "install the Grok Build CLI (see https://docs.x.ai/build/cli)",
		Writer:   WriterTools{Shell: true},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "grok --sandbox workspace with run_terminal_cmd: the sandbox's write and network confinement is undocumented and unverified"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "grok --sandbox read-only with run_terminal_cmd: the sandbox's network confinement is undocumented and unverified"},
		},
		KnownVersions: []string{"0.2.93", "1.0.5", "1.0.41"},
		QuotaSource:   QuotaUnsupported,
		ModelEvidence: policy.EvidenceProviderReport,
		Login:         "grok login",
		Classify:      classifyGrokStream, // classify_stream.go
		SignInProbe:   true,
		CLIModel:      effortModel(policy.Grok),
		ListedEfforts: reasoningEfforts,
		OwnEnv:        grokGuard.vars(),
		RemoveEnv:     removeEnv(),
		KeepEnv:       []string{},
		Guard:         envGuardFunc(grokGuard),
		Parse:         parseGrok,
		Check:         grokReadOnlyCheckout, // grok_checkout.go

		// Classification, model proof, discovery and sandbox scope.
		ModelMatch:     ModelMatchRevision,
		Models:         ModelsProbe{Argv: []string{"models"}, Read: readGrokListing},
		QuotaAdapter:   grokQuota, // classify.go
		TerminalFields: grokTerminalFields,
		// ~/.grok; its chat proxy and the xAI API.
		StateDirs: under(".grok"),
		APIHosts:  https("cli-chat-proxy.grok.com", "api.x.ai"),
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		return []File{privateFile(grokPromptPath(req), req.Prompt)}, nil, nil
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "models")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		return readGrokModels(req, c)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		permission, sandbox, tools := "plan", "read-only", "read_file,grep,list_dir,run_terminal_cmd"
		if req.Mode == policy.IsolatedWrite {
			permission, sandbox, tools = "acceptEdits", "workspace", tools+",search_replace"
		}
		argv := cliArgv(s, req, "--prompt-file", grokPromptPath(req), "--model", req.CLIModel,
			"--reasoning-effort", string(req.Effort), "--permission-mode", permission,
			"--sandbox", sandbox, "--tools", tools,
			"--disallowed-tools", "Agent,search_tool,use_tool",
			"--output-format", "streaming-messages-json", "--cwd", req.Cwd,
			"--no-subagents", "--disable-web-search", "--verbatim")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinNone}, nil
	}
	return s
}

// grokPromptPath is the private prompt file Grok reads with --prompt-file.
func grokPromptPath(req Request) string { return req.Receipt + ".contract-prompt.md" }

// readGrokModels judges `grok models`: it passes when the output shows a
// login and lists the requested model. A sign-in failure asks for the one
// bounded retry. Under --api-spend deny a passing probe still blocks.
func readGrokModels(req Request, c Capture) PreflightVerdict {
	text := probeText(c)
	if looksUnauthenticated(c) || (exited0(c) && !grokLoggedIn.MatchString(text)) {
		v := fail(policy.StatusUnauthenticated, "grok models reported no login (%s)", exitText(c))
		v.Retry = true
		return v
	}
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "grok models failed (%s)", exitText(c))
	}
	if !containsToken(text, req.CLIModel) {
		return fail(policy.StatusUnavailableModel, "grok models did not list %s", req.CLIModel)
	}
	if req.APISpend == policy.APISpendDeny {
		return fail(policy.StatusBillingPolicyBlocked, "grok models shows a login, which cannot prove subscription routing under api-spend deny (per-model BYOK takes precedence over OAuth)")
	}
	return pass("grok models shows a login and lists %s", req.CLIModel)
}
