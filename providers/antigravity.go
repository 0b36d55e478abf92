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

// antigravitySpec describes the Antigravity CLI (`agy --print=`, stream-json
// in and out). The prompt is one NDJSON user message on stdin; a temporary
// agent pins the tool list. Read-only lanes launch from a private directory
// and add the checkout with --add-dir; writers launch in their worktree
// with --mode accept-edits. Under deny the settings file is read with read.
func antigravitySpec(read readFileFunc) *Spec {
	s := &Spec{
		Provider: policy.Antigravity,
		Binaries: []string{"agy"},
		Install:  "install the Antigravity CLI agy (see https://github.com/google-antigravity/antigravity-cli)",
		Writer:   WriterTools{Shell: false, Guidance: "Tools: view_file, list_dir and grep_search to inspect; write_to_file, replace_file_content and multi_replace_file_content to edit; no command tool is granted."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "agy --sandbox with --mode accept-edits: the sandbox's write and network confinement is undocumented and unverified"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "agy --sandbox with a read-only tool list (view_file, list_dir, grep_search): tool limits, not a verified sandbox"},
		},
		KnownVersions: []string{"1.1.27", "1.3.5"},
		QuotaSource:   QuotaUnsupported, // /quota is TUI-only: no trustworthy headless metric (docs/decisions.md D-2)
		ModelEvidence: policy.EvidencePinnedArgv,
		CLIModel:      slugModel(policy.Antigravity),
		OwnEnv:        append(antigravityGuard.vars(), antigravityGateways...),
		RemoveEnv:     removeEnv(policy.Antigravity),
		KeepEnv:       []string{},
		Guard: denyOnly(func(env map[string]string, req Request) []string {
			names := append(antigravityGuard.names(env), antigravityGatewayNames(env)...)
			return append(names, antigravitySettingsNames(req, read)...)
		}),
		Parse: parseAntigravity,
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		root := req.Cwd
		var files []File
		if req.Mode == policy.ReadOnly {
			root = antigravityReadOnlyDir(req)
			files = append(files, privateDir(root))
		}
		agents := filepath.Join(root, ".agents", "agents")
		files = append(files, privateDir(filepath.Dir(agents)), privateDir(agents),
			privateFile(filepath.Join(agents, AntigravityAgentName(req)+".md"), antigravityAgent(req)))
		return files, nil, nil
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "models")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
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
		dir := req.Cwd
		if req.Mode == policy.ReadOnly {
			// --disable-slash-commands would switch off --mode, so writers omit it.
			argv = append(argv, "--disable-slash-commands", "--add-dir", req.Cwd)
			dir = antigravityReadOnlyDir(req)
		} else {
			argv = append(argv, "--mode", "accept-edits")
		}
		return Command{Argv: argv, Dir: dir, Stdin: StdinBytes, StdinBytes: stdin}, nil
	}
	return s
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
		tools = append(tools, antigravityWriteTools...)
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
			"keep every change inside it and summarize the result in your final message."
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
