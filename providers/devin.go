package providers

import (
	"encoding/json"
	"path/filepath"
	"regexp"

	"github.com/switchyard-dev/switchyard/policy"
)

// devinGuard lists Devin's known API key and route override.
var devinGuard = envGuard{NonBlank: []string{"DEVIN_API_KEY", "DEVIN_API_URL"}}

// devinLoggedIn matches the login line of `devin auth status`.
var devinLoggedIn = regexp.MustCompile(`(?m)^Logged in\b`)

// devinWriterConstraints prefixes a writer's private prompt copy: Devin's
// direct edit and write tools are denied (they run outside its OS sandbox
// and may ask for confirmation), so every change goes through sandboxed
// exec.
const devinWriterConstraints = "Devin worker constraints:\n" +
	"This run is non-interactive, in an isolated-write workspace. The direct edit and write tools are " +
	"disabled; calling them ends the run. Make every file change, and run every check, through the " +
	"sandboxed exec tool, starting with the first file operation. Do not ask for permissions.\n\n"

func init() { register(devinSpec()) }

// devinSpec describes the Devin CLI (`devin --print`, the answer read from
// a private ATIF export). Each attempt gets a private --config (subagents
// and imports off; MCP, fetch, edit and write denied; read-only also denies
// and disables exec) and a private prompt copy; writers run --sandbox.
func devinSpec() *Spec {
	s := &Spec{
		Provider: policy.Devin,
		Binaries: []string{"devin"},
		Install:  "install the Devin CLI (see https://docs.devin.ai/cli)",
		Writer:   WriterTools{Shell: true, Guidance: "Tools: make edits and run checks through the sandboxed exec tool."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "devin --sandbox with exec enabled: the sandbox's write and network confinement is undocumented and unverified"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "devin --permission-mode auto with exec, edit, write and fetch denied in its config: tool denials, not a verified sandbox"},
		},
		KnownVersions:   []string{"3000.4.25"},
		QuotaSource:     QuotaUnsupported,
		ModelEvidence:   policy.EvidencePinnedArgv,
		Classify:        classifyTextStream, // classify_stream.go
		SignInProbe:     true,
		SilentUntilDone: true,
		CLIModel:        devinModel,
		ListedAuto:      true,
		OwnEnv:          devinGuard.vars(),
		RemoveEnv:       removeEnv("DEVIN_REFUSAL_FALLBACK"),
		KeepEnv:         []string{"XDG_CONFIG_HOME"},
		Guard:           envGuardFunc(devinGuard),
		Parse:           parseDevin,

		// Classification, model proof, discovery and sandbox scope.
		ModelMatch:   ModelMatchRevision,
		Models:       ModelsProbe{Argv: []string{"models", "list", "--format", "json"}, Read: readDevinModels},
		QuotaAdapter: devinQuota, // classify.go; no stdout protocol, so no TerminalFields
		StopAdapter:  devinStop,  // devin_upgrade.go: upgrade-required is unavailable-model (D-26D)
		// Its XDG config and data directories; the Codeium seat service
		// and Devin's API.
		StateDirs: xdgDirs("devin", "XDG_CONFIG_HOME", "XDG_DATA_HOME"),
		APIHosts:  https("server.codeium.com", "api.devin.ai"),
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		config, err := devinConfig(req.Mode)
		if err != nil {
			return nil, nil, err
		}
		prompt := req.Prompt
		if req.Mode == policy.IsolatedWrite {
			prompt = append([]byte(devinWriterConstraints), req.Prompt...)
		}
		return []File{
			privateFile(devinConfigPath(req), config),
			privateFile(devinPromptPath(req), prompt),
			privateDir(filepath.Dir(devinExportPath(req))), // the export (devin_parse.go) lands inside
		}, nil, nil
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "auth", "status")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		if !exited0(c) || !devinLoggedIn.MatchString(probeText(c)) {
			return fail(policy.StatusUnauthenticated, "devin auth status reported no login (%s)", exitText(c))
		}
		return pass("devin auth status reported a login")
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		argv := cliArgv(s, req, "--config", devinConfigPath(req), "--model", req.CLIModel)
		if req.Mode == policy.ReadOnly {
			argv = append(argv, "--permission-mode", "auto")
		} else {
			argv = append(argv, "--sandbox")
		}
		argv = append(argv, "--respect-workspace-trust", "false",
			"--prompt-file", devinPromptPath(req), "--export", devinExportPath(req), "--print")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinNone, Capture: []string{devinExportPath(req)}}, nil
	}
	return s
}

// devinConfigPath is the attempt's private Devin configuration.
func devinConfigPath(req Request) string { return inPrivate(req, "devin-config.json") }

// devinPromptPath is the private prompt copy Devin reads with
// --prompt-file: never the user's prompt path.
func devinPromptPath(req Request) string { return inPrivate(req, "devin-prompt.md") }

// devinConfig renders the private --config document for a mode.
func devinConfig(mode policy.Access) ([]byte, error) {
	type shell struct {
		SetupComplete bool `json:"setup_complete"`
	}
	type permissions struct {
		Deny []string `json:"deny"`
	}
	doc := struct {
		Shell            shell           `json:"shell"`
		SubagentsEnabled bool            `json:"subagents_enabled"`
		DisabledTools    []string        `json:"disabled_tools"`
		AutoUpdate       bool            `json:"auto_update"`
		ReadConfigFrom   map[string]bool `json:"read_config_from"`
		Permissions      permissions     `json:"permissions"`
	}{
		Shell:         shell{SetupComplete: true},
		DisabledTools: []string{"edit", "write"},
		ReadConfigFrom: map[string]bool{"agents_standard": false, "claude": false, "copilot": false,
			"cursor": false, "opencode": false, "windsurf": false, "zed": false},
		Permissions: permissions{Deny: []string{"mcp__*", "fetch", "edit", "write"}},
	}
	if mode == policy.ReadOnly {
		doc.DisabledTools = append(doc.DisabledTools, "exec")
		doc.Permissions.Deny = append(doc.Permissions.Deny, "exec", "Write(**)")
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
