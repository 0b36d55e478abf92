package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// openCodeV1ConfigPath is V1's single private opencode.json at the root of
// the private directory (OPENCODE_CONFIG).
func openCodeV1ConfigPath(req Request) string { return inPrivate(req, "opencode.json") }

// openCodeV2ConfigDir is V2's private config/ directory
// (OPENCODE_CONFIG_DIR).
func openCodeV2ConfigDir(req Request) string { return inPrivate(req, "config") }

// openCodeFiles are the selected contract's private files, mode 0600 (V2's
// directory 0700), in creation order.
func openCodeFiles(req Request) ([]File, error) {
	files, err := openCodeContractFiles(req)
	if err != nil || req.Mode != policy.IsolatedWrite {
		return files, err
	}
	sandbox, err := openCodeSandboxFiles(req)
	if err != nil {
		return nil, err
	}
	return append(files, sandbox...), nil
}

// openCodeContractFiles are the contract's configuration files.
func openCodeContractFiles(req Request) ([]File, error) {
	switch req.Contract {
	case openCodeContractV1:
		doc, err := openCodeV1Config(req)
		if err != nil {
			return nil, err
		}
		return []File{privateFile(openCodeV1ConfigPath(req), doc)}, nil
	case openCodeContractV2:
		doc, err := openCodeV2Config(req)
		if err != nil {
			return nil, err
		}
		dir := openCodeV2ConfigDir(req)
		return []File{
			privateDir(dir),
			privateFile(filepath.Join(dir, "opencode.json"), doc),
			privateFile(filepath.Join(dir, "service.json"), openCodeV2Service),
		}, nil
	}
	return nil, fmt.Errorf("opencode: unknown contract %q", req.Contract)
}

// openCodeV2Service is V2's service.json: the shared background service is
// disabled, so every command runs standalone in its own process.
var openCodeV2Service = []byte("{\n  \"enabled\": false\n}\n")

// openCodeDenied are the tools both contracts deny explicitly after the
// wildcard denial: external directories, recursive tasks, web tools,
// skills, questions and MCP. Shells are denied to read-only lanes and
// allowed to writers, whose shell is the sandbox wrapper.
var openCodeDenied = []string{"external_directory", "task", "webfetch", "websearch", "codesearch", "skill", "question", "mcp"}

// openCodeV1Permission is the V1 ordered permission map. The last matching
// rule wins, so the wildcard denial comes first and the read tools (plus
// edit and the sandboxed bash for writers) are allowed after it. The
// restored V1 policy adds no explicit .git edit denial.
func openCodeV1Permission(mode policy.Access) jsonObject {
	perm := jsonObject{{"*", "deny"}, {"read", "allow"}, {"glob", "allow"}, {"grep", "allow"}}
	if mode == policy.IsolatedWrite {
		perm = append(perm, jsonMember{"edit", "allow"}, jsonMember{"bash", "allow"})
	} else {
		perm = append(perm, jsonMember{"bash", "deny"})
	}
	for _, denied := range openCodeDenied {
		perm = append(perm, jsonMember{denied, "deny"})
	}
	return perm
}

// openCodeV1Config renders the private V1 opencode.json: model strings, a
// singular agent, the ordered permission map, no providers (the subscription
// mode too: the builtin OpenAI OAuth plugin loads under --pure with its own
// endpoint), no MCP, and sharing, autoupdate, snapshots, LSP, formatting
// and compaction off.
func openCodeV1Config(req Request) ([]byte, error) {
	if err := openCodeModel(req.CLIModel); err != nil {
		return nil, err
	}
	perm := openCodeV1Permission(req.Mode)
	agent := jsonObject{
		{"description", "Switchyard worker for one assigned lane."},
		{"mode", "primary"},
		{"model", req.CLIModel},
		{"permission", perm},
	}
	doc := jsonObject{
		{"$schema", "https://opencode.ai/config.json"},
		{"model", req.CLIModel},
		{"small_model", req.CLIModel},
		{"share", "disabled"},
		{"autoupdate", false},
		{"snapshot", false},
		{"lsp", false},
		{"formatter", false},
		{"compaction", jsonObject{{"auto", false}, {"prune", false}}},
		{"instructions", []string{}},
		{"plugin", []string{}},
		{"provider", jsonObject{}},
		{"mcp", jsonObject{}},
		{"permission", perm},
		{"agent", jsonObject{{OpenCodeAgentName(req), agent}}},
	}
	return renderJSON(doc)
}

// openCodeV2Model is V2's model object for a provider/model slug: the
// provider is the first path segment, the model everything after it
// (additional segments preserved).
func openCodeV2Model(slug string) jsonObject {
	provider, model, _ := strings.Cut(slug, "/")
	return jsonObject{{"providerID", provider}, {"model", model}}
}

