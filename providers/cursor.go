package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/policy"
)

// cursorGuard lists Cursor's known API key and endpoint override.
var cursorGuard = envGuard{NonBlank: []string{"CURSOR_API_KEY", "CURSOR_API_ENDPOINT"}}

// ErrUserConfig is wrapped when a user configuration a spec must read
// before launch is unreadable or malformed (Cursor's global cli-config.json).
// The lane fails instead of silently losing the setting.
var ErrUserConfig = errors.New("user provider configuration unusable")

func init() { register(cursorSpec(os.ReadFile)) }

// cursorSpec describes cursor-agent (`--print --output-format json`, one
// result object on stdout). Each attempt points CURSOR_CONFIG_DIR at the
// private directory holding a cli-config.json that denies MCP and web fetch
// (read-only also denies writes and shell) and carries over only a boolean
// network.useHttp1ForAgent from the user's configuration, read with read.
func cursorSpec(read readFileFunc) *Spec {
	s := &Spec{
		Provider: policy.Cursor,
		Binaries: []string{"cursor-agent"}, // never "agent", which can name another CLI
		// The seed names the private directory <receipt>.cursor-config
		// (CURSOR_CONFIG_DIR points at it).
		PrivateSuffix: ".cursor-config",
		Install:       "install the Cursor CLI (curl https://cursor.com/install -fsS | bash)",
		Writer:        WriterTools{Shell: true},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "cursor-agent --sandbox enabled: the sandbox's write and network confinement is undocumented and unverified"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "cursor-agent --mode ask with --sandbox enabled: ask mode is a prompt instruction and the sandbox is unverified"},
		},
		KnownVersions:   []string{"2026.09.02", "2026.10.01"},
		QuotaSource:     QuotaUnsupported,
		ModelEvidence:   policy.EvidencePinnedArgv,
		Classify:        classifyCursorStream, // classify_stream.go
		SignInProbe:     true,
		SignInDeferred:  cursorAPIKey, // its status command does not report API-key authentication
		SilentUntilDone: true,
		CLIModel:        slugModel(policy.Cursor),
		OwnEnv:          cursorGuard.vars(),
		RemoveEnv:       removeEnv(),
		KeepEnv:         []string{"XDG_CONFIG_HOME"},
		Guard:           envGuardFunc(cursorGuard),
		Parse:           parseCursor,

		// Classification, model proof, discovery and sandbox scope.
		ModelMatch:     ModelMatchExact,
		Models:         ModelsProbe{Argv: []string{"models"}, Read: readCursorModels},
		QuotaAdapter:   cursorQuota, // classify.go
		TerminalFields: cursorTerminalFields,
		// ~/.cursor and ~/.config/cursor; its API hosts.
		StateDirs: under(".cursor", ".config/cursor"),
		APIHosts:  https("api2.cursor.sh", "api.cursor.com", "cursor.com"),
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		http1, err := cursorUserHTTP1(req, read)
		if err != nil {
			return nil, nil, err
		}
		config, err := cursorConfig(req.Mode, http1)
		if err != nil {
			return nil, nil, err
		}
		return []File{privateFile(inPrivate(req, "cli-config.json"), config)},
			[]string{"CURSOR_CONFIG_DIR=" + req.PrivateDir}, nil
	}
	s.Preflight = func(req Request) [][]string {
		if cursorAPIKey(req) {
			return [][]string{cliArgv(s, req, "--version")}
		}
		return [][]string{cliArgv(s, req, "status", "--format", "json")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		if cursorAPIKey(req) {
			if !exited0(c) || len(nonEmptyLines(string(c.Stdout))) == 0 {
				return fail(policy.StatusUnavailableCLI, "cursor-agent --version failed (%s)", exitText(c))
			}
			return pass("cursor-agent --version answered; CURSOR_API_KEY is set, so authentication is deferred to the model invocation")
		}
		return readCursorStatus(c)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		argv := cliArgv(s, req, "--print", "--output-format", "json", "--trust", "--model", req.CLIModel,
			"--workspace", req.Cwd, "--sandbox", "enabled")
		if req.Mode == policy.ReadOnly {
			argv = append(argv, "--mode", "ask")
		}
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
	}
	return s
}

