package providers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// openCodeAttempt is an OpenCode request whose private directory exists
// on disk, with the selected contract's files written as the runner
// writes them (the configuration checks read them back).
func openCodeAttempt(t *testing.T, contract string, adjust ...func(*Request)) Request {
	t.Helper()
	req := baseRequest(policy.OpenCode)
	dir := t.TempDir()
	req.Receipt = filepath.Join(dir, "receipt.json")
	req.PrivateDir = req.Receipt + ".opencode-config"
	req.Cwd = filepath.Join(dir, "checkout")
	req.Contract = contract
	for _, a := range adjust {
		a(&req)
	}
	require.NoError(t, os.Mkdir(req.PrivateDir, 0o700))
	require.NoError(t, os.Mkdir(req.Cwd, 0o755))
	if contract == "" {
		return req // before the banner: no contract files yet
	}
	files, err := openCodeFiles(req)
	require.NoError(t, err)
	for _, f := range files {
		if f.Dir {
			require.NoError(t, os.Mkdir(f.Path, 0o700))
			continue
		}
		require.NoError(t, os.WriteFile(f.Path, f.Content, 0o600))
	}
	return req
}

// withSRT pins the sandbox runtime for writer requests.
func withSRT(r *Request) { r.ParentEnv = map[string]string{SandboxRuntimeBinEnv: "/opt/bin/srt"} }

func subscribed(r *Request) {
	r.ChatGPTSubscription = true
	r.APISpend = policy.APISpendDeny
}

// TestOpenCodeVersionSelectsTheContractOnce: the banner alone selects the
// contract; its continuation carries that contract's files, environment
// and remaining probes; everything else is unavailable-cli before any
// configuration is inspected.
func TestOpenCodeVersionSelectsTheContractOnce(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := baseRequest(policy.OpenCode)
	req.Contract = ""
	require.Equal(t, [][]string{{"/opt/bin/opencode", "--version"}}, spec.Preflight(req), "only the banner runs before a contract is chosen")
	for _, tc := range []struct {
		banner, contract string
		pointer          string
		probes           [][]string
	}{
		{"1.18.32\n", "v1", "OPENCODE_CONFIG=" + contractPrivate + "/opencode.json", [][]string{{"/opt/bin/opencode", "--pure", "debug", "config"}}},
		{"opencode v1.18.40\n", "v1", "OPENCODE_CONFIG=" + contractPrivate + "/opencode.json", [][]string{{"/opt/bin/opencode", "--pure", "debug", "config"}}},
		{"2.0.0\n", "v2", "OPENCODE_CONFIG_DIR=" + contractPrivate + "/config", [][]string{{"/opt/bin/opencode", "debug", "config"}}},
		{"opencode v2.0.27\n", "v2", "OPENCODE_CONFIG_DIR=" + contractPrivate + "/config", [][]string{{"/opt/bin/opencode", "debug", "config"}}},
		{"opencode v2.9.3\n", "v2", "OPENCODE_CONFIG_DIR=" + contractPrivate + "/config", [][]string{{"/opt/bin/opencode", "debug", "config"}}},
	} {
		v := spec.ReadPreflight(req, 0, exit(0, tc.banner, ""))
		require.Empty(t, v.Status, v.Evidence)
		require.NotNil(t, v.Then, tc.banner)
		require.Equal(t, tc.contract, v.Then.Contract, tc.banner)
		require.Contains(t, v.Then.Overlay, tc.pointer)
		require.Equal(t, tc.probes, v.Then.Probes)
	}
	sub := req
	subscribed(&sub)
	v := spec.ReadPreflight(sub, 0, exit(0, "opencode v2.0.27\n", ""))
	require.Equal(t, [][]string{{"/opt/bin/opencode", "debug", "config"},
		{"/opt/bin/opencode", "auth", "list", "--standalone", "--format", "json"},
		{"/opt/bin/opencode", "debug", "config"}}, v.Then.Probes, "subscription preflight, then the configuration again")
	v = spec.ReadPreflight(sub, 0, exit(0, "1.18.32\n", ""))
	require.Equal(t, []string{"/opt/bin/opencode", "--pure", "auth", "list"}, v.Then.Probes[1], "every V1 call passes --pure")

	for _, bad := range []string{"opencode v2.1.0-beta.3\n", "2.0.0-rc.1\n", "3.0.0\n", "0.9.1\n", "1.18.28\n", "opencode\n",
		"opencode v2.0.27\nupdate available\n", "2.0.27 (dev)\n", "v2.0.27\n", "", "\x1b[32m2.0.27\x1b[0m\n"} {
		v := spec.ReadPreflight(req, 0, exit(0, bad, ""))
		require.Equal(t, policy.StatusUnavailableCLI, v.Status, "%q", bad)
		require.Nil(t, v.Then, "%q selects nothing", bad)
	}
	require.Equal(t, policy.StatusUnavailableCLI, spec.ReadPreflight(req, 0, exit(1, "2.0.27\n", "")).Status)
}