// openCodeV2Permissions are V2's ordered action/resource/effect rules
// (the last matching rule wins): wildcard denial, the read tools, for
// writers edit and write with edits and writes to .git metadata denied
// after them, then the explicit denials.
func openCodeV2Permissions(mode policy.Access) []jsonObject {
	rule := func(action, resource, effect string) jsonObject {
		return jsonObject{{"action", action}, {"resource", resource}, {"effect", effect}}
	}
	rules := []jsonObject{rule("*", "*", "deny"), rule("read", "*", "allow"), rule("glob", "*", "allow"), rule("grep", "*", "allow")}
	if mode == policy.IsolatedWrite {
		rules = append(rules, rule("edit", "*", "allow"), rule("write", "*", "allow"),
			rule("edit", ".git", "deny"), rule("edit", ".git/**", "deny"),
			rule("write", ".git", "deny"), rule("write", ".git/**", "deny"),
			rule("shell", "*", "allow"), rule("bash", "*", "deny"))
	} else {
		rules = append(rules, rule("shell", "*", "deny"), rule("bash", "*", "deny"))
	}
	for _, denied := range append(append([]string{}, openCodeDenied...), "browser") { // V2 also ships a browser tool
		rules = append(rules, rule(denied, "*", "deny"))
	}
	return rules
}

// openCodeV2Plugins is V2's ordered plugin list: every builtin removed
// ("-*"), then the guarded provider plugin of the model's provider, and for
// the subscription mode the configured-provider plugin that applies the
// private providers section.
func openCodeV2Plugins(req Request) []string {
	provider, _, _ := strings.Cut(req.CLIModel, "/")
	out := []string{"-*", "opencode.provider." + provider}
	if req.ChatGPTSubscription {
		out = append(out, "opencode.config.provider")
	}
	return out
}

// openCodeV2Config renders the private V2 opencode.json: model objects,
// plural agents and ordered permission rules; sharing, updates, snapshots,
// warming, LSP, formatting, compaction, instructions, skills and MCP off;
// the subscription mode configures the ChatGPT endpoint with HTTP
// transport for the openai provider.
func openCodeV2Config(req Request) ([]byte, error) {
	if err := openCodeModel(req.CLIModel); err != nil {
		return nil, err
	}
	perms := openCodeV2Permissions(req.Mode)
	agent := jsonObject{
		{"description", "Switchyard worker for one assigned lane."},
		{"mode", "primary"},
		{"model", openCodeV2Model(req.CLIModel)},
		{"permissions", perms},
	}
	providers := jsonObject{}
	if req.ChatGPTSubscription {
		providers = jsonObject{{"openai", jsonObject{{"endpoint", jsonObject{{"url", openCodeChatGPTEndpoint}, {"transport", "http"}}}}}}
	}
	doc := jsonObject{
		{"$schema", "https://opencode.ai/config.json"},
		{"model", openCodeV2Model(req.CLIModel)},
		{"default_agent", OpenCodeAgentName(req)},
	}
	if req.Mode == policy.IsolatedWrite {
		doc = append(doc, jsonMember{"shell", openCodeShellPath(req)}) // the native shell setting, pinned to the sandbox wrapper
	}
	doc = append(doc, jsonObject{
		{"update", "disable"},
		{"share", "disabled"},
		{"snapshots", false},
		{"warming", false},
		{"lsp", false},
		{"formatter", false},
		{"compaction", jsonObject{{"auto", false}, {"prune", false}}},
		{"instructions", []string{}},
		{"skills", []string{}},
		{"mcp", jsonObject{}},
		{"plugins", openCodeV2Plugins(req)},
		{"providers", providers},
		{"permissions", perms},
		{"agents", jsonObject{{OpenCodeAgentName(req), agent}}},
	}...)
	return renderJSON(doc)
}

// renderJSON renders a document indented, with a trailing newline.
func renderJSON(doc any) ([]byte, error) {
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// readOpenCodeDebugConfig judges `debug config` for the selected contract.
// Raw configuration never reaches evidence.
func readOpenCodeDebugConfig(req Request, c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "opencode debug config failed (%s)", exitText(c))
	}
	if err := openCodePrivateIntact(req); err != nil {
		return fail(policy.StatusUnavailableCLI, "opencode private configuration is not intact: %v", err)
	}
	var err error
	switch req.Contract {
	case openCodeContractV1:
		err = checkOpenCodeV1Effective(req, c.Stdout)
	case openCodeContractV2:
		err = checkOpenCodeV2Sources(req, c.Stdout)
	default:
		err = fmt.Errorf("no contract was selected")
	}
	if err != nil {
		return fail(policy.StatusUnavailableCLI, "opencode %s", err)
	}
	return pass("opencode %s configuration verified (%s)", strings.ToUpper(req.Contract), openCodeEndpointNote(req))
}

