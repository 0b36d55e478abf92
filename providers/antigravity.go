package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// antigravityGuard lists Antigravity's known environment billing routes:
// the Gemini API key and endpoint and ADC authentication.
var antigravityGuard = envGuard{
	NonBlank: []string{"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "AGY_ADC_AUTH"},
}

// antigravityGateways are agy's gateway override keys. The seed blocks them
// when SET: any value, empty or "0" included, because agy's reading of a
// gateway key's value is unknown, so no value can be proven to mean "off".
var antigravityGateways = []string{"AGY_GATEWAY_*", "AGY_LLM_GATEWAY_*"}

// antigravityGatewayNames names every set gateway key, whatever its value.
func antigravityGatewayNames(env map[string]string) []string {
	var out []string
	for name := range env {
		if matchesAny(antigravityGateways, name) {
			out = append(out, name)
		}
	}
	return out
}

// antigravitySettings is agy's user settings file, relative to the home
// directory; a model provider or model override in it is a billing route.
const antigravitySettings = ".gemini/antigravity-cli/settings.json"

// antigravitySettingsRoutes are the settings keys that reroute models.
var antigravitySettingsRoutes = []string{"modelProvider", "modelConfigOverrides"}

// Antigravity tool declarations of the temporary agent.
var (
	antigravityReadTools  = []string{"view_file", "list_dir", "grep_search"}
	antigravityWriteTools = []string{"write_to_file", "replace_file_content", "multi_replace_file_content"}
)

func init() { register(antigravitySpec(os.ReadFile)) }

// antigravitySpec is the registered spec: settings read with read, the
// writer's inspection on the real machine.
func antigravitySpec(read readFileFunc) *Spec { return antigravitySpecOn(read, realAntigravityHost) }

// antigravitySpec describes the Antigravity CLI (`agy --print=`, stream-json
// in and out). The prompt is one NDJSON user message on stdin; a temporary
// agent pins the tool list. Read-only lanes launch from a private directory
// and add the checkout with --add-dir; writers launch in their worktree
// with --mode accept-edits. Under deny the settings file is read with read.
func antigravitySpecOn(read readFileFunc, host antigravityHost) *Spec {
	s := &Spec{
		Provider: policy.Antigravity,
		Binaries: []string{"agy"},
		Install:  "install the Antigravity CLI agy (see https://github.com/google-antigravity/antigravity-cli)",
		Writer:   WriterTools{Shell: true, Guidance: "Tools: view_file, list_dir and grep_search to inspect; write_to_file, replace_file_content and multi_replace_file_content to edit; run_command (sandboxed) for checks, preferably in the foreground, and manage_task to collect a background task's result before you finish. A denied call ends the lane: do not retry or work around it."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "agy --sandbox with --mode accept-edits and run_command under commandExecutionPolicy: sandbox behind Switchyard's approval hook: agy's sandbox may still write its own temp/cache roots, existing hardlinks and bind loopback sockets, and its confinement has not been verified against a real agy here"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "agy --sandbox with a read-only tool list (view_file, list_dir, grep_search): tool limits, not a verified sandbox"},
		},
		KnownVersions:    []string{"1.1.27", "1.3.5"},
		QuotaSource:      QuotaUnsupported, // /quota is TUI-only: no trustworthy headless metric (docs/decisions.md D-2)
		ModelEvidence:    policy.EvidencePinnedArgv,
		Classify:         classifyAntigravityStream, // classify_stream.go
		CLIModel:         slugModel(policy.Antigravity),
		ExplicitAPISpend: true, // docs/RUNNER.md: Antigravity requires --api-spend
		OwnEnv:           append(antigravityGuard.vars(), antigravityGateways...),
		RemoveEnv:        removeEnv(),
		KeepEnv:          []string{},
		Guard: denyOnly(func(env map[string]string, req Request) []string {
			names := append(antigravityGuard.names(env), antigravityGatewayNames(env)...)
			return append(names, antigravitySettingsNames(req, read)...)
		}),

		// Classification, model proof, discovery and sandbox scope.
		ModelMatch:     ModelMatchExact,
		ModelEcho:      true, // init.model only echoes the argv override
		Models:         ModelsProbe{Argv: []string{"models"}, Read: readAntigravityModels},
		QuotaAdapter:   noProvenQuota, // no captured quota envelope
		TerminalFields: antigravityTerminalFields,
		// ~/.gemini (its antigravity-cli settings and state); the Code
		// Assist endpoints and Google OAuth.
		StateDirs: under(".gemini"),
		APIHosts:  https("cloudcode-pa.googleapis.com", "daily-cloudcode-pa.googleapis.com", "oauth2.googleapis.com"),
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		if req.Mode == policy.IsolatedWrite {
			files, err := prepareAntigravityWriter(host, req)
			return files, nil, err
		}
		root := antigravityReadOnlyDir(req)
		agents := filepath.Join(root, ".agents", "agents")
		files := []File{privateDir(root), privateDir(filepath.Dir(agents)), privateDir(agents),
			privateFile(filepath.Join(agents, AntigravityAgentName(req)+".md"), antigravityAgent(req))}
		return files, nil, nil
	}
	// Writers first require a bare stable 1.x `agy --version`, then model
	// discovery; read-only lanes run discovery only.
	s.Preflight = func(req Request) [][]string {
		if req.Mode == policy.IsolatedWrite {
			return [][]string{cliArgv(s, req, "--version"), cliArgv(s, req, "models")}
		}
		return [][]string{cliArgv(s, req, "models")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if req.Mode == policy.IsolatedWrite {
			if n == 0 {
				return readAntigravityVersion(c)
			}
			n--
		}
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		if !exited0(c) {
			return failedProbe("agy models", c)
		}
		for _, line := range strings.Split(string(c.Stdout), "\n") {
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == req.CLIModel {
				return pass("agy models lists %s; authentication and execution are proven only by the attempt", req.CLIModel)
			}
		}
		return fail(policy.StatusUnavailableModel, "agy models did not list %s", req.CLIModel)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		stdin, err := antigravityStdin(req)
		if err != nil {
			return Command{}, err
		}
		argv := cliArgv(s, req, "--print=", "--output-format", "stream-json", "--input-format", "stream-json",
			"--model", req.CLIModel, "--agent", AntigravityAgentName(req), "--sandbox")
		if req.Mode == policy.ReadOnly {
			// --disable-slash-commands would switch off --mode, so writers omit it.
			argv = append(argv, "--disable-slash-commands", "--add-dir", req.Cwd)
			return Command{Argv: argv, Dir: antigravityReadOnlyDir(req), Stdin: StdinBytes, StdinBytes: stdin}, nil
		}
		// The captured fingerprints and the generated hooks are rechecked
		// immediately before launch (Command.Check).
		argv = append(argv, "--project", AntigravityProject, "--mode", "accept-edits")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinBytes, StdinBytes: stdin,
			Capture: []string{filepath.Join(AntigravityControlDir(req), antigravityHookState)},
			Check:   func() error { return recheckAntigravityWriter(req) }}, nil
	}
	s.Parse = func(req Request, c Capture) Parsed {
		if req.Mode == policy.IsolatedWrite {
			return parseAntigravityWriter(req, c)
		}
		return parseAntigravity(req, c)
	}
	return s
}