// TestOpenCodeV1DebugConfig: the merged effective configuration must carry
// the pinned model, small model, agent and ordered permission map, no
// provider override and no MCP server; the private file must be intact.
func TestOpenCodeV1DebugConfig(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := openCodeAttempt(t, "v1")
	config, err := openCodeV1Config(req)
	require.NoError(t, err)
	name := OpenCodeAgentName(req)
	for _, tc := range []struct {
		name string
		out  string
		ok   bool
	}{
		{"verbatim", string(config), true},
		{"extra effective keys and agents", withExtras(t, config, name), true},
		{"the empty agent options opencode 1.18.33 adds", agentOptions(t, config, name, `{}`), true},
		{"agent options carrying a setting", agentOptions(t, config, name, `{"baseURL":"https://gw"}`), false},
		{"reordered permission rules", swapPermission(t, config), false},
		{"another model", replaceModel(t, config), false},
		{"a provider override", setKey(t, config, "provider", `{"openai":{"options":{"baseURL":"https://gw"}}}`), false},
		{"an MCP server", setKey(t, config, "mcp", `{"x":{"type":"local","command":["x"]}}`), false},
		{"a missing agent", setKey(t, config, "agent", `{}`), false},
		{"a repeated model member", strings.Replace(string(config), "{", `{"model":"openai/gpt-5",`, 1), false},
		{"two documents", string(config) + string(config), false},
		{"not JSON", "Error: config invalid\n", false},
	} {
		v := spec.ReadPreflight(req, 1, exit(0, tc.out, ""))
		if tc.ok {
			require.Empty(t, v.Status, "%s: %s", tc.name, v.Evidence)
			require.Contains(t, v.Evidence, "no configured endpoint")
		} else {
			require.Equal(t, policy.StatusUnavailableCLI, v.Status, tc.name)
			require.NotContains(t, v.Evidence, "https://gw")
		}
	}
	w := req
	w.Mode = policy.IsolatedWrite
	require.Equal(t, policy.StatusUnavailableCLI, spec.ReadPreflight(w, 1, exit(0, string(config), "")).Status, "writer rules differ")
}

// agentOptions appends an "options" member (raw JSON) to the attempt agent,
// as the real CLI's effective configuration does.
func agentOptions(t *testing.T, config []byte, name, raw string) string {
	return editConfig(t, config, func(doc jsonObject) jsonObject {
		agents := doc.mustGet("agent").(jsonObject)
		ours := agents.mustGet(name).(jsonObject)
		decoded, err := decodeOrdered([]byte(raw))
		require.NoError(t, err)
		return doc.set("agent", agents.set(name, append(ours, jsonMember{"options", decoded})))
	})
}

