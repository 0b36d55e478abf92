package providers

import (
	"regexp"
	"strconv"

	"github.com/switchyard-dev/switchyard/policy"
)

// codexGuard lists Codex's known API route.
var codexGuard = envGuard{NonBlank: []string{"OPENAI_API_KEY"}}

// codexChatGPTLogin is the one `codex login status` answer that proves a
// ChatGPT (subscription) login under --api-spend deny.
const codexChatGPTLogin = "Logged in using ChatGPT"

// codexNotLoggedIn is the whole of `codex login status` signed out, on
// stderr with exit 1 (verified against codex 0.171.0).
const codexNotLoggedIn = "Not logged in"

var (
	// codexLoggedIn matches a login line of `codex login status`.
	codexLoggedIn = regexp.MustCompile(`(?im)^\s*logged in\b`)
	// codexAPIKey matches an API-key login ("Logged in using an API key").
	codexAPIKey = regexp.MustCompile(`(?i)\bapi[ _-]?key\b`)
)

func init() { register(codexSpec()) }

// codexSpec describes the Codex CLI (`codex exec --json -`, JSONL on
// stdout). Writers get workspace-write with network access pinned off so a
// profile cannot reopen it.
func codexSpec() *Spec {
	s := &Spec{
		Provider: policy.Codex,
		Binaries: []string{"codex"},
		Install:  "install the Codex CLI (npm i -g @openai/codex)",
		Writer:   WriterTools{Shell: true},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentWorkspaceWriteNoNetwork, Reason: "codex --sandbox workspace-write confines writes to the workspace; --config sandbox_workspace_write.network_access=false pins network off so a profile cannot reopen it"},
			policy.ReadOnly:      {Class: ContainmentReadOnlyNoNetwork, Reason: "codex --sandbox read-only: the native sandbox denies writes and network"},
		},
		// 0.171.0: the pinned release the conformance suite verified
		// (testdata/realcli); 0.155.1: the signed-out 401 workload capture.
		KnownVersions: []string{"0.155.1", "0.171.0"},
		QuotaSource:   QuotaLiveRPC,
		ModelEvidence: policy.EvidencePinnedArgv,
		Login:         "codex login",
		Classify:      classifyCodexStream, // classify_stream.go
		SignInProbe:   true,
		CLIModel:      effortModel(policy.Codex),
		ListedEfforts: reasoningEfforts,
		HostMarkers:   []string{codexMarkerEnv},
		OwnEnv:        codexGuard.vars(),
		RemoveEnv:     removeEnv(),
		KeepEnv:       []string{"CODEX_HOME"},
		Guard:         envGuardFunc(codexGuard),
		Prepare: func(Request) ([]File, []string, error) {
			return nil, nil, nil
		},
		Parse: parseCodex,

		// Classification, model proof, discovery and sandbox scope.
		QuotaReader:    "codex-app-server", // providers/quota
		ModelMatch:     ModelMatchRevision,
		QuotaAdapter:   codexQuota, // classify.go
		TerminalFields: codexTerminalFields,
		// $CODEX_HOME (default ~/.codex); the ChatGPT backend its
		// subscription route uses, the OpenAI API and its login.
		StateDirs: func(home string, env map[string]string) []string {
			return []string{envOr(env, "CODEX_HOME", home, ".codex")}
		},
		APIHosts: https("chatgpt.com", "api.openai.com", "auth.openai.com"),
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "login", "status")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		return readCodexLogin(req, c)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		sandbox := "read-only"
		if req.Mode == policy.IsolatedWrite {
			sandbox = "workspace-write"
		}
		argv := cliArgv(s, req, "exec", "--model", req.CLIModel,
			"--config", "model_reasoning_effort="+strconv.Quote(string(req.Effort)),
			"--sandbox", sandbox)
		if req.Mode == policy.IsolatedWrite {
			argv = append(argv, "--config", "sandbox_workspace_write.network_access=false")
		}
		argv = append(argv, "--cd", req.Cwd, "--skip-git-repo-check", "--ephemeral",
			"--disable", "plugins", "--disable", "multi_agent", "--disable", "hooks", "--disable", "memories",
			"--json", "-")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
	}
	return s
}

// readCodexLogin judges `codex login status`, which prints on stderr. Any
// login line passes under approved or legacy spending; under deny the
// output must be exactly the ChatGPT login line, and an API-key mention
// blocks (API evidence takes precedence over ChatGPT evidence).
func readCodexLogin(req Request, c Capture) PreflightVerdict {
	text := probeText(c)
	if !exited0(c) || !codexLoggedIn.MatchString(text) {
		if lines := nonEmptyLines(text); len(lines) == 1 && lines[0] == codexNotLoggedIn {
			// The CLI's own fixed sentence, quoted: it carries no value.
			return fail(policy.StatusUnauthenticated, "codex login status reported no login: %q (%s)", codexNotLoggedIn, exitText(c))
		}
		return fail(policy.StatusUnauthenticated, "codex login status reported no login (%s)", exitText(c))
	}
	if req.APISpend != policy.APISpendDeny {
		return pass("codex login status reported a login")
	}
	if codexAPIKey.MatchString(text) {
		return fail(policy.StatusBillingPolicyBlocked, "codex login status reported API-key authentication, a metered route under api-spend deny")
	}
	lines := nonEmptyLines(text)
	if len(lines) != 1 || lines[0] != codexChatGPTLogin {
		return fail(policy.StatusBillingPolicyBlocked, "codex login status did not print exactly %q, so subscription billing is unproven under api-spend deny", codexChatGPTLogin)
	}
	return pass("codex login status reported a ChatGPT login")
}

// codexMarkerEnv are Codex's session markers (Spec.HostMarkers), removed
// from every child but Codex's own (RUNNER.md names seven; every CODEX_*
// variable is removed).
const codexMarkerEnv = "CODEX_*"