// readAntigravityVersion is the writer's version gate: a bare stable
// numeric MAJOR.MINOR.PATCH on one line, major 1. Prereleases, unknown
// majors and malformed output stop before any model invocation.
func readAntigravityVersion(c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "agy --version failed (%s)", exitText(c))
	}
	line, err := singleLine(string(c.Stdout))
	if err == nil {
		var v Version
		if v, err = ParseVersion(line); err == nil {
			if v.Major != antigravityWriterMajor {
				return fail(policy.StatusUnavailableCLI, "agy %s is outside the writer contract (agy 1.x; observed checkpoint 1.3.5); fix: install an agy 1.x release or run the lane read-only", v)
			}
			return pass("agy %s is in the writer contract (1.x)", v)
		}
	}
	return fail(policy.StatusUnavailableCLI, "agy --version is not a bare stable 1.x version: %v", err)
}

// AntigravityAgentName is the attempt's temporary agent:
// pstack-<first 16 hex digits of sha256(receipt path)>.
func AntigravityAgentName(req Request) string { return "pstack-" + receiptDigest(req.Receipt, 16) }

// antigravityReadOnlyDir is the private launch directory of a read-only
// lane, so the checkout is reachable only through --add-dir.
func antigravityReadOnlyDir(req Request) string { return inPrivate(req, "antigravity") }