// TestOpenCodeV2DebugConfig: the sources must be exactly the private
// document (structurally equal, array order significant) and the private
// directory.
func TestOpenCodeV2DebugConfig(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := openCodeAttempt(t, "v2")
	doc, err := openCodeV2Config(req)
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.Unmarshal(doc, &info))
	dir := openCodeV2ConfigDir(req)
	docSrc := map[string]any{"type": "document", "path": filepath.Join(dir, "opencode.json"), "info": info}
	dirSrc := map[string]any{"type": "directory", "path": dir}
	render := func(sources ...any) string {
		b, err := json.MarshalIndent(sources, "", "  ")
		require.NoError(t, err)
		return string(b)
	}
	reversedRules := func() map[string]any {
		var c map[string]any
		require.NoError(t, json.Unmarshal(doc, &c))
		rules := c["permissions"].([]any)
		rules[0], rules[1] = rules[1], rules[0]
		return map[string]any{"type": "document", "path": docSrc["path"], "info": c}
	}
	foreign := map[string]any{"type": "document", "path": "/home/dev/.config/opencode/opencode.json", "info": map[string]any{}}
	for _, tc := range []struct {
		name string
		out  string
		ok   bool
	}{
		{"document and directory", render(docSrc, dirSrc), true},
		{"directory first", render(dirSrc, docSrc), true},
		{"reordered rules", render(reversedRules(), dirSrc), false},
		{"a foreign source", render(docSrc, dirSrc, foreign), false},
		{"a duplicate document", render(docSrc, docSrc, dirSrc), false},
		{"a pathless source", render(docSrc, dirSrc, map[string]any{"type": "document", "info": map[string]any{}}), false},
		{"the directory missing", render(docSrc), false},
		{"the document missing", render(dirSrc), false},
		{"an agents directory", render(docSrc, dirSrc, map[string]any{"type": "agents", "path": dir + "/agents"}), false},
		{"the bare document instead of sources", string(doc), false},
	} {
		v := spec.ReadPreflight(req, 1, exit(0, tc.out, ""))
		if tc.ok {
			require.Empty(t, v.Status, "%s: %s", tc.name, v.Evidence)
		} else {
			require.Equal(t, policy.StatusUnavailableCLI, v.Status, tc.name)
			require.NotContains(t, v.Evidence, "/home/dev")
		}
	}
}

// TestOpenCodeConfigurationMustStayIntact: a modified, replaced or
// re-permissioned private file, or anything extra beside the files
// (a file, a symlink), fails the configuration probe and the check made
// immediately before the invocation.
func TestOpenCodeConfigurationMustStayIntact(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	for _, contract := range []string{"v1", "v2"} {
		for _, tc := range []struct {
			name   string
			tamper func(t *testing.T, req Request, doc string)
			want   string
		}{
			{"modified", func(t *testing.T, _ Request, doc string) {
				require.NoError(t, os.WriteFile(doc, []byte("{}\n"), 0o600))
			}, "was modified"},
			{"replaced by a symlink", func(t *testing.T, req Request, doc string) {
				other := filepath.Join(filepath.Dir(req.Receipt), "elsewhere.json")
				b, _ := os.ReadFile(doc)
				require.NoError(t, os.WriteFile(other, b, 0o600))
				require.NoError(t, os.Remove(doc))
				require.NoError(t, os.Symlink(other, doc))
			}, "replaced"},
			{"mode widened", func(t *testing.T, _ Request, doc string) {
				require.NoError(t, os.Chmod(doc, 0o644))
			}, "mode changed"},
			{"a supplemental file", func(t *testing.T, _ Request, doc string) {
				require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(doc), "extra.json"), []byte("{}"), 0o600))
			}, "unexpected file extra.json"},
			{"a supplemental symlink", func(t *testing.T, _ Request, doc string) {
				require.NoError(t, os.Symlink("/etc", filepath.Join(filepath.Dir(doc), "plugins")))
			}, "unexpected symlink plugins"},
		} {
			t.Run(contract+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				req := openCodeAttempt(t, contract)
				require.NoError(t, spec.Check(req), "intact before tampering")
				doc := openCodeV1ConfigPath(req)
				if contract == "v2" {
					doc = filepath.Join(openCodeV2ConfigDir(req), "opencode.json")
				}
				tc.tamper(t, req, doc)
				err := spec.Check(req)
				require.ErrorContains(t, err, tc.want)
				var pe *PreflightError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, policy.StatusUnavailableCLI, pe.Status)
				require.Equal(t, policy.StatusUnavailableCLI, spec.ReadPreflight(req, 1, exit(0, "{}", "")).Status)
			})
		}
	}
}