// cursorAPIKey reports whether the parent holds a non-blank CURSOR_API_KEY:
// Cursor's status command does not report API-key authentication, so the
// preflight only checks that the CLI runs.
func cursorAPIKey(req Request) bool { return nonBlank(parentEnv(req, "CURSOR_API_KEY")) }

// readCursorStatus judges `cursor-agent status --format json`, which exits 0
// even when signed out: only isAuthenticated true passes.
func readCursorStatus(c Capture) PreflightVerdict {
	var status struct {
		IsAuthenticated *bool `json:"isAuthenticated"`
	}
	if !exited0(c) {
		return failedProbe("cursor-agent status", c)
	}
	if err := json.Unmarshal(bytes.TrimSpace(c.Stdout), &status); err != nil || status.IsAuthenticated == nil {
		return fail(policy.StatusUnavailableCLI, "cursor-agent status --format json did not return a status object")
	}
	if !*status.IsAuthenticated {
		return fail(policy.StatusUnauthenticated, "cursor-agent status reported isAuthenticated false")
	}
	return pass("cursor-agent status reported isAuthenticated true")
}

// cursorUserConfigPath locates the user's global Cursor configuration:
// CURSOR_CONFIG_DIR, else XDG_CONFIG_HOME/cursor, else ~/.cursor. It also
// names that source for errors, which never quote environment values.
func cursorUserConfigPath(req Request) (path, source string) {
	if dir := parentEnv(req, "CURSOR_CONFIG_DIR"); nonBlank(dir) {
		return filepath.Join(dir, "cli-config.json"), "$CURSOR_CONFIG_DIR/cli-config.json"
	}
	if dir := parentEnv(req, "XDG_CONFIG_HOME"); nonBlank(dir) {
		return filepath.Join(dir, "cursor", "cli-config.json"), "$XDG_CONFIG_HOME/cursor/cli-config.json"
	}
	return filepath.Join(req.Home, ".cursor", "cli-config.json"), "~/.cursor/cli-config.json"
}

// cursorUserHTTP1 reads network.useHttp1ForAgent from the user's global
// configuration: nil when the file or the setting is absent. A location
// that is not absolute, a file that cannot be read, is not a JSON object,
// or holds a non-boolean setting is an ErrUserConfig; nothing else of the
// file is read.
func cursorUserHTTP1(req Request, read readFileFunc) (*bool, error) {
	path, source := cursorUserConfigPath(req)
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%w: cursor configuration %s is not an absolute path", ErrUserConfig, source)
	}
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: cursor configuration %s is unreadable", ErrUserConfig, source)
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return nil, fmt.Errorf("%w: cursor configuration %s is not a JSON object", ErrUserConfig, source)
	}
	raw, ok := doc["network"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var network map[string]json.RawMessage
	if json.Unmarshal(raw, &network) != nil || network == nil {
		return nil, fmt.Errorf("%w: cursor configuration %s has a malformed network section", ErrUserConfig, source)
	}
	raw, ok = network["useHttp1ForAgent"]
	if !ok {
		return nil, nil
	}
	var http1 bool
	if json.Unmarshal(raw, &http1) != nil {
		return nil, fmt.Errorf("%w: cursor configuration %s has a non-boolean network.useHttp1ForAgent", ErrUserConfig, source)
	}
	return &http1, nil
}

// cursorConfig renders the private cli-config.json.
func cursorConfig(mode policy.Access, http1 *bool) ([]byte, error) {
	type permissions struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
	}
	type network struct {
		UseHTTP1ForAgent bool `json:"useHttp1ForAgent"`
	}
	doc := struct {
		Version     int         `json:"version"`
		Permissions permissions `json:"permissions"`
		Network     *network    `json:"network,omitempty"`
	}{
		Version:     1,
		Permissions: permissions{Allow: []string{}, Deny: []string{"Mcp(*:*)", "WebFetch(*)"}},
	}
	if mode == policy.ReadOnly {
		doc.Permissions.Deny = append(doc.Permissions.Deny, "Write(**)", "Shell(*)")
	}
	if http1 != nil {
		doc.Network = &network{UseHTTP1ForAgent: *http1}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