// antigravityTools is the agent's tool list for a mode.
func antigravityTools(mode policy.Access) []string {
	tools := append([]string{}, antigravityReadTools...)
	if mode == policy.IsolatedWrite {
		tools = append(append(tools, antigravityWriteTools...), antigravityCommandTools...)
	}
	return tools
}

// antigravityAgent renders the temporary agent definition.
func antigravityAgent(req Request) []byte {
	var b strings.Builder
	b.WriteString("---\nname: " + AntigravityAgentName(req) + "\n")
	b.WriteString("description: Switchyard worker for one assigned lane.\ntools:\n")
	for _, tool := range antigravityTools(req.Mode) {
		b.WriteString("  - " + tool + "\n")
	}
	if req.Mode == policy.IsolatedWrite {
		b.WriteString("commandExecutionPolicy: sandbox\n---\nDo the assigned task and nothing else. Use only the tools listed above: " +
			"no subagents, web access, MCP servers or external terminals. Run checks with run_command in the " +
			"foreground; collect any background task with manage_task before your final message. A denied call ends the task.\n")
		return []byte(b.String())
	}
	b.WriteString("---\nDo the assigned task and nothing else. Use only the tools listed above: " +
		"no subagents, web access, MCP servers or terminal commands.\n")
	return []byte(b.String())
}

// antigravityStdin is the one NDJSON user message agy reads: a launcher
// instruction for the mode, a blank line, then the prompt.
func antigravityStdin(req Request) ([]byte, error) {
	instruction := "Work read-only. The assigned checkout is " + req.Cwd + " (added to this session); " +
		"read it with view_file, list_dir and grep_search, change nothing, and give your complete answer in your final message."
	if req.Mode == policy.IsolatedWrite {
		instruction = "Work in the assigned worktree " + req.Cwd + " (the current directory) with the declared file tools; " +
			"run checks with run_command (sandboxed, foreground preferred) and collect background tasks with manage_task; " +
			"keep every change inside it and summarize the commands you ran and their results in your final message."
	}
	type message struct {
		Content string `json:"content"`
	}
	line := struct {
		Event   string  `json:"event"`
		Message message `json:"message"`
	}{"user", message{instruction + "\n\n" + string(req.Prompt)}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// antigravitySettingsNames checks agy's settings file under deny and names
// what blocks: the file when it exists but is unreadable or not a JSON
// object, or each model-routing key it contains (at any depth). A missing
// file is no route.
func antigravitySettingsNames(req Request, read readFileFunc) []string {
	const name = "~/" + antigravitySettings
	if !filepath.IsAbs(req.Home) {
		return []string{name + " (unreadable: home directory unknown)"}
	}
	data, err := read(filepath.Join(req.Home, filepath.FromSlash(antigravitySettings)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []string{name + " (unreadable)"}
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return []string{name + " (malformed)"}
	}
	var out []string
	for _, key := range antigravitySettingsRoutes {
		if jsonHasKey(doc, key) {
			out = append(out, name+": "+key)
		}
	}
	return out
}

// jsonHasKey reports whether key names a member of any object in v.
func jsonHasKey(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == key || jsonHasKey(child, key) {
				return true
			}
		}
	case []any:
		for _, child := range v {
			if jsonHasKey(child, key) {
				return true
			}
		}
	}
	return false
}