// TestOpenCodeGlobalConfigDirectory: what the real CLI writes into the
// private directory on its own (its global configuration directory
// opencode/, empty or holding only its .gitignore, as opencode 1.18.33
// does on every command) leaves the configuration intact; anything in that
// directory that could configure the attempt (a configuration file, an
// agent, a plugin or its package), or the directory replaced by a symlink
// or a file, fails closed on both contracts.
func TestOpenCodeGlobalConfigDirectory(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	gitignore := "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
	for _, contract := range []string{"v1", "v2"} {
		for _, tc := range []struct {
			name  string
			plant func(t *testing.T, global string)
			want  string // "" when intact
		}{
			{"created empty at startup", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
			}, ""},
			{"holding the CLI's .gitignore", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(global, ".gitignore"), []byte(gitignore), 0o644))
			}, ""},
			{"a global opencode.json", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(global, "opencode.json"), []byte(`{"model":"x/y"}`), 0o644))
			}, "unexpected file opencode/opencode.json"},
			{"a global config.json", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(global, "config.json"), []byte(`{}`), 0o644))
			}, "unexpected file opencode/config.json"},
			{"an agent directory", func(t *testing.T, global string) {
				require.NoError(t, os.MkdirAll(filepath.Join(global, "agent"), 0o755))
			}, "unexpected directory opencode/agent"},
			{"a plugin package", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(global, "package.json"), []byte(`{}`), 0o644))
			}, "unexpected file opencode/package.json"},
			{"a symlinked .gitignore", func(t *testing.T, global string) {
				require.NoError(t, os.Mkdir(global, 0o755))
				require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(global, ".gitignore")))
			}, "unexpected symlink opencode/.gitignore"},
			{"the directory a symlink to a user's configuration", func(t *testing.T, global string) {
				user := filepath.Join(t.TempDir(), "opencode")
				require.NoError(t, os.Mkdir(user, 0o755))
				require.NoError(t, os.Symlink(user, global))
			}, "unexpected symlink opencode"},
			{"the directory a file", func(t *testing.T, global string) {
				require.NoError(t, os.WriteFile(global, []byte("{}"), 0o644))
			}, "unexpected file opencode"},
		} {
			t.Run(contract+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				req := openCodeAttempt(t, contract)
				tc.plant(t, filepath.Join(req.PrivateDir, "opencode"))
				err := spec.Check(req)
				if tc.want == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorContains(t, err, tc.want)
				var pe *PreflightError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, policy.StatusUnavailableCLI, pe.Status)
				v := spec.ReadPreflight(req, 1, exit(0, "{}", ""))
				require.Equal(t, policy.StatusUnavailableCLI, v.Status)
				require.Contains(t, v.Evidence, tc.want)
			})
		}
	}
}

// TestOpenCodeWriterNeedsTheWorktreeRoot: the check refuses a writer whose
// cwd has no .git entry or is reached through a symlink; read-only lanes
// may run anywhere.
func TestOpenCodeWriterNeedsTheWorktreeRoot(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := openCodeAttempt(t, "", writer, withSRT)
	err := spec.Check(req)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, policy.StatusUnsupportedCapability, pe.Status)
	require.ErrorContains(t, err, "no .git entry")

	require.NoError(t, os.WriteFile(filepath.Join(req.Cwd, ".git"), []byte("gitdir: /repo/.git/worktrees/x\n"), 0o644))
	require.NoError(t, spec.Check(req), "a linked worktree's .git pointer file marks its root")

	link := req
	link.Cwd = req.Cwd + "-link"
	require.NoError(t, os.Symlink(req.Cwd, link.Cwd))
	require.ErrorContains(t, spec.Check(link), "through a symlink")

	ro := openCodeAttempt(t, "")
	require.NoError(t, spec.Check(ro))

	inside := req
	inside.PrivateDir = filepath.Join(req.Cwd, "receipt.json.opencode-config")
	require.ErrorContains(t, spec.Check(inside), "outside the worktree", "the control directory may not sit inside the worktree")

	noSRT := req
	noSRT.ParentEnv = map[string]string{"PATH": t.TempDir()}
	err = spec.Check(noSRT)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, policy.StatusUnavailableCLI, pe.Status)
	require.ErrorContains(t, err, "npm i -g @anthropic-ai/sandbox-runtime")
}

