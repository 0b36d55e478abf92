package providers

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// writerFixture is a real home and worktree for one writer attempt.
type writerFixture struct {
	home, worktree string
	req            Request
	spec           *Spec
}

func newWriterFixture(t *testing.T) *writerFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &writerFixture{home: filepath.Join(root, "home"), worktree: filepath.Join(root, "wt")}
	require.NoError(t, os.MkdirAll(f.home, 0o700))
	require.NoError(t, os.MkdirAll(f.worktree, 0o700))
	f.req = Request{Parent: policy.ParentClaude, Provider: policy.Antigravity, Model: "gemini-3.1-pro-high",
		CLIModel: "gemini-3.1-pro-high", Effort: policy.EffortDefault, Mode: policy.IsolatedWrite,
		Cwd: f.worktree, Prompt: []byte("Fix it."), Receipt: filepath.Join(root, "r.json"),
		PrivateDir: filepath.Join(root, "r.json.private"), APISpend: policy.APISpendApproved,
		Home: f.home, Executable: "/opt/bin/agy"}
	f.spec = antigravitySpecOn(os.ReadFile, antigravityHost{inspect: inspectAntigravityWriter,
		self: func() (string, error) { return "/opt/bin/switchyard", nil }})
	return f
}

func (f *writerFixture) write(t *testing.T, rel string, content string) string {
	t.Helper()
	p := filepath.Join(f.home, rel)
	if strings.HasPrefix(rel, "wt:") {
		p = filepath.Join(f.worktree, strings.TrimPrefix(rel, "wt:"))
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// materialize creates the prepared files as the runner does.
func (f *writerFixture) materialize(t *testing.T) []File {
	t.Helper()
	files, _, err := f.spec.Prepare(f.req)
	require.NoError(t, err)
	for _, file := range files {
		if file.Dir {
			if err := os.Mkdir(file.Path, 0o700); err != nil {
				require.ErrorIs(t, err, os.ErrExist)
			}
			continue
		}
		require.NoError(t, os.WriteFile(file.Path, file.Content, os.FileMode(file.Mode)))
	}
	return files
}

func requireRefused(t *testing.T, err error, contains ...string) {
	t.Helper()
	var refused *RefusedError
	require.True(t, errors.As(err, &refused), "want a refusal, got %v", err)
	require.Equal(t, policy.StatusUnsupportedCapability, refused.Status)
	for _, c := range contains {
		require.Contains(t, refused.Reason, c)
	}
}

func TestAntigravityWriterPreflightRequiresAgy1xThenModels(t *testing.T) {
	t.Parallel()
	f := newWriterFixture(t)
	require.Equal(t, [][]string{{"/opt/bin/agy", "--version"}, {"/opt/bin/agy", "models"}}, f.spec.Preflight(f.req))
	ro := f.req
	ro.Mode = policy.ReadOnly
	require.Equal(t, [][]string{{"/opt/bin/agy", "models"}}, f.spec.Preflight(ro), "read-only lanes have no version gate")
	for _, tc := range []struct {
		out  string
		exit int
		pass bool
	}{
		{"1.3.5\n", 0, true}, {"1.0.0", 0, true}, {"1.27.104\n", 0, true},
		{"2.0.0\n", 0, false}, {"0.9.1\n", 0, false}, {"1.3.5-beta.1\n", 0, false}, {"v1.3.5\n", 0, false},
		{"agy 1.3.5\n", 0, false}, {"1.3\n", 0, false}, {"1.3.5 \n", 0, false}, {"1.3.5\nupdate available\n", 0, false},
		{"", 0, false}, {"1.3.5\n", 1, false}, {"01.3.5\n", 0, false},
	} {
		code := tc.exit
		v := f.spec.ReadPreflight(f.req, 0, Capture{Stdout: []byte(tc.out), ExitCode: &code})
		if tc.pass {
			require.Empty(t, v.Status, "%q", tc.out)
			continue
		}
		require.Equal(t, policy.StatusUnavailableCLI, v.Status, "%q exit %d must stop before model invocation", tc.out, tc.exit)
	}
	// Probe 1 of a writer is model discovery.
	zero := 0
	require.Empty(t, f.spec.ReadPreflight(f.req, 1, Capture{Stdout: []byte("gemini-3.1-pro-high  Gemini 3.1 Pro (High)\n"), ExitCode: &zero}).Status)
	require.Equal(t, policy.StatusUnavailableModel, f.spec.ReadPreflight(f.req, 1, Capture{Stdout: []byte("gemini-3-flash  Flash\n"), ExitCode: &zero}).Status)
}

func TestAntigravityWriterPreparation(t *testing.T) {
	t.Parallel()
	f := newWriterFixture(t)
	f.write(t, ".gemini/antigravity-cli/settings.json", `{"colorScheme":"dark","toolPermission":"request-review","enableTerminalSandbox":true,"trustedWorkspaces":["/x"],"useG1Credits":false}`)
	files := f.materialize(t)
	var paths []string
	for _, file := range files {
		paths = append(paths, file.Path)
	}
	control := AntigravityControlDir(f.req)
	require.True(t, strings.HasPrefix(control, f.home+"/"), "the control directory is under the real home")
	require.False(t, strings.HasPrefix(control, f.worktree), "and outside the worktree")
	require.Contains(t, paths, filepath.Join(f.worktree, ".agents", "hooks.json"))
	require.Contains(t, paths, filepath.Join(control, "approve"))
	program, err := os.ReadFile(filepath.Join(control, "approve"))
	require.NoError(t, err)
	require.Equal(t, "#!/bin/sh\n# Switchyard's fixed approval hook for one Antigravity writer attempt.\nexec '/opt/bin/switchyard' antigravity-hook --control '"+control+"'\n", string(program))
	pol, err := loadAntigravityPolicy(control)
	require.NoError(t, err)
	require.Equal(t, f.worktree, pol.Worktree)
	require.Len(t, pol.Sources, 6, "settings, shared and default-project configuration, global hooks, both plugin roots")
	require.True(t, strings.HasPrefix(pol.Sources[0].Fingerprint, "file:"), "the settings file is fingerprinted by content")

	cmd, err := f.spec.Invocation(f.req)
	require.NoError(t, err)
	require.Equal(t, f.worktree, cmd.Dir, "writers launch in their worktree")
	argv := strings.Join(cmd.Argv, " ")
	require.Contains(t, argv, "--project default-cli-project --mode accept-edits")
	require.NotContains(t, argv, "--disable-slash-commands", "it would switch off --mode")
	require.NotNil(t, cmd.Check)
	require.NoError(t, cmd.Check(), "nothing changed since inspection")

	// A change between inspection and launch refuses the launch.
	f.write(t, ".gemini/antigravity-cli/settings.json", `{"colorScheme":"light"}`)
	requireRefused(t, cmd.Check(), "settings", "changed between inspection and launch")
	f.write(t, ".gemini/antigravity-cli/settings.json", `{"colorScheme":"dark","toolPermission":"request-review","enableTerminalSandbox":true,"trustedWorkspaces":["/x"],"useG1Credits":false}`)
	require.NoError(t, cmd.Check())
	require.NoError(t, os.WriteFile(filepath.Join(f.worktree, ".agents", "hooks.json"), []byte(`{"hooks":{}}`), 0o600))
	requireRefused(t, cmd.Check(), ".agents/hooks.json was replaced")
}

func TestAntigravityWriterRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, f *writerFixture)
		want  []string
		value string // a configured value that must never appear
	}{
		{"existing workspace hooks", func(t *testing.T, f *writerFixture) { f.write(t, "wt:.agents/hooks.json", `{}`) },
			[]string{".agents/hooks.json already exists", "never merged"}, ""},
		{"symlinked .agents", func(t *testing.T, f *writerFixture) {
			require.NoError(t, os.Symlink(f.home, filepath.Join(f.worktree, ".agents")))
		}, []string{".agents is a symlink"}, ""},
		{"symlinked .agents/agents", func(t *testing.T, f *writerFixture) {
			require.NoError(t, os.MkdirAll(filepath.Join(f.worktree, ".agents"), 0o700))
			require.NoError(t, os.Symlink(f.home, filepath.Join(f.worktree, ".agents", "agents")))
		}, []string{"agents is a symlink"}, ""},
		{"symlinked worktree", func(t *testing.T, f *writerFixture) {
			link := f.worktree + "-link"
			require.NoError(t, os.Symlink(f.worktree, link))
			f.req.Cwd = link
		}, []string{"through a symlink", "canonical worktree"}, ""},
		{"workspace skills", func(t *testing.T, f *writerFixture) { f.write(t, "wt:.agents/skills/x.md", "x") },
			[]string{"extra project resource", ".agents/skills"}, ""},
		{"other agent definitions", func(t *testing.T, f *writerFixture) { f.write(t, "wt:.agents/agents/other.md", "x") },
			[]string{"other agent definitions"}, ""},
		{"execution policy customized", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/settings.json", `{"toolPermission":"always-proceed"}`)
		}, []string{"key toolPermission customizes execution policy"}, "always-proceed"},
		{"non-workspace access", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/settings.json", `{"allowNonWorkspaceAccess":true}`)
		}, []string{"key allowNonWorkspaceAccess"}, ""},
		{"hooks in settings", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/settings.json", `{"hooks":{"PreToolUse":[]}}`)
		}, []string{"key hooks declares competing hooks"}, ""},
		{"unknown settings key", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/settings.json", `{"mcpServers":{"x":{"command":"secret-tool"}}}`)
		}, []string{"key mcpServers is unknown policy"}, "secret-tool"},
		{"malformed settings", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/settings.json", `{"colorScheme":`)
		}, []string{"not a JSON object"}, ""},
		{"global hooks", func(t *testing.T, f *writerFixture) { f.write(t, ".gemini/config/hooks.json", `{}`) },
			[]string{"competing hooks", ".gemini/config/hooks.json"}, ""},
		{"user plugin", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/plugins/p/plugin.json", `{"name":"p"}`)
		}, []string{"active plugins", ".gemini/antigravity-cli/plugins"}, ""},
		{"customization plugin", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/plugins/p/plugin.json", `{"name":"p"}`)
		}, []string{"active plugins", ".gemini/config/plugins"}, ""},
		{"shared configuration enables a plugin", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/config.json", `{"plugins":{"secret-plugin":{"enabled":true}}}`)
		}, []string{"shared configuration", ".gemini/config/config.json", "key plugins enables plugins"}, "secret-plugin"},
		{"shared configuration customizes execution policy", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/config.json", `{"userSettings":{"toolPermission":"always-proceed"}}`)
		}, []string{"shared configuration", "userSettings key toolPermission customizes execution policy"}, "always-proceed"},
		{"shared configuration unknown key", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/config.json", `{"mcp":{"x":"secret-tool"}}`)
		}, []string{"shared configuration", "key mcp is unknown policy"}, "secret-tool"},
		{"shared configuration malformed", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/config.json", `[`)
		}, []string{"shared configuration", "not a JSON object"}, ""},
		{"default project resources", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/projects/default-cli-project.json",
				`{"id":"default-cli-project","projectResources":{"resources":[{"gitFolder":{"folderUri":"file:///secret-repo"}}]}}`)
		}, []string{"default-project configuration", "projectResources adds extra project resources"}, "secret-repo"},
		{"default project settings", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/projects/default-cli-project.json", `{"id":"default-cli-project","settings":{"autoExecutionPolicy":"always"}}`)
		}, []string{"default-project configuration", "settings.autoExecutionPolicy customizes execution policy"}, "always"},
		{"default project unknown key", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/projects/default-cli-project.json", `{"hooks":{}}`)
		}, []string{"default-project configuration", "key hooks is unknown policy"}, ""},
		{"a catalog beside a plugin", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/plugins/open-pstack/marketplace.json", `{"name":"open-pstack"}`)
			f.write(t, ".gemini/config/plugins/p/plugin.json", `{"name":"p"}`)
		}, []string{"active plugins", ".gemini/config/plugins"}, ""},
		{"another catalog", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/config/plugins/other-market/marketplace.json", `{"name":"other-market"}`)
		}, []string{"active plugins"}, ""},
		{"a plugin named open-pstack", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/plugins/open-pstack/marketplace.json", `{"name":"open-pstack"}`)
			f.write(t, ".gemini/antigravity-cli/plugins/open-pstack/plugin.json", `{"name":"open-pstack"}`)
		}, []string{"a plugin or unknown catalog named open-pstack"}, ""},
		{"a catalog file naming another catalog", func(t *testing.T, f *writerFixture) {
			f.write(t, ".gemini/antigravity-cli/plugins/open-pstack/marketplace.json", `{"name":"evil"}`)
		}, []string{"an unknown catalog"}, ""},
		{"control directory exists", func(t *testing.T, f *writerFixture) {
			require.NoError(t, os.Mkdir(AntigravityControlDir(f.req), 0o700))
		}, []string{"control directory", "already exists"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWriterFixture(t)
			tc.setup(t, f)
			files, _, err := f.spec.Prepare(f.req)
			require.Nil(t, files)
			requireRefused(t, err, tc.want...)
			if tc.value != "" {
				require.NotContains(t, err.Error(), tc.value, "refusals name keys, never values")
			}
		})
	}
	t.Run("harmless shared and project configuration and the open-pstack catalog are accepted", func(t *testing.T) {
		t.Parallel()
		f := newWriterFixture(t)
		f.write(t, ".gemini/config/config.json", `{"plugins":{},"userSettings":{"colorScheme":"dark","trustedWorkspaces":["/x"]}}`)
		f.write(t, ".gemini/config/projects/default-cli-project.json",
			`{"id":"default-cli-project","name":"Default","projectResources":{"resources":[]},"settings":{}}`)
		catalog := f.write(t, ".gemini/config/plugins/open-pstack/marketplace.json", `{"name":"open-pstack","plugins":[{"name":"pstack"}]}`)
		files := f.materialize(t)
		var control string
		for _, file := range files {
			if filepath.Base(file.Path) == "approve" {
				control = filepath.Dir(file.Path)
			}
		}
		pol, err := loadAntigravityPolicy(control)
		require.NoError(t, err)
		var names []string
		for _, src := range pol.Sources {
			names = append(names, src.Name)
		}
		require.Contains(t, names, "plugin catalog open-pstack", "the accepted catalog is fingerprinted as a source")
		require.Empty(t, RecheckAntigravitySources(pol.Sources))
		require.NoError(t, os.WriteFile(catalog, []byte(`{"name":"open-pstack","plugins":[]}`), 0o600))
		require.Contains(t, RecheckAntigravitySources(pol.Sources), "plugin catalog open-pstack", "a changed catalog is seen")
	})
	t.Run("an empty plugin root is no plugin", func(t *testing.T) {
		t.Parallel()
		f := newWriterFixture(t)
		require.NoError(t, os.MkdirAll(filepath.Join(f.home, ".gemini", "antigravity-cli", "plugins"), 0o700))
		_, _, err := f.spec.Prepare(f.req)
		require.NoError(t, err)
	})
}