// openCodeEndpointNote records the configured endpoint truthfully: V2's
// subscription mode configures the ChatGPT endpoint; everything else
// configures none.
func openCodeEndpointNote(req Request) string {
	if req.ChatGPTSubscription && req.Contract == openCodeContractV2 {
		return "configured endpoint " + openCodeChatGPTEndpoint + " over HTTP; not an attestation of the resolved route"
	}
	return "no configured endpoint"
}

// checkOpenCodeV1Effective checks V1's merged effective configuration: the
// pinned model and small model, the attempt agent and the ordered
// permission map exactly, provider overrides empty and no MCP server.
func checkOpenCodeV1Effective(req Request, out []byte) error {
	want, err := openCodeV1Config(req)
	if err != nil {
		return fmt.Errorf("private configuration cannot be rendered")
	}
	expected, _ := decodeOrdered(want)
	got, err := decodeOrdered(out)
	gotObj, ok := got.(jsonObject)
	if err != nil || !ok {
		return fmt.Errorf("debug config did not print one JSON object")
	}
	if dup := duplicateKey(gotObj); dup != "" {
		return fmt.Errorf("effective configuration repeats %q", dup)
	}
	exp := expected.(jsonObject)
	for _, key := range []string{"model", "small_model", "permission"} {
		if v, ok := gotObj.get(key); !ok || !jsonEqualIn(v, exp.mustGet(key), key == "permission") {
			return fmt.Errorf("effective configuration does not carry the private %s", key)
		}
	}
	name := OpenCodeAgentName(req)
	agents, _ := gotObj.get("agent")
	agentsObj, _ := agents.(jsonObject)
	wantAgents := exp.mustGet("agent").(jsonObject)
	if v, ok := agentsObj.get(name); !ok || !jsonEqual(withoutEmptyOptions(v), wantAgents.mustGet(name)) {
		return fmt.Errorf("effective configuration does not carry the private agent")
	}
	for _, key := range []string{"provider", "mcp"} {
		if v, ok := gotObj.get(key); ok {
			if obj, isObj := v.(jsonObject); !isObj || len(obj) != 0 {
				return fmt.Errorf("effective configuration has a non-empty %s section", key)
			}
		}
	}
	return nil
}