// TestOpenCodeSandboxWrapper: the writer's wrapper accepts only `-c
// COMMAND` and runs the runtime with the attempt's policy (its own
// sockets in a short fresh directory, the command with the private
// TMPDIR); the policy
// confines writes to the worktree and private tmp/cache, denies the
// control directory and .git, and allows no network.
func TestOpenCodeSandboxWrapper(t *testing.T) {
	t.Parallel()
	req := openCodeAttempt(t, "v2", writer, withSRT)
	files, err := openCodeSandboxFiles(req)
	require.NoError(t, err)
	var script, settings string
	for _, f := range files {
		switch f.Path {
		case openCodeShellPath(req):
			require.EqualValues(t, 0o700, f.Mode)
			script = string(f.Content)
		case openCodeSandboxSettings(req):
			require.EqualValues(t, 0o600, f.Mode)
			settings = string(f.Content)
		}
	}
	require.Contains(t, script, "TMPDIR=$srt_tmp '/opt/bin/srt' --settings '"+openCodeSandboxSettings(req)+"' -c \"TMPDIR='"+openCodeShellTmp(req)+"'; export TMPDIR; $2\"")
	require.Contains(t, script, `if [ -n "${TMPDIR:-}" ] && [ "${#TMPDIR}" -le 60 ]; then`, "the runtime's sockets live in a short directory")
	require.Contains(t, script, "srt_tmp=$(mktemp -d /tmp/switchyard-srt.XXXXXXXX) || exit 1", "or a fresh one under /tmp")
	require.Contains(t, script, `[ "$1" != "-c" ]`)
	var doc struct {
		Network struct {
			AllowedDomains    []string
			AllowUnixSockets  []string
			AllowLocalBinding bool
		}
		Filesystem                struct{ AllowWrite, DenyWrite []string }
		EnableWeakerNestedSandbox bool
	}
	require.NoError(t, json.Unmarshal([]byte(settings), &doc))
	require.Empty(t, doc.Network.AllowedDomains)
	require.Empty(t, doc.Network.AllowUnixSockets)
	require.False(t, doc.Network.AllowLocalBinding)
	require.False(t, doc.EnableWeakerNestedSandbox)
	require.Equal(t, []string{req.Cwd, openCodeShellTmp(req), openCodeShellCache(req)}, doc.Filesystem.AllowWrite)
	require.Equal(t, []string{openCodeControlDir(req), filepath.Join(req.Cwd, ".git")}, doc.Filesystem.DenyWrite)

	quoted := req
	quoted.ParentEnv = map[string]string{SandboxRuntimeBinEnv: "/opt/it's/srt"}
	_, err = openCodeSandboxFiles(quoted)
	require.ErrorContains(t, err, "cannot be used in the sandbox shell wrapper")
	relative := req
	relative.ParentEnv = map[string]string{SandboxRuntimeBinEnv: "bin/srt"}
	_, err = openCodeSandboxFiles(relative)
	require.ErrorContains(t, err, "absolute")
}