// hookCallJSON is one PreToolUse call as the hook reads it.
func hookCallJSON(t *testing.T, conversation, cwd, tool string, input map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "conversation_id": conversation,
		"cwd": cwd, "tool_name": tool, "tool_input": input})
	require.NoError(t, err)
	return string(b)
}

func TestAntigravityApprovalHook(t *testing.T) {
	t.Parallel()
	f := newWriterFixture(t)
	f.materialize(t)
	control := AntigravityControlDir(f.req)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(f.worktree, "escape")))
	require.NoError(t, os.Mkdir(filepath.Join(f.worktree, "sub"), 0o700))
	run := func(in string) (string, int) {
		out, code := RunAntigravityHook(control, strings.NewReader(in))
		return string(out), code
	}
	allow := `{"decision":"allow"}` + "\n"
	steps := []struct {
		name, in, want string
	}{
		{"arbitrary nonempty command text", hookCallJSON(t, "c1", f.worktree, "run_command",
			map[string]any{"CommandLine": "go test ./... && rm -rf build; echo $(date)", "Cwd": f.worktree, "Blocking": true}), ""},
		{"a subdirectory cwd", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": filepath.Join(f.worktree, "sub")}), ""},
		{"cwd from the call when the tool gives none", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "make"}), ""},
		{"empty command", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "  ", "Cwd": f.worktree}), hookDeniedEmpty},
		{"unknown command option", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": f.worktree, "Sandbox": false}), hookDeniedOption},
		{"cwd outside the worktree", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": outside}), hookDeniedCwd},
		{"cwd escaping through a symlink", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": filepath.Join(f.worktree, "escape")}), hookDeniedCwd},
		{"cwd inside the generated .agents", hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": filepath.Join(f.worktree, ".agents")}), hookDeniedCwd},
		{"relative cwd", hookCallJSON(t, "c1", "wt", "run_command", map[string]any{"CommandLine": "ls"}), hookDeniedCwd},
		{"another conversation", hookCallJSON(t, "c2", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": f.worktree}), hookDeniedConversation},
		{"task of this conversation", hookCallJSON(t, "c1", f.worktree, "manage_task", map[string]any{"TaskId": "task-7", "Action": "status"}), ""},
		{"task selector that is a path", hookCallJSON(t, "c1", f.worktree, "manage_task", map[string]any{"TaskId": "../x", "Action": "kill"}), hookDeniedTask},
		{"file edit in the worktree", hookCallJSON(t, "c1", f.worktree, "write_to_file", map[string]any{"TargetFile": filepath.Join(f.worktree, "main.go"), "CodeContent": "x"}), ""},
		{"file edit of the generated hooks", hookCallJSON(t, "c1", f.worktree, "replace_file_content", map[string]any{"TargetFile": filepath.Join(f.worktree, ".agents", "hooks.json")}), hookDeniedProtected},
		{"file edit of the control directory", hookCallJSON(t, "c1", f.worktree, "write_to_file", map[string]any{"TargetFile": filepath.Join(control, "policy.json")}), hookDeniedProtected},
		{"file edit through a symlink to .agents", hookCallJSON(t, "c1", f.worktree, "write_to_file", map[string]any{"TargetFile": filepath.Join(f.worktree, "esc2", "hooks.json")}), hookDeniedProtected},
		{"unexpected tool", hookCallJSON(t, "c1", f.worktree, "browser_navigate", map[string]any{"Url": "https://x"}), hookDeniedTool},
		{"unexpected event", `{"hook_event_name":"PostToolUse","conversation_id":"c1","tool_name":"run_command","tool_input":{"CommandLine":"ls"}}`, hookDeniedEvent},
		{"malformed input", `{"tool_name":`, hookDeniedMalformed},
		{"oversized input", `{"tool_name":"run_command","tool_input":{"CommandLine":"` + strings.Repeat("x", antigravityHookInputCap) + `"}}`, hookDeniedMalformed},
	}
	require.NoError(t, os.Symlink(filepath.Join(f.worktree, ".agents"), filepath.Join(f.worktree, "esc2")))
	approved, denied := 0, 0
	for _, s := range steps {
		out, code := run(s.in)
		require.Equal(t, 0, code, s.name)
		if s.want == "" {
			require.Equal(t, allow, out, s.name)
			approved++
			continue
		}
		require.Contains(t, out, `"decision":"deny"`, s.name)
		require.Contains(t, out, s.want, s.name)
		denied++
	}
	raw, err := os.ReadFile(filepath.Join(control, antigravityHookState))
	require.NoError(t, err)
	state, err := ReadAntigravityHookState(raw)
	require.NoError(t, err)
	require.Equal(t, AntigravityHookState{Conversation: "c1", Calls: approved + denied, Approved: approved, Commands: 4,
		Denied: denied, LastCode: hookDeniedMalformed}, state)
	require.NotContains(t, string(raw), "go test", "session state never keeps call arguments")

	// A captured source that changes is denied by the hook itself.
	f.write(t, ".gemini/config/hooks.json", `{}`)
	out, _ := run(hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": f.worktree}))
	require.Contains(t, out, hookDeniedChanged)
	require.NoError(t, os.Remove(filepath.Join(f.home, ".gemini", "config", "hooks.json")))

	// The session is bounded.
	pol, err := loadAntigravityPolicy(control)
	require.NoError(t, err)
	pol.MaxCalls = state.Calls + 2
	b, err := json.Marshal(pol)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(control, antigravityHookPolicy), b, 0o600))
	out, _ = run(hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": f.worktree}))
	require.Equal(t, allow, out)
	out, _ = run(hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls", "Cwd": f.worktree}))
	require.Contains(t, out, hookDeniedBound)

	// No captured policy: the hook fails closed.
	raw, code := RunAntigravityHook(filepath.Join(f.home, "nowhere"), strings.NewReader(hookCallJSON(t, "c1", f.worktree, "run_command", map[string]any{"CommandLine": "ls"})))
	require.Equal(t, 2, code)
	require.Contains(t, string(raw), hookFailed)
}

func TestParseAntigravityWriterUsesHookStateAndRechecks(t *testing.T) {
	t.Parallel()
	f := newWriterFixture(t)
	f.materialize(t)
	control := AntigravityControlDir(f.req)
	agent := AntigravityAgentName(f.req)
	stream := func(tools ...string) string {
		lines := []string{`{"event":"init","conversation_id":"c1","init":{"model":"gemini-3.1-pro-high","agent":"` + agent + `"}}`}
		for i, tool := range tools {
			lines = append(lines, `{"event":"step_update","conversation_id":"c1","step_update":{"step_index":`+
				string(rune('1'+i))+`,"status":"DONE","step_type":"tool","tool_name":"`+tool+`"}}`)
		}
		lines = append(lines, `{"event":"result","conversation_id":"c1","result":{"conversation_id":"c1","status":"SUCCESS","response":"Ran go test: ok.","num_turns":1}}`)
		return strings.Join(lines, "\n") + "\n"
	}
	statePath := filepath.Join(control, antigravityHookState)
	capture := func(out, state string) Capture {
		zero := 0
		c := Capture{Stdout: []byte(out), ExitCode: &zero, Files: map[string][]byte{}}
		if state != "" {
			c.Files[statePath] = []byte(state)
		}
		return c
	}
	p := f.spec.Parse(f.req, capture(stream("view_file", "run_command", "manage_task"), `{"conversation":"c1","calls":3,"approved":3,"commands":2,"denied":0,"failed":0}`))
	require.NoError(t, p.ProtocolError)
	require.Nil(t, p.ToolDenial)
	require.Equal(t, "Ran go test: ok.", p.FinalText)

	p = f.spec.Parse(f.req, capture(stream("run_command"), `{"conversation":"c1","calls":2,"approved":1,"commands":1,"denied":1,"failed":0,"lastCode":"cwd_outside_worktree"}`))
	require.NotNil(t, p.ToolDenial, "a hook denial ends the lane even when the result says SUCCESS")
	require.Empty(t, p.FinalText)
	require.True(t, p.TerminalSuccess, "the completed conversation still vetoes replay")
	require.Contains(t, p.ToolDenial.Evidence, "cwd_outside_worktree")
	denied := capture(stream("run_command"), `{"conversation":"c1","calls":2,"approved":1,"commands":1,"denied":1,"failed":0,"lastCode":"cwd_outside_worktree"}`)
	cl := Classify(f.spec, f.req, denied, f.spec.Parse(f.req, denied))
	require.Equal(t, policy.StatusChildFailed, cl.Status)
	require.True(t, *cl.TerminalSuccess, "a denied writer that completed its conversation is never replayed")

	p = f.spec.Parse(f.req, capture(stream("write_to_file", "run_command"), `{"conversation":"c1","calls":1,"approved":1,"commands":0}`))
	require.ErrorContains(t, p.ProtocolError, "approval hook approved 0", "an approved file edit does not cover a command")

	p = f.spec.Parse(f.req, capture(stream("run_command"), ""))
	require.ErrorContains(t, p.ProtocolError, "approval hook approved 0")

	p = f.spec.Parse(f.req, capture(stream(), `{"conversation":"c1","calls":1,"approved":5}`))
	require.ErrorContains(t, p.ProtocolError, "hook state")

	hooksPath := filepath.Join(f.worktree, ".agents", "hooks.json")
	original, err := os.ReadFile(hooksPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hooksPath, []byte(`{"hooks":{}}`), 0o600))
	p = f.spec.Parse(f.req, capture(stream(), ""))
	require.ErrorContains(t, p.ProtocolError, ".agents/hooks.json was replaced while the writer ran")
	require.NoError(t, os.WriteFile(hooksPath, original, 0o600))
	p = f.spec.Parse(f.req, capture(stream(), ""))
	require.NoError(t, p.ProtocolError)

	f.write(t, ".gemini/antigravity-cli/plugins/p/plugin.json", `{"name":"p"}`)
	p = f.spec.Parse(f.req, capture(stream(), ""))
	require.ErrorContains(t, p.ProtocolError, "changed while the writer ran")
	require.Empty(t, p.FinalText)
}

// FuzzAntigravityHookJudge: any call input is judged without panicking,
// and only a well-formed call of a hooked tool is ever approved.
func FuzzAntigravityHookJudge(f *testing.F) {
	wt := f.TempDir()
	pol := AntigravityHookPolicy{Schema: 1, Worktree: wt, Control: filepath.Join(f.TempDir(), "c"), MaxCalls: 10,
		Protected: []string{filepath.Join(wt, ".agents")}}
	f.Add(`{"hook_event_name":"PreToolUse","conversation_id":"c1","cwd":"` + wt + `","tool_name":"run_command","tool_input":{"CommandLine":"ls"}}`)
	f.Add(`{"conversation_id":"c1","tool_name":"manage_task","tool_input":{"TaskId":"t1"}}`)
	f.Add(`{"conversation_id":"c1","tool_name":"write_to_file","tool_input":{"TargetFile":"` + wt + `/.agents/x"}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		state := AntigravityHookState{}
		code, tool := judgeAntigravityCall(pol, &state, strings.NewReader(in))
		if code == "" {
			require.Contains(t, antigravityHookedTools(), tool, "only a hooked tool is approved")
			require.NotEmpty(t, state.Conversation)
		}
	})
}
