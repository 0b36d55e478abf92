package providers

import (
	"crypto/sha256"
	"encoding/hex"
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

// Antigravity writers (provider-dispatch.md "Optional Antigravity models"
// and the agy paragraphs of "External lanes"). A writer launches in its
// worktree with --project default-cli-project and --mode accept-edits; its
// temporary agent grants the read and direct file-edit tools plus
// run_command and manage_task under commandExecutionPolicy: sandbox. Every
// command, task and file-edit call goes through a fixed approval hook
// declared in .agents/hooks.json; the hook program and its bounded session
// state live in a unique control directory under the real home. Before
// anything is created the user's agy configuration is inspected and
// fingerprinted; the fingerprints are rechecked before launch, by the hook
// on every call and after the workload settles.
//
// Which parts are public fact and which are this adapter's assumption is
// recorded in docs/PROVIDERS.md ("Antigravity writers").

// AntigravityProject is the project every writer pins.
const AntigravityProject = "default-cli-project"

// antigravityCommandTools are the writer's command and task tools.
var antigravityCommandTools = []string{"run_command", "manage_task"}

// antigravityWriterMajor is the agy major whose writer contract is
// compatible (1.x); 1.3.5 is the observed checkpoint, not an allowlist.
const antigravityWriterMajor = 1

// AntigravityHookMaxCalls bounds the hook's session state: calls after
// this many are denied, which ends the lane.
const AntigravityHookMaxCalls = 4096

// antigravityHookState is the state file the hook keeps in the control
// directory; the runner reads it after the workload settles.
const antigravityHookState = "state.json"

// antigravityHookPolicy is the captured policy the hook reads.
const antigravityHookPolicy = "policy.json"

// antigravityHookProgram is the fixed approval program agy runs.
const antigravityHookProgram = "approve"

// antigravityHost is what a writer's preparation reads from the machine:
// the inspection of the user's configuration and worktree, and the
// switchyard executable the approval hook runs. Contract goldens replace
// it with fixed answers; everything else uses realAntigravityHost.
type antigravityHost struct {
	inspect func(Request) ([]antigravitySource, error)
	self    func() (string, error)
}

var realAntigravityHost = antigravityHost{inspect: inspectAntigravityWriter, self: os.Executable}

// RefusedError is a provider's refusal to prepare or launch an attempt
// because of the user's own configuration or CLI: nothing was started and
// the receipt status is Status (unsupported-capability for a writer
// policy the adapter cannot run under, unavailable-cli for an incompatible
// CLI). Reason names the source and key and the fix; never a value.
type RefusedError struct {
	Status policy.ReceiptStatus
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

func refuse(format string, a ...any) error {
	return &RefusedError{Status: policy.StatusUnsupportedCapability, Reason: fmt.Sprintf(format, a...)}
}

// AntigravityControlDir is the writer's unique control directory under the
// real home, outside the worktree and the native temp and cache roots.
func AntigravityControlDir(req Request) string {
	return filepath.Join(req.Home, ".switchyard-antigravity-"+receiptDigest(req.Receipt, 24))
}

// antigravityHooksFile is the workspace hooks file a writer creates.
func antigravityHooksFile(req Request) string { return filepath.Join(req.Cwd, ".agents", "hooks.json") }

// antigravitySource is one inspected configuration source.
type antigravitySource struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Fingerprint string `json:"fingerprint"`
}

// AntigravityHookPolicy is the captured policy in the control directory:
// what the hook enforces and the fingerprints it rechecks.
type AntigravityHookPolicy struct {
	Schema    int                 `json:"schema"`
	Worktree  string              `json:"worktree"`
	Control   string              `json:"control"`
	Agent     string              `json:"agent"`
	MaxCalls  int                 `json:"maxCalls"`
	Sources   []antigravitySource `json:"sources"`
	Protected []string            `json:"protected"` // paths no file tool may touch
}

// antigravityUserSources are the user-level configuration sources a
// writer inspects: agy's settings (hooks may live there), the global
// customization hooks file, both user plugin roots and the global skills.
func antigravityUserSources(home string) []antigravitySource {
	return []antigravitySource{
		{Name: "settings", Path: filepath.Join(home, filepath.FromSlash(antigravitySettings))},
		{Name: sourceShared, Path: filepath.Join(home, ".gemini", "config", "config.json")},
		{Name: sourceDefaultProject, Path: filepath.Join(home, ".gemini", "config", "projects", AntigravityProject+".json")},
		{Name: "global hooks", Path: filepath.Join(home, ".gemini", "config", "hooks.json")},
		{Name: "user plugins", Path: filepath.Join(home, ".gemini", "antigravity-cli", "plugins")},
		{Name: "customization plugins", Path: filepath.Join(home, ".gemini", "config", "plugins")},
	}
}

// The shared and default-project configuration sources (the dispatch
// seed: "Preparation inspects CLI settings, shared and default-project
// configuration"). Their locations and keys are not in agy's published
// reference; they are third-party observations of agy 1.x state
// (docs/PROVIDERS.md): ~/.gemini/config/config.json, shared with the
// Antigravity app (keys plugins, userSettings), and
// ~/.gemini/config/projects/<project>.json for the project writers pin
// (keys id, name, projectResources, settings).
const (
	sourceShared         = "shared configuration"
	sourceDefaultProject = "default-project configuration"
)

// antigravityCatalog is the one plugin catalog a writer accepts in a user
// plugin root, as data (the seed: "Only the Codex marketplace catalog
// named open-pstack is accepted as data; other or unknown catalogs are
// refused"). It is a directory of that name holding only the catalog
// file, whose "name" is the catalog's: no plugin manifest, hooks, MCP
// configuration, skills, agents or rules, so nothing in it can load.
const (
	antigravityCatalog     = "open-pstack"
	antigravityCatalogFile = "marketplace.json"
)

// antigravityHarmlessSettings are settings keys with no bearing on what a
// writer may execute: display, notification and telemetry preferences,
// trusted-workspace lists, and the billing-route keys the spending guard
// judges separately.
var antigravityHarmlessSettings = map[string]bool{
	"colorScheme": true, "altScreenMode": true, "notifications": true, "showTips": true,
	"showFeedbackSurvey": true, "editor": true, "verbosity": true, "runningLightSpeed": true,
	"enableTelemetry": true, "trustedWorkspaces": true, "trustedFolders": true,
	"useG1Credits": true, "modelProvider": true, "modelConfigOverrides": true,
}

// antigravityPolicySettings are execution-policy keys accepted only at
// their documented default; anything else is a customization a writer
// refuses. enableTerminalSandbox is accepted either way: the runner passes
// --sandbox, and true only narrows commands further.
var antigravityPolicySettings = map[string]func(any) bool{
	"toolPermission":          func(v any) bool { return v == "request-review" },
	"artifactReviewPolicy":    func(v any) bool { return v == "asks-for-review" },
	"allowNonWorkspaceAccess": func(v any) bool { return v == false },
	"enableTerminalSandbox":   func(v any) bool { _, ok := v.(bool); return ok },
}

// inspectAntigravityWriter inspects the user's configuration and the
// worktree for a writer and returns the fingerprinted sources, or a
// refusal naming the source and key.
func inspectAntigravityWriter(req Request) ([]antigravitySource, error) {
	if !filepath.IsAbs(req.Home) {
		return nil, refuse("antigravity writer: the real home directory is unknown, so agy's configuration cannot be inspected; fix: set HOME")
	}
	if err := antigravityAncestry(req); err != nil {
		return nil, err
	}
	control := AntigravityControlDir(req)
	if _, err := os.Lstat(control); !errors.Is(err, fs.ErrNotExist) {
		return nil, refuse("antigravity writer: control directory %s already exists; it must be unique to this attempt", control)
	}
	sources := antigravityUserSources(req.Home)
	var extra []antigravitySource
	for i := range sources {
		s := &sources[i]
		fp, err := fingerprintPath(s.Path)
		if err != nil {
			return nil, refuse("antigravity writer: %s %s is unreadable (%v); fix its permissions", s.Name, s.Path, errors.Unwrap(err))
		}
		s.Fingerprint = fp
		if fp == fingerprintAbsent {
			continue
		}
		switch s.Name {
		case "settings":
			if err := checkAntigravitySettings(s.Path); err != nil {
				return nil, err
			}
		case sourceShared:
			if err := checkAntigravityShared(s.Path); err != nil {
				return nil, err
			}
		case sourceDefaultProject:
			if err := checkAntigravityProject(s.Path); err != nil {
				return nil, err
			}
		case "global hooks":
			return nil, refuse("antigravity writer: competing hooks in %s; the writer's approval hook must be the only one (fix: move that file away for writer lanes)", s.Path)
		default:
			if fp == fingerprintEmptyDir {
				continue
			}
			catalog, err := antigravityCatalogOnly(s.Path)
			if err != nil {
				return nil, err
			}
			// The accepted catalog is data: its file is fingerprinted
			// too, so a change to it is seen like any other source's.
			extra = append(extra, antigravitySource{Name: "plugin catalog " + antigravityCatalog, Path: catalog})
		}
	}
	for _, s := range extra {
		fp, err := fingerprintPath(s.Path)
		if err != nil {
			return nil, refuse("antigravity writer: %s %s is unreadable (%v); fix its permissions", s.Name, s.Path, errors.Unwrap(err))
		}
		s.Fingerprint = fp
		sources = append(sources, s)
	}
	return sources, nil
}

// antigravityCatalogOnly accepts a non-empty user plugin root that holds
// only the open-pstack catalog and returns the catalog file's path; any
// other entry is an active or unknown plugin or catalog, refused.
func antigravityCatalogOnly(root string) (string, error) {
	plugins := func(what string) error {
		return refuse("antigravity writer: %s under %s; writers run only without user plugins, and the only catalog accepted as data is %s (fix: uninstall them or run read-only)", what, root, antigravityCatalog)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", refuse("antigravity writer: %s is unreadable; fix its permissions", root)
	}
	if len(entries) != 1 || entries[0].Name() != antigravityCatalog || !entries[0].IsDir() {
		return "", plugins("active plugins")
	}
	dir := filepath.Join(root, antigravityCatalog)
	inner, err := os.ReadDir(dir)
	if err != nil {
		return "", refuse("antigravity writer: %s is unreadable; fix its permissions", dir)
	}
	if len(inner) != 1 || inner[0].Name() != antigravityCatalogFile || !inner[0].Type().IsRegular() {
		return "", plugins("a plugin or unknown catalog named " + antigravityCatalog)
	}
	path := filepath.Join(dir, antigravityCatalogFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", refuse("antigravity writer: catalog %s is unreadable; fix its permissions", path)
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil || doc["name"] != antigravityCatalog {
		return "", plugins("an unknown catalog (its " + antigravityCatalogFile + " is not the " + antigravityCatalog + " catalog)")
	}
	return path, nil
}

// readObject reads a configuration file that must be one JSON object.
func readObject(what, path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, refuse("antigravity writer: %s %s is unreadable; fix its permissions", what, path)
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return nil, refuse("antigravity writer: %s %s is not a JSON object; fix the file", what, path)
	}
	return doc, nil
}

// objectKeys is doc's keys in order, so a refusal names the same key
// every time.
func objectKeys(doc map[string]any) []string {
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// emptyValue reports whether v holds nothing: null, "", an empty object
// or an empty array.
func emptyValue(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// checkAntigravityShared judges the configuration agy shares with the
// Antigravity app: its userSettings under the settings rules, no enabled
// plugin, and no key it cannot judge (named, never its value).
func checkAntigravityShared(path string) error {
	doc, err := readObject(sourceShared, path)
	if err != nil {
		return err
	}
	for _, k := range objectKeys(doc) {
		switch k {
		case "userSettings":
			settings, ok := doc[k].(map[string]any)
			if !ok && doc[k] != nil {
				return refuse("antigravity writer: %s %s key userSettings is not an object; fix the file", sourceShared, path)
			}
			if err := judgeAntigravitySettings(sourceShared+" "+path+" userSettings", settings); err != nil {
				return err
			}
		case "plugins":
			if !emptyValue(doc[k]) {
				return refuse("antigravity writer: %s %s key plugins enables plugins; writers run only without user plugins (fix: disable them or run read-only)", sourceShared, path)
			}
		default:
			return refuse("antigravity writer: %s %s key %s is unknown policy; writers refuse configuration they cannot judge (fix: remove the key or run read-only)", sourceShared, path, CapText(k, 80))
		}
	}
	return nil
}

// checkAntigravityProject judges the default project's configuration:
// its id and name are harmless; project resources (folders the project
// adds to every session) and any project setting (project settings take
// precedence over the settings file) are refused.
func checkAntigravityProject(path string) error {
	doc, err := readObject(sourceDefaultProject, path)
	if err != nil {
		return err
	}
	for _, k := range objectKeys(doc) {
		switch k {
		case "id", "name":
		case "projectResources":
			if !emptyProjectResources(doc[k]) {
				return refuse("antigravity writer: %s %s key projectResources adds extra project resources; writers run with their worktree only (fix: remove them or run read-only)", sourceDefaultProject, path)
			}
		case "settings":
			settings, ok := doc[k].(map[string]any)
			if !ok && doc[k] != nil {
				return refuse("antigravity writer: %s %s key settings is not an object; fix the file", sourceDefaultProject, path)
			}
			for _, sk := range objectKeys(settings) {
				return refuse("antigravity writer: %s %s key settings.%s customizes execution policy for the project, which takes precedence over the settings file; writers need the defaults (fix: remove the key)", sourceDefaultProject, path, CapText(sk, 80))
			}
		default:
			return refuse("antigravity writer: %s %s key %s is unknown policy; writers refuse configuration they cannot judge (fix: remove the key or run read-only)", sourceDefaultProject, path, CapText(k, 80))
		}
	}
	return nil
}

// emptyProjectResources accepts an empty value, or an object whose only
// key is an empty resources list.
func emptyProjectResources(v any) bool {
	if emptyValue(v) {
		return true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, inner := range obj {
		if k != "resources" || !emptyValue(inner) {
			return false
		}
	}
	return true
}

// antigravityAncestry refuses a writer whose policy location is unsafe:
// a worktree that is not a real directory, a symlink anywhere on the path
// to .agents, an existing .agents/hooks.json, or project resources
// (.agents/skills, rules, plugins, MCP configuration) the worker would load.
func antigravityAncestry(req Request) error {
	real, err := filepath.EvalSymlinks(req.Cwd)
	if err != nil {
		return refuse("antigravity writer: worktree %s is unreadable: %v", req.Cwd, err)
	}
	if real != req.Cwd {
		return refuse("antigravity writer: worktree %s reaches %s through a symlink; fix: pass the canonical worktree path", req.Cwd, real)
	}
	agents := filepath.Join(req.Cwd, ".agents")
	fi, err := os.Lstat(agents)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return refuse("antigravity writer: %s is unreadable: %v", agents, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse("antigravity writer: %s is a symlink; the writer's agent and hooks must not be written through it", agents)
	case !fi.IsDir():
		return refuse("antigravity writer: %s is not a directory", agents)
	}
	entries, err := os.ReadDir(agents)
	if err != nil {
		return refuse("antigravity writer: %s is unreadable: %v", agents, err)
	}
	for _, e := range entries {
		switch {
		case e.Name() == "hooks.json":
			return refuse("antigravity writer: %s already exists; existing workspace hooks are refused, never merged (fix: remove it from the writer's worktree)", filepath.Join(agents, "hooks.json"))
		case e.Name() == "agents" && e.Type()&fs.ModeSymlink != 0:
			return refuse("antigravity writer: %s is a symlink; the writer's agent must not be written through it", filepath.Join(agents, "agents"))
		case e.Name() == "agents" && e.IsDir():
			inner, err := os.ReadDir(filepath.Join(agents, "agents"))
			if err != nil || len(inner) > 0 {
				return refuse("antigravity writer: %s holds other agent definitions; writers run only with their own agent", filepath.Join(agents, "agents"))
			}
		default:
			return refuse("antigravity writer: extra project resource %s; writers run without workspace skills, rules, plugins or MCP configuration", filepath.Join(agents, e.Name()))
		}
	}
	return nil
}

// checkAntigravitySettings refuses settings that change what a writer may
// execute, with the key named (never its value).
func checkAntigravitySettings(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return refuse("antigravity writer: settings %s are unreadable; fix their permissions", path)
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return refuse("antigravity writer: settings %s are not a JSON object; fix the file", path)
	}
	return judgeAntigravitySettings("settings "+path, doc)
}

// judgeAntigravitySettings applies the settings rules to doc, read from
// where (a file, or a key of one): harmless keys pass, hooks compete,
// execution-policy keys pass only at their default, anything else is
// unknown policy.
func judgeAntigravitySettings(where string, doc map[string]any) error {
	for _, k := range objectKeys(doc) {
		switch {
		case antigravityHarmlessSettings[k]:
		case k == "hooks":
			return refuse("antigravity writer: %s key hooks declares competing hooks; fix: remove it for writer lanes", where)
		case antigravityPolicySettings[k] != nil:
			if !antigravityPolicySettings[k](doc[k]) {
				return refuse("antigravity writer: %s key %s customizes execution policy; writers need the default (fix: remove the key)", where, k)
			}
		default:
			return refuse("antigravity writer: %s key %s is unknown policy; writers refuse settings they cannot judge (fix: remove the key or run read-only)", where, CapText(k, 80))
		}
	}
	return nil
}

// Fingerprints of absent and empty sources.
const (
	fingerprintAbsent   = "absent"
	fingerprintEmptyDir = "dir:empty"
)

// fingerprintPath is a content fingerprint of a file (sha256), of a
// directory (its sorted entry names and types, one level), or "absent".
// Symlinks are fingerprinted by their target text so a swap is visible.
func fingerprintPath(p string) (string, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fingerprintAbsent, nil
	}
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("inspect: %w", err)
		}
		sum, err := fingerprintFollow(p)
		if err != nil {
			return "", err
		}
		return "symlink:" + digest([]byte(target)) + ":" + sum, nil
	case fi.IsDir():
		return fingerprintDir(p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	return "file:" + digest(data), nil
}

func fingerprintFollow(p string) (string, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fingerprintAbsent, nil
	}
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	if fi.IsDir() {
		return fingerprintDir(p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	return "file:" + digest(data), nil
}

func fingerprintDir(p string) (string, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return "", fmt.Errorf("inspect: %w", err)
	}
	if len(entries) == 0 {
		return fingerprintEmptyDir, nil
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Name() + "\x00" + e.Type().String() + "\n")
	}
	return "dir:" + digest([]byte(b.String())), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RecheckAntigravitySources compares every captured source with its
// current fingerprint and names the first that changed ("" when none).
func RecheckAntigravitySources(sources []antigravitySource) string {
	for _, s := range sources {
		now, err := fingerprintPath(s.Path)
		if err != nil || now != s.Fingerprint {
			return s.Name + " " + s.Path
		}
	}
	return ""
}

// prepareAntigravityWriter inspects, then returns the writer's files: the
// control directory with the approval program and captured policy, and the
// workspace .agents/agents/<agent>.md and .agents/hooks.json (all created
// exclusively by the runner, never through a symlink).
func prepareAntigravityWriter(host antigravityHost, req Request) ([]File, error) {
	sources, err := host.inspect(req)
	if err != nil {
		return nil, err
	}
	control := AntigravityControlDir(req)
	self, err := host.self()
	if err != nil {
		return nil, fmt.Errorf("locate the switchyard executable for the approval hook: %w", err)
	}
	for _, p := range []string{self, control} {
		if strings.ContainsAny(p, "'\n\x00") {
			return nil, refuse("antigravity writer: path %q cannot be quoted for the approval hook", p)
		}
	}
	agentsDir := filepath.Join(req.Cwd, ".agents")
	agentFile := filepath.Join(agentsDir, "agents", AntigravityAgentName(req)+".md")
	hooksFile := antigravityHooksFile(req)
	pol := AntigravityHookPolicy{
		Schema: 1, Worktree: req.Cwd, Control: control, Agent: AntigravityAgentName(req),
		MaxCalls: AntigravityHookMaxCalls, Sources: sources,
		Protected: []string{agentsDir, control},
	}
	polJSON, err := json.MarshalIndent(pol, "", "  ")
	if err != nil {
		return nil, err
	}
	program := "#!/bin/sh\n# Switchyard's fixed approval hook for one Antigravity writer attempt.\nexec '" +
		self + "' antigravity-hook --control '" + control + "'\n"
	hooks, err := antigravityHooksJSON(filepath.Join(control, antigravityHookProgram))
	if err != nil {
		return nil, err
	}
	return []File{
		privateDir(control),
		{Path: filepath.Join(control, antigravityHookProgram), Mode: 0o700, Content: []byte(program)},
		privateFile(filepath.Join(control, antigravityHookPolicy), append(polJSON, '\n')),
		guarded(privateDir(agentsDir)), guarded(privateDir(filepath.Dir(agentFile))),
		guarded(privateFile(agentFile, antigravityAgent(req))),
		guarded(privateFile(hooksFile, hooks)),
	}, nil
}

// guarded marks a file the worker can reach: the runner removes it after
// the attempt only when unchanged (or empty), else leaves and reports it.
func guarded(f File) File { f.Guard = true; return f }

// antigravityHookedTools are the tool calls the approval hook judges: the
// command and task tools, and the direct file tools (so no file tool can
// alter the generated agent, hooks or control directory).
func antigravityHookedTools() []string {
	return append(append([]string{}, antigravityCommandTools...), antigravityWriteTools...)
}

// antigravityHooksJSON is the workspace hooks file: one PreToolUse hook for
// the judged tools, failing closed.
func antigravityHooksJSON(program string) ([]byte, error) {
	type handler struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type matcher struct {
		Matcher string    `json:"matcher"`
		Hooks   []handler `json:"hooks"`
	}
	doc := map[string]any{"hooks": map[string][]matcher{
		"PreToolUse": {{Matcher: strings.Join(antigravityHookedTools(), "|"),
			Hooks: []handler{{Type: "command", Command: program, Timeout: 30}}}},
	}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// loadAntigravityPolicy reads the captured policy of a writer attempt.
func loadAntigravityPolicy(control string) (AntigravityHookPolicy, error) {
	var pol AntigravityHookPolicy
	data, err := os.ReadFile(filepath.Join(control, antigravityHookPolicy))
	if err != nil {
		return pol, err
	}
	if err := json.Unmarshal(data, &pol); err != nil || pol.Schema != 1 || pol.Control != control {
		return pol, errors.New("captured policy is malformed")
	}
	return pol, nil
}

// recheckAntigravityWriter rechecks the captured fingerprints and the
// generated files immediately before launch; a change refuses the launch.
func recheckAntigravityWriter(req Request) error {
	pol, err := loadAntigravityPolicy(AntigravityControlDir(req))
	if err != nil {
		return refuse("antigravity writer: the captured policy in %s is unreadable (%v); nothing was launched", AntigravityControlDir(req), err)
	}
	if changed := RecheckAntigravitySources(pol.Sources); changed != "" {
		return refuse("antigravity writer: %s changed between inspection and launch; nothing was launched", changed)
	}
	hooks, err := os.ReadFile(antigravityHooksFile(req))
	want, herr := antigravityHooksJSON(filepath.Join(pol.Control, antigravityHookProgram))
	if err != nil || herr != nil || string(hooks) != string(want) {
		return refuse("antigravity writer: %s was replaced before launch; nothing was launched", antigravityHooksFile(req))
	}
	return nil
}

// parseAntigravityWriter adds the writer's settlement checks to the
// stream parse: the approval hook's session state (any denial or hook
// failure ends the lane even when the result says SUCCESS; a command or
// task tool that ran without the hook is a protocol fault) and the
// fingerprint recheck after settlement.
func parseAntigravityWriter(req Request, c Capture) Parsed {
	p := parseAntigravity(req, c)
	control := AntigravityControlDir(req)
	state, stateErr := ReadAntigravityHookState(c.Files[filepath.Join(control, antigravityHookState)])
	commands := antigravityCommandSteps(c.Stdout)
	switch {
	case stateErr != nil:
		p.ProtocolError = fmt.Errorf("antigravity approval hook state is unreadable: %v", stateErr)
	case state.Denied > 0 || state.Failed > 0:
		p.FinalText = ""
		p.ToolDenial = &policy.ToolDenial{Verified: true, Cause: policy.DenialUnknown, Evidence: "antigravity_hook_denied:" + state.LastCode}
		if p.TerminalError == "" {
			p.TerminalError = fmt.Sprintf("the approval hook denied %d call(s) (last: %s); a hook denial ends the lane", state.Denied+state.Failed, state.LastCode)
		}
	case commands > state.Commands:
		p.ProtocolError = fmt.Errorf("antigravity ran %d command or task step(s) but the approval hook approved %d", commands, state.Commands)
	}
	if changed := antigravityGeneratedChanged(req, control); changed != "" && p.ProtocolError == nil {
		p.ProtocolError = fmt.Errorf("antigravity writer: %s was replaced while the writer ran", changed)
	}
	if pol, err := loadAntigravityPolicy(control); err != nil {
		p.ProtocolError = errors.New("antigravity writer: the captured policy vanished before settlement")
	} else if changed := RecheckAntigravitySources(pol.Sources); changed != "" && p.ProtocolError == nil {
		p.ProtocolError = fmt.Errorf("antigravity writer: %s changed while the writer ran", changed)
	}
	if p.ProtocolError != nil || p.ToolDenial != nil {
		p.FinalText = ""
	}
	return p
}

// antigravityGeneratedChanged names the generated agent or hooks file when
// its content is no longer what was written ("" when both are intact).
func antigravityGeneratedChanged(req Request, control string) string {
	want, err := antigravityHooksJSON(filepath.Join(control, antigravityHookProgram))
	agent := filepath.Join(req.Cwd, ".agents", "agents", AntigravityAgentName(req)+".md")
	for path, content := range map[string][]byte{antigravityHooksFile(req): want, agent: antigravityAgent(req)} {
		fi, lerr := os.Lstat(path)
		got, rerr := os.ReadFile(path)
		if err != nil || lerr != nil || !fi.Mode().IsRegular() || rerr != nil || string(got) != string(content) {
			return path
		}
	}
	return ""
}

// antigravityCommandSteps counts the stream's distinct command and task
// tool steps (a step may be updated more than once).
func antigravityCommandSteps(stdout []byte) int {
	steps := map[string]bool{}
	jsonLines(stdout, func(e rawObject) {
		if e.text("event") != "step_update" {
			return
		}
		step, ok := e.obj("step_update")
		if !ok || step.text("step_type") != "tool" || !slices.Contains(antigravityCommandTools, step.text("tool_name")) {
			return
		}
		id := "?" + fmt.Sprint(len(steps))
		if n := step.count("step_index"); n != nil {
			id = fmt.Sprint(*n)
		}
		steps[id] = true
	})
	return len(steps)
}