// TestOpenCodeV2WriterPolicy: V2 writers get edit and write, with edits and
// writes to .git metadata denied after them (the last match wins); V1 adds
// edit only and no explicit .git rule; both deny every shell.
func TestOpenCodeV2WriterPolicy(t *testing.T) {
	t.Parallel()
	rules := openCodeV2Permissions(policy.IsolatedWrite)
	index := func(action, resource, effect string) int {
		for i, r := range rules {
			if r.mustGet("action") == action && r.mustGet("resource") == resource && r.mustGet("effect") == effect {
				return i
			}
		}
		return -1
	}
	require.Equal(t, 0, index("*", "*", "deny"), "wildcard denial first")
	for _, action := range []string{"edit", "write"} {
		allow := index(action, "*", "allow")
		require.Greater(t, allow, 0)
		require.Greater(t, index(action, ".git/**", "deny"), allow, "%s to .git is denied after the allow", action)
		require.Greater(t, index(action, ".git", "deny"), allow)
	}
	require.Greater(t, index("shell", "*", "allow"), 0, "the writer's shell is the sandbox wrapper")
	require.Equal(t, -1, indexOf(openCodeV2Permissions(policy.ReadOnly), "write"), "read-only registers no write")
	v1 := openCodeV1Permission(policy.IsolatedWrite)
	require.Equal(t, "allow", v1.mustGet("edit"))
	require.Equal(t, "allow", v1.mustGet("bash"))
	require.Equal(t, "deny", openCodeV1Permission(policy.ReadOnly).mustGet("bash"))
	_, hasGit := v1.get(".git")
	require.False(t, hasGit, "the restored V1 policy adds no .git rule")
}

func indexOf(rules []jsonObject, action string) int {
	for i, r := range rules {
		if r.mustGet("action") == action {
			return i
		}
	}
	return -1
}

