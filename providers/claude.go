package providers

import (
	"github.com/switchyard-dev/switchyard/policy"
)

// claudeGuard lists Claude Code's known API routes: credentials when
// non-blank, provider and endpoint switches when truthy.
var claudeGuard = envGuard{
	NonBlank: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AWS_API_KEY"},
	Truthy: []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
		"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"},
}

// claudeWriterSettings is the session --settings of a Claude writer:
// sandboxed Bash auto-allowed only inside the sandbox, no unsandboxed
// escape, a hard failure when the sandbox is unavailable, no excluded
// commands, filesystem isolation on and no network domains.
const claudeWriterSettings = `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"failIfUnavailable":true,"excludedCommands":[],"filesystem":{"disabled":false},"network":{"allowedDomains":[]}}}`

func init() { register(claudeSpec()) }

// claudeSpec describes Claude Code (`claude -p`, stream-json on stdout).
// Read-only lanes run plan mode with project settings (none under deny) and
// no preflight: `claude auth status` can consume a refresh token, so the
// invocation is the authentication check. Writers run acceptEdits with
// empty setting sources and the sandbox settings above, after a version
// floor check.
func claudeSpec() *Spec {
	s := &Spec{
		Provider: policy.Claude,
		Binaries: []string{"claude"},
		Install:  "install Claude Code (npm i -g @anthropic-ai/claude-code)",
		Writer:   WriterTools{Shell: true},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentWorkspaceWriteNoNetwork, Reason: "claude --settings sandbox (enabled, failIfUnavailable, allowUnsandboxedCommands false, filesystem isolation, no allowed network domains) with WebSearch and WebFetch disallowed, at version 2.1.285 or newer"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "claude --permission-mode plan grants Bash outside any sandbox; no native sandbox proves read-only or no network"},
		},
		// 2.1.332: the pinned release the conformance suite verified
		// (testdata/realcli); 2.1.220: the invalid-API-key capture fixture.
		KnownVersions:       []string{"2.1.220", "2.1.332"},
		QuotaSource:         QuotaLiveHTTP,
		QuotaCredentialFile: "$CLAUDE_CONFIG_DIR/.credentials.json, else ~/.claude/.credentials.json",
		ModelEvidence:       policy.EvidenceProviderReport,
		Login:               "claude, then /login",
		Classify:            classifyClaudeStream, // classify_stream.go
		CLIModel:            claudeModel,
		ListedEfforts:       reasoningEfforts,
		OwnEnv:              claudeGuard.vars(),
		RemoveEnv:           removeEnv(),
		KeepEnv:             []string{"CLAUDE_CONFIG_DIR"},
		Guard:               envGuardFunc(claudeGuard),
		Prepare: func(Request) ([]File, []string, error) {
			return nil, nil, nil // writer settings travel in argv
		},
		Parse: parseClaude,

		// Classification, model proof, discovery and sandbox scope.
		QuotaReader:    "claude-oauth-usage", // providers/quota
		ModelMatch:     ModelMatchClaude,
		QuotaAdapter:   claudeQuota, // classify.go
		AuthAdapter:    claudeAuth,  // classify.go: Claude has no authentication preflight
		TerminalFields: claudeTerminalFields,
		// ~/.claude (sessions, todos, credentials) and ~/.claude.json (its
		// settings file); the Messages API and the OAuth token endpoint.
		StateDirs: under(".claude", ".claude.json"),
		APIHosts:  https("api.anthropic.com", "platform.claude.com", "claude.ai"),
	}
	s.Preflight = func(req Request) [][]string {
		if req.Mode == policy.ReadOnly {
			return nil
		}
		return [][]string{cliArgv(s, req, "--version")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if req.Mode == policy.ReadOnly || n != 0 {
			return unknownProbe(s.Provider, n)
		}
		if !exited0(c) {
			return fail(policy.StatusUnavailableCLI, "claude --version failed (%s)", exitText(c))
		}
		v, err := parseClaudeVersion(string(c.Stdout))
		if err != nil {
			return fail(policy.StatusUnavailableCLI, "claude --version did not print a stable version")
		}
		if !v.AtLeast(claudeWriterFloor) {
			return fail(policy.StatusUnavailableCLI, "claude %s is older than %s, the first version validated with the writer sandbox", v, claudeWriterFloor)
		}
		return pass("claude %s meets the writer floor %s; %s", v, claudeWriterFloor, PreflightDeferredEvidence)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		argv := cliArgv(s, req, "-p", "--model", req.CLIModel, "--effort", string(req.Effort))
		if req.Mode == policy.ReadOnly {
			sources := "project"
			if req.APISpend == policy.APISpendDeny {
				sources = "" // user, project and local settings could inject API credentials
			}
			argv = append(argv, "--permission-mode", "plan", "--setting-sources", sources,
				"--strict-mcp-config", "--tools", "Read,Grep,Glob,Bash",
				"--no-session-persistence", "--disable-slash-commands",
				"--disallowed-tools", "Agent,Task,WebSearch,WebFetch,Edit,Write,NotebookEdit")
		} else {
			argv = append(argv, "--permission-mode", "acceptEdits", "--setting-sources", "",
				"--settings", claudeWriterSettings,
				"--strict-mcp-config", "--tools", "Read,Write,Edit,Grep,Glob,Bash",
				"--no-session-persistence", "--disable-slash-commands",
				"--disallowed-tools", "Agent,Task,WebSearch,WebFetch")
		}
		argv = append(argv, "--output-format", "stream-json", "--verbose")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
	}
	return s
}