// withoutEmptyOptions drops the empty "options" object OpenCode 1.x adds to
// every agent it loads (observed with opencode 1.18.33: the private agent
// comes back from `debug config` with "options": {} appended). Options
// carrying anything are left in place, so they fail the comparison.
func withoutEmptyOptions(v any) any {
	agent, ok := v.(jsonObject)
	if !ok {
		return v
	}
	out := make(jsonObject, 0, len(agent))
	for _, m := range agent {
		if opts, isObj := m.Value.(jsonObject); m.Key == "options" && isObj && len(opts) == 0 {
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkOpenCodeV2Sources checks V2's configuration sources: exactly the
// private document (its path and its contents, compared structurally with
// array order significant) and the private directory, nothing foreign,
// pathless, duplicated, missing or additional.
func checkOpenCodeV2Sources(req Request, out []byte) error {
	want, err := openCodeV2Config(req)
	if err != nil {
		return fmt.Errorf("private configuration cannot be rendered")
	}
	expected, _ := decodeOrdered(want)
	got, err := decodeOrdered(out)
	entries, ok := got.([]any)
	if err != nil || !ok {
		return fmt.Errorf("debug config did not print one JSON array of configuration sources")
	}
	dir := openCodeV2ConfigDir(req)
	doc := filepath.Join(dir, "opencode.json")
	var sawDoc, sawDir bool
	for _, e := range entries {
		obj, ok := e.(jsonObject)
		if !ok {
			return fmt.Errorf("debug config lists a source that is not an object")
		}
		if dup := duplicateKey(obj); dup != "" {
			return fmt.Errorf("debug config source repeats %q", dup)
		}
		typ, _ := obj.get("type")
		path, hasPath := obj.get("path")
		switch {
		case !hasPath:
			return fmt.Errorf("debug config lists a pathless %v source", typ)
		case typ == "document" && path == doc && !sawDoc:
			if len(obj) != 3 {
				return fmt.Errorf("the private document source carries unexpected fields")
			}
			info, _ := obj.get("info")
			if !jsonEqual(info, expected) {
				return fmt.Errorf("the private document's effective contents differ from the private configuration")
			}
			sawDoc = true
		case typ == "directory" && path == dir && !sawDir && len(obj) == 2:
			sawDir = true
		default:
			return fmt.Errorf("debug config lists a foreign, duplicate or unexpected %v source", typ)
		}
	}
	if !sawDoc || !sawDir {
		return fmt.Errorf("debug config does not list the private document and directory")
	}
	return nil
}

// duplicateKey returns the first member name an object repeats ("" when
// none): a repeated member is ambiguous and never compared.
func duplicateKey(o jsonObject) string {
	seen := map[string]bool{}
	for _, m := range o {
		if seen[m.Key] {
			return m.Key
		}
		seen[m.Key] = true
	}
	return ""
}

// openCodePrivateIntact checks the contract's private files are exactly
// what the runner wrote (regular 0600 files, not symlinks, same bytes) and
// that nothing else appeared beside them: on V1 the private directory
// holds only opencode.json; on V2 it holds only config/, which holds only
// opencode.json and service.json. Beside them the CLI's own global
// configuration directory opencode/ may appear, holding at most its
// .gitignore (openCodeGlobalDirIntact).
func openCodePrivateIntact(req Request) error {
	files, err := openCodeFiles(req)
	if err != nil {
		return err
	}
	want := map[string][]string{} // directory -> expected entry names
	want[req.PrivateDir] = nil
	for _, f := range files {
		parent := filepath.Dir(f.Path)
		want[parent] = append(want[parent], filepath.Base(f.Path))
		if f.Dir {
			if err := realDirectory(f.Path); err != nil {
				return err
			}
			want[f.Path] = want[f.Path][:0:0]
			continue
		}
		fi, err := os.Lstat(f.Path)
		switch {
		case err != nil:
			return fmt.Errorf("%s is missing", filepath.Base(f.Path))
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s was replaced by something other than a regular file", filepath.Base(f.Path))
		case fi.Mode().Perm() != fs.FileMode(f.Mode):
			return fmt.Errorf("%s mode changed to %04o", filepath.Base(f.Path), fi.Mode().Perm())
		}
		got, err := os.ReadFile(f.Path)
		if err != nil || !bytes.Equal(got, f.Content) {
			return fmt.Errorf("%s was modified", filepath.Base(f.Path))
		}
	}
	// Shell commands write the private temporary and cache directories.
	delete(want, openCodeShellTmp(req))
	delete(want, openCodeShellCache(req))
	if err := openCodeGlobalDirIntact(req); err != nil {
		return err
	}
	want[req.PrivateDir] = append(want[req.PrivateDir], openCodeGlobalDirName)
	for dir, names := range want {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("private directory cannot be read")
		}
		for _, e := range entries {
			if !slices.Contains(names, e.Name()) {
				return fmt.Errorf("unexpected %s %s in the private configuration", entryKind(e), e.Name())
			}
		}
	}
	return nil
}

// openCodeGlobalDirName is the CLI's global configuration directory,
// $XDG_CONFIG_HOME/opencode, inside the private directory (XDG_CONFIG_HOME
// is the private directory).
const openCodeGlobalDirName = "opencode"

// openCodeGitignore is the one file OpenCode writes into a configuration
// directory it loads: a .gitignore for the plugin dependencies it may
// install there. It configures nothing.
const openCodeGitignore = ".gitignore"

// openCodeGlobalDirIntact accepts exactly what the real CLI writes into the
// private directory on its own (observed with opencode 1.18.33, every
// command, --version and --pure included): its global configuration
// directory opencode/, created at startup, and once a command loads
// configuration, a .gitignore in it. That directory cannot be moved
// elsewhere: it is where the CLI looks for a global opencode.json,
// config.json, opencode.jsonc, agents, commands, modes and plugins, and it
// is the private directory's job to hold none of those. So it may be
// absent, or a real directory (never a symlink, which could lead to a
// user's configuration) holding nothing, or only a regular .gitignore;
// anything else in it (a configuration file, an agent, a command, a plugin
// or its package.json and node_modules) fails closed.
func openCodeGlobalDirIntact(req Request) error {
	dir := inPrivate(req, openCodeGlobalDirName)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("private directory cannot be read")
	}
	if !fi.IsDir() {
		return fmt.Errorf("unexpected %s %s in the private configuration (opencode's global configuration directory must be a real directory)", entryKind(fs.FileInfoToDirEntry(fi)), openCodeGlobalDirName)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("private directory cannot be read")
	}
	for _, e := range entries {
		if e.Name() == openCodeGitignore && e.Type().IsRegular() {
			continue
		}
		return fmt.Errorf("unexpected %s %s in the private configuration", entryKind(e), filepath.Join(openCodeGlobalDirName, e.Name()))
	}
	return nil
}

// entryKind names a directory entry's type for evidence: symlink,
// directory or file.
func entryKind(e fs.DirEntry) string {
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t.IsDir():
		return "directory"
	}
	return "file"
}

// realDirectory reports whether p is a directory and not a symlink.
func realDirectory(p string) error {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is missing or not a real directory", filepath.Base(p))
	}
	return nil
}