// TestOpenCodeSubscriptionConfiguration: V2's subscription configuration
// selects the OpenAI provider plugin and the configured-provider plugin and
// configures the ChatGPT endpoint over HTTP; V1's keeps its provider
// section empty; the ordinary route configures no endpoint on either.
func TestOpenCodeSubscriptionConfiguration(t *testing.T) {
	t.Parallel()
	sub := baseRequest(policy.OpenCode)
	subscribed(&sub)
	b, err := openCodeV2Config(sub)
	require.NoError(t, err)
	var doc struct {
		Plugins   []string
		Providers map[string]map[string]map[string]string
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Equal(t, []string{"-*", "opencode.provider.openai", "opencode.config.provider"}, doc.Plugins)
	require.Equal(t, map[string]string{"url": "https://chatgpt.com/backend-api/codex", "transport": "http"}, doc.Providers["openai"]["endpoint"])

	b, err = openCodeV2Config(baseRequest(policy.OpenCode))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Equal(t, []string{"-*", "opencode.provider.openai"}, doc.Plugins)
	require.NotContains(t, string(b), "chatgpt.com")

	b, err = openCodeV1Config(sub)
	require.NoError(t, err)
	require.Contains(t, string(b), `"provider": {}`)
	require.NotContains(t, string(b), "chatgpt.com")
}

// TestOpenCodeGuard: ordinary native authentication needs approved; the
// subscription mode passes only under deny with the seed's model at
// default effort.
func TestOpenCodeGuard(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := baseRequest(policy.OpenCode)
	require.Empty(t, GuardNames(spec, nil, req))
	req.APISpend = policy.APISpendDeny
	require.Equal(t, []string{openCodeNativeAuth}, GuardNames(spec, nil, req))
	subscribed(&req)
	require.Empty(t, GuardNames(spec, nil, req))
	for _, bad := range []func(*Request){
		func(r *Request) { r.APISpend = policy.APISpendApproved },
		func(r *Request) { r.APISpend = policy.APISpendLegacy },
		func(r *Request) { r.CLIModel = "openai/gpt-5.5" },
		func(r *Request) { r.Effort = policy.EffortHigh },
	} {
		r := req
		bad(&r)
		require.Equal(t, []string{openCodeSubscriptionMisuse}, GuardNames(spec, nil, r))
	}
}

// TestOpenCodeV2AuthList: exactly one OpenAI integration with exactly one
// stored OAuth connection carrying its credential method passes; every
// other listing blocks before inference as billing-policy-blocked, and the
// evidence never quotes connection IDs, labels or accounts.
func TestOpenCodeV2AuthList(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := openCodeAttempt(t, "v2", subscribed)
	conn := func(extra string) string {
		return `{"type":"credential","id":"con_1","label":"ChatGPT Pro (dev@example.com)"` + extra + `}`
	}
	openai := func(conns ...string) string {
		return `{"id":"openai","name":"OpenAI","connections":[` + strings.Join(conns, ",") + `]}`
	}
	oauth := conn(`,"method":{"type":"oauth","id":"chatgpt"}`)
	for _, tc := range []struct {
		name, out, want string
	}{
		{"one oauth connection", "[" + openai(oauth) + "]", ""},
		{"no credential method (2.0.0)", "[" + openai(conn("")) + "]", "upgrade OpenCode"},
		{"an API key", "[" + openai(conn(`,"method":{"type":"key"}`)) + "]", "not an OAuth login"},
		{"an environment connection", `[{"id":"openai","name":"OpenAI","connections":[{"type":"env","name":"OPENAI_API_KEY"}]}]`, "not a stored credential"},
		{"two connections", "[" + openai(oauth, oauth) + "]", "exactly one connection"},
		{"console too", "[" + openai(oauth) + `,{"id":"opencode","name":"OpenCode Console","connections":[` + oauth + `]}]`, "2 authenticated integrations"},
		{"another integration only", `[{"id":"anthropic","name":"Anthropic","connections":[` + oauth + `]}]`, "not OpenAI"},
		{"nothing signed in", "[]", "0 authenticated integrations"},
		{"a repeated member", "[" + strings.Replace(openai(oauth), `{"id":"openai"`, `{"id":"openai","id":"openai"`, 1) + "]", "well-formed"},
		{"human output", "OpenAI  ChatGPT Pro  stored\n", "JSON array"},
	} {
		v := spec.ReadPreflight(req, 2, exit(0, tc.out, ""))
		if tc.want == "" {
			require.Empty(t, v.Status, "%s: %s", tc.name, v.Evidence)
			require.Equal(t, openCodeSubscriptionEvidence, v.Evidence)
			continue
		}
		require.Equal(t, policy.StatusBillingPolicyBlocked, v.Status, tc.name)
		require.Contains(t, v.Evidence, tc.want, tc.name)
		for _, hidden := range []string{"con_1", "dev@example.com", "ChatGPT Pro"} {
			require.NotContains(t, v.Evidence, hidden)
		}
	}
	require.Equal(t, policy.StatusBillingPolicyBlocked, spec.ReadPreflight(req, 2, exit(1, "", "Error: not signed in")).Status)
}

// TestOpenCodeV1AuthList: the human listing is read as one whole known
// structure after recognized ANSI sequences and frame glyphs are removed.
func TestOpenCodeV1AuthList(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.OpenCode)
	req := openCodeAttempt(t, "v1", subscribed)
	plain := "┌  Credentials ~/.local/share/opencode/auth.json\n│\n●  OpenAI oauth\n│\n└  1 credentials\n"
	styled := "\x1b[90m┌\x1b[39m  Credentials \x1b[90m~/.local/share/opencode/auth.json\x1b[39m\n\x1b[90m│\x1b[39m\n\x1b[32m●\x1b[39m  OpenAI \x1b[90moauth\x1b[39m\n│\n└  1 credential\n"
	for _, tc := range []struct {
		name, out string
		ok        bool
	}{
		{"framed", plain, true},
		{"styled", styled, true},
		{"bare lines", "Credentials /home/dev/.local/share/opencode/auth.json\nOpenAI oauth\n1 credentials\n", true},
		{"an extra entry", strings.Replace(plain, "│\n└  1", "│\n●  Anthropic api\n│\n└  2", 1), false},
		{"an API entry", strings.Replace(plain, "OpenAI oauth", "OpenAI api", 1), false},
		{"a well-known entry", strings.Replace(plain, "OpenAI oauth", "OpenAI wellknown", 1), false},
		{"an environment section", plain + "\n┌  Environment\n│\n●  OpenAI OPENAI_API_KEY\n│\n└  1 environment variable\n", false},
		{"a duplicate block", plain + plain, false},
		{"a bad count", strings.Replace(plain, "1 credentials", "2 credentials", 1), false},
		{"an unknown line", strings.Replace(plain, "│\n●", "│ hint: run opencode auth login\n●", 1), false},
		{"control noise", strings.Replace(plain, "OpenAI", "Open\x07AI", 1), false},
		{"an unrecognized escape", strings.Replace(plain, "OpenAI", "\x1bXOpenAI", 1), false},
		{"empty", "", false},
	} {
		v := spec.ReadPreflight(req, 2, exit(0, tc.out, ""))
		if tc.ok {
			require.Empty(t, v.Status, "%s: %s", tc.name, v.Evidence)
			continue
		}
		require.Equal(t, policy.StatusBillingPolicyBlocked, v.Status, tc.name)
		require.NotContains(t, v.Evidence, "auth.json", "credential paths are withheld")
	}
}

// FuzzOpenCodeAuthLists: neither auth listing reader panics, and each
// accepts only output with exactly one OpenAI entry.
func FuzzOpenCodeAuthLists(f *testing.F) {
	for _, s := range []string{"┌  Credentials x\n●  OpenAI oauth\n└  1 credentials\n", `[{"id":"openai","connections":[{"type":"credential","method":{"type":"oauth"}}]}]`, "[]", "\x1b[", "\x1b]8;;", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkOpenCodeV1AuthList(b) == nil {
			require.Contains(t, string(b), "OpenAI oauth")
		}
		if checkOpenCodeV2AuthList(b) == nil {
			require.Contains(t, string(b), "openai")
		}
	})
}

// TestOpenCodeChatGPTModelMatchesTheEngine: the engine's job check and the
// runner agree on the subscription model.
func TestOpenCodeChatGPTModelMatchesTheEngine(t *testing.T) {
	t.Parallel()
	require.Equal(t, OpenCodeChatGPTModel, events.OpenCodeChatGPTModel)
}

// TestOpenCodeSandboxProbeNamesMissingDependencies: a failed startup probe
// whose sandbox runtime refused for missing dependencies (the stderr srt
// 0.0.83 printed on a host without bubblewrap, socat and ripgrep) names
// them; an item of another shape is reported without its text (it may
// carry a path); any other failure keeps the plain evidence; a passing
// probe passes.
func TestOpenCodeSandboxProbeNamesMissingDependencies(t *testing.T) {
	t.Parallel()
	real := "Error: Sandbox dependencies not available: ripgrep (rg) not found, bubblewrap (bwrap) not installed, socat not installed\n"
	v := readOpenCodeSandboxProbe(exit(1, "", real))
	require.Equal(t, policy.StatusUnavailableCLI, v.Status)
	require.Contains(t, v.Evidence, "the sandboxed shell startup probe failed (exit 1): the sandbox runtime's dependencies are not available (missing ripgrep (rg), bubblewrap (bwrap), socat)")
	require.NotContains(t, v.Evidence, "another dependency problem")
	require.Contains(t, v.Evidence, "npm i -g @anthropic-ai/sandbox-runtime")

	odd := readOpenCodeSandboxProbe(exit(1, "", "Error: Sandbox dependencies not available: socat not installed, bubblewrap (bwrap) not executable at /home/dev/secret/bwrap\n"))
	require.Contains(t, odd.Evidence, "(missing socat) (and another dependency problem it reports)")
	require.NotContains(t, odd.Evidence, "/home/dev")

	plain := readOpenCodeSandboxProbe(exit(1, "", "bwrap: Creating new namespace failed: Operation not permitted\n"))
	require.Equal(t, policy.StatusUnavailableCLI, plain.Status)
	require.NotContains(t, plain.Evidence, "dependencies are not available")
	require.NotContains(t, plain.Evidence, "namespace")

	require.Empty(t, readOpenCodeSandboxProbe(exit(0, "", "")).Status)
}
