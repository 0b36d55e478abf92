package providers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// Fixed paths of the contract request; goldens show them as placeholders.
const (
	contractCwd     = "/work/checkout"
	contractRun     = "/runs/a1"
	contractReceipt = contractRun + "/receipt.json"
	contractPrivate = contractRun + "/private"
	contractHome    = "/home/worker"
	contractPrompt  = "## Worker contract\nYou own only your output.\n\nAssigned task:\nFix the parser.\n"
)

// contractModels is each provider's model, CLI model and effort in the
// contract request.
var contractModels = map[policy.Provider][3]string{
	policy.Claude:      {"opus", "opus", "high"},
	policy.Codex:       {"gpt-5.6-sol", "gpt-5.6-sol", "high"},
	policy.Grok:        {"grok-4.7", "grok-4.7", "xhigh"},
	policy.Devin:       {"swe-2", "swe-2-high", "high"},
	policy.Cursor:      {"composer-2.5", "composer-2.5", "default"},
	policy.Antigravity: {"gemini-3.1-pro-high", "gemini-3.1-pro-high", "default"},
	policy.OpenCode:    {"openai/gpt-6.1-sol", "openai/gpt-6.1-sol", "default"},
	policy.Gemini:      {"gemini-2.5-pro", "gemini-2.5-pro", "high"},
}

// contractRequest is the fixed request the goldens render.
func contractRequest(p policy.Provider, mode policy.Access, spend policy.APISpend) Request {
	m := contractModels[p]
	spec, _ := Lookup(p)
	exe := "/opt/bin/" + string(p)
	if spec != nil {
		exe = "/opt/bin/" + spec.Binaries[0]
	}
	req := Request{
		Parent: policy.ParentClaude, Provider: p, Model: m[0], CLIModel: m[1], Effort: policy.Effort(m[2]),
		Mode: mode, Cwd: contractCwd, Prompt: []byte(contractPrompt),
		Output: contractRun + "/output.md", Receipt: contractReceipt, PrivateDir: contractPrivate,
		APISpend: spend, Home: contractHome, Executable: exe,
	}
	if p == policy.OpenCode {
		req.Contract = openCodeContractV1 // until a banner selects another (contractBanners)
		req.ParentEnv = map[string]string{SandboxRuntimeBinEnv: "/opt/bin/srt"}
	}
	return req
}

// contractAntigravityHost answers a writer's inspection for the goldens:
// every user source absent, the hook run by /opt/bin/switchyard.
var contractAntigravityHost = antigravityHost{
	inspect: func(req Request) ([]antigravitySource, error) {
		sources := antigravityUserSources(req.Home)
		for i := range sources {
			sources[i].Fingerprint = fingerprintAbsent
		}
		return sources, nil
	},
	self: func() (string, error) { return "/opt/bin/switchyard", nil },
}

// contractBanners are version banners whose preflight continuation the
// goldens render per contract (OpenCode selects V1 or V2 from its banner).
var contractBanners = map[policy.Provider][]string{
	policy.OpenCode: {"1.18.32\n", "opencode v2.0.27\n"},
}

// optionalSpecFields are Spec fields only some providers need; every
// other field is set by every spec.
var optionalSpecFields = []string{"Export", "Check", "PrivateSuffix",
	"SignInProbe", "SilentUntilDone", "Login", "QuotaCredentialFile", // booleans: false is an answer, and the goldens show it
	"QuotaReader", "ModelEcho", "Models", "StopAdapter", "AuthAdapter", "TerminalFields",
	"ListedEfforts", "ListedAuto", "SubscriptionModel", "ExplicitAPISpend", "HostMarkers", "SignInDeferred"}

// contractUserCursorConfig is the user's global Cursor configuration in
// the goldens: only the HTTP/1 switch may reach the private copy.
const contractUserCursorConfig = `{"version":1,"permissions":{"allow":["Shell(*)"],"deny":[]},` +
	`"hooks":{"stop":"x"},"authInfo":{"email":"dev@example.com"},"network":{"useHttp1ForAgent":true}}`

// contractSpec is the spec the goldens render: the registered one, with
// user files supplied in memory for the specs that read them.
func contractSpec(t *testing.T, p policy.Provider) *Spec {
	t.Helper()
	switch p {
	case policy.Cursor:
		return cursorSpec(func(path string) ([]byte, error) {
			if path == contractHome+"/.cursor/cli-config.json" {
				return []byte(contractUserCursorConfig), nil
			}
			return nil, fs.ErrNotExist
		})
	case policy.Antigravity:
		return antigravitySpecOn(func(string) ([]byte, error) { return nil, fs.ErrNotExist }, contractAntigravityHost)
	}
	return mustLookup(t, p)
}

func TestContractGoldens(t *testing.T) {
	t.Parallel()
	require.Equal(t, []policy.Provider{policy.Claude, policy.Codex, policy.Grok, policy.Devin, policy.Cursor,
		policy.Antigravity, policy.OpenCode, policy.Gemini}, Names())
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			got := renderContract(t, contractSpec(t, p))
			require.NotContains(t, got, secretPrefix, "no planted value reaches a golden")
			require.NotContains(t, got, "dev@example.com", "no user configuration beyond the HTTP/1 switch")
			golden.Check(t, "testdata/"+string(p)+"/contract.golden", got)
		})
	}
}

// renderContract renders everything a spec decides for the contract
// request: identity, argv and private files per mode and spending policy,
// preflight probes, and the environment built from the planted parent.
func renderContract(t *testing.T, spec *Spec) string {
	t.Helper()
	var b strings.Builder
	p := spec.Provider
	m := contractModels[p]
	fmt.Fprintf(&b, "# %s provider contract; refresh with go test ./providers -update\n", p)
	fmt.Fprintf(&b, "binaries: %s\n", strings.Join(spec.Binaries, ", "))
	fmt.Fprintf(&b, "known versions: %s\n", strings.Join(spec.KnownVersions, ", "))
	fmt.Fprintf(&b, "quota source: %s\n", spec.QuotaSource)
	fmt.Fprintf(&b, "quota reader: %s\n", cmp.Or(spec.QuotaReader, "(none)"))
	fmt.Fprintf(&b, "model evidence: %s\n", spec.ModelEvidence)
	fmt.Fprintf(&b, "model report: match %s, echo only %t\n", spec.ModelMatch, spec.ModelEcho)
	if spec.Models.Argv == nil {
		fmt.Fprintf(&b, "models listing: (none)\n")
	} else {
		fmt.Fprintf(&b, "models listing: %s %s, read by %s\n", spec.Binaries[0], strings.Join(spec.Models.Argv, " "), funcName(spec.Models.Read))
	}
	fmt.Fprintf(&b, "listed model efforts: %s; listed auto kept: %t\n", list(effortStrings(spec.ListedEfforts)), spec.ListedAuto)
	fmt.Fprintf(&b, "stop adapter: %s\n", funcName(spec.StopAdapter))
	fmt.Fprintf(&b, "quota adapter: %s\n", funcName(spec.QuotaAdapter))
	fmt.Fprintf(&b, "auth adapter: %s\n", funcName(spec.AuthAdapter))
	fmt.Fprintf(&b, "terminal fields: %s\n", funcName(spec.TerminalFields))
	fmt.Fprintf(&b, "state dirs: %s\n", list(mapStrings(spec.StateDirs(contractHome, nil), normalize)))
	fmt.Fprintf(&b, "api hosts: %s\n", list(spec.APIHosts))
	fmt.Fprintf(&b, "preflight proves sign-in: %t; deferred by %s\n", spec.SignInProbe, funcName(spec.SignInDeferred))
	fmt.Fprintf(&b, "login: %q\n", spec.Login)
	fmt.Fprintf(&b, "silent until done: %t (default stall timeout %d ms)\n", spec.SilentUntilDone, UnsetStallTimeoutMs(spec.Provider))
	fmt.Fprintf(&b, "install: %s (override %s)\n", spec.Install, BinEnvVar(p))
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		c := ContainmentFor(spec, mode)
		fmt.Fprintf(&b, "containment %s: %s (%s)\n", mode, c.Class, c.Reason)
	}
	fmt.Fprintf(&b, "writer tools: shell %t; guidance: %s\n", spec.Writer.Shell, cmp.Or(spec.Writer.Guidance, "(none)"))
	fmt.Fprintf(&b, "own env (kept when approved or legacy; blocks under deny): %s\n", list(spec.OwnEnv))
	fmt.Fprintf(&b, "keep env (always kept): %s\n", list(spec.KeepEnv))
	fmt.Fprintf(&b, "remove env: %s\n", list(spec.RemoveEnv))
	fmt.Fprintf(&b, "host markers (removed from every other provider's child): %s\n", list(spec.HostMarkers))
	fmt.Fprintf(&b, "explicit api-spend (legacy refused): %t\n", spec.ExplicitAPISpend)
	fmt.Fprintf(&b, "subscription-mode model: %s\n", cmp.Or(spec.SubscriptionModel, "(none)"))
	fmt.Fprintf(&b, "request: model %s, cli model %s, effort %s, prompt %d bytes\n", m[0], m[1], m[2], len(contractPrompt))

	spends := []policy.APISpend{policy.APISpendDeny, policy.APISpendApproved, policy.APISpendLegacy}
	banners := contractBanners[p]
	if banners == nil {
		banners = []string{""}
	}
	for _, banner := range banners {
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			var blocks []string
			for _, spend := range spends {
				blocks = append(blocks, renderMode(t, spec, contractRequest(p, mode, spend), banner))
			}
			for i, spend := range spends {
				if i > 0 && blocks[i] == blocks[i-1] {
					continue
				}
				same := []string{string(spend)}
				for j := i + 1; j < len(spends) && blocks[j] == blocks[i]; j++ {
					same = append(same, string(spends[j]))
				}
				on := ""
				if banner != "" {
					on = fmt.Sprintf(", banner %q", strings.TrimSpace(banner))
				}
				fmt.Fprintf(&b, "\n== %s, api-spend %s%s\n%s", mode, strings.Join(same, ", "), on, blocks[i])
			}
		}
	}

	fmt.Fprintf(&b, "\n== environment from the planted parent (names only; overlay values shown)\n")
	parent := plantedEnv()
	fmt.Fprintf(&b, "planted: %s\n", list(sortedKeys(parent)))
	for _, spend := range spends {
		req := contractRequest(p, policy.ReadOnly, spend)
		req.ParentEnv = parent
		fmt.Fprintf(&b, "%s:\n", spend)
		fmt.Fprintf(&b, "  guard blocks: %s\n", list(GuardNames(spec, parent, req)))
		_, overlay, err := spec.Prepare(req)
		require.NoError(t, err)
		child := ChildEnv(spec, parent, req, overlay)
		var kept []string
		for _, kv := range child {
			name, value, _ := strings.Cut(kv, "=")
			if slices.ContainsFunc(overlay, func(o string) bool { return strings.HasPrefix(o, name+"=") }) {
				kept = append(kept, name+"="+normalize(value))
			} else {
				kept = append(kept, name)
			}
		}
		fmt.Fprintf(&b, "  child: %s\n", list(kept))
		var dropped []string
		for _, name := range sortedKeys(parent) {
			if !slices.Contains(envNames(child), name) {
				dropped = append(dropped, name)
			}
		}
		fmt.Fprintf(&b, "  dropped: %s\n", list(dropped))
		if probes := spec.Preflight(req); !reflect.DeepEqual(probes, spec.Preflight(contractRequest(p, policy.ReadOnly, spend))) {
			fmt.Fprintf(&b, "  read-only preflight with this parent:\n%s", renderProbes(probes, "    "))
		}
	}
	return b.String()
}

// funcName names a spec's function field as its declaration does
// ("claudeQuota"), "(none)" when nil.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.IsNil() {
		return "(none)"
	}
	name := runtime.FuncForPC(v.Pointer()).Name()
	return name[strings.LastIndex(name, ".")+1:]
}

// renderMode renders one mode and spending policy: probes, private files,
// overlay and the invocation.
func renderMode(t *testing.T, spec *Spec, req Request, banner string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("preflight:\n")
	probes := spec.Preflight(req)
	files, overlay, err := spec.Prepare(req)
	require.NoError(t, err)
	if banner != "" {
		zero := 0
		v := spec.ReadPreflight(req, 0, Capture{Stdout: []byte(banner), ExitCode: &zero})
		require.Empty(t, v.Status, v.Evidence)
		require.NotNil(t, v.Then, "the banner continues the attempt")
		req.Contract = v.Then.Contract
		probes = append(probes[:1:1], v.Then.Probes...)
		files = append(files, v.Then.Files...)
		overlay = v.Then.Overlay
		fmt.Fprintf(&b, "  (the banner selects contract %s: %s)\n", v.Then.Contract, v.Evidence)
	}
	if len(probes) == 0 {
		fmt.Fprintf(&b, "  (none: %s)\n", PreflightDeferredEvidence)
	} else {
		b.WriteString(renderProbes(probes, "  "))
	}
	b.WriteString("private files:\n")
	if len(files) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, f := range files {
		kind := "file"
		if f.Dir {
			kind = "dir"
		}
		fmt.Fprintf(&b, "  %s (%s %04o)\n", normalize(f.Path), kind, f.Mode)
		switch {
		case f.Dir:
		case bytes.Contains(f.Content, req.Prompt):
			fmt.Fprintf(&b, "    (the prompt%s, %d bytes)\n", prefixNote(f.Content, req.Prompt), len(f.Content))
		default:
			for _, line := range strings.Split(strings.TrimSuffix(string(f.Content), "\n"), "\n") {
				fmt.Fprintf(&b, "    | %s\n", line)
			}
		}
	}
	fmt.Fprintf(&b, "overlay: %s\n", list(mapStrings(overlay, normalize)))
	cmd, err := spec.Invocation(req)
	require.NoError(t, err)
	fmt.Fprintf(&b, "invocation (dir %s, stdin %s):\n", normalize(cmd.Dir), stdinName(cmd))
	for _, arg := range cmd.Argv {
		fmt.Fprintf(&b, "  %s\n", quoteArg(normalize(arg)))
	}
	if len(cmd.Capture) > 0 {
		fmt.Fprintf(&b, "capture: %s\n", list(mapStrings(cmd.Capture, normalize)))
	}
	if cmd.Stdin == StdinBytes {
		fmt.Fprintf(&b, "stdin bytes:\n  %s\n", strings.TrimSuffix(normalize(string(cmd.StdinBytes)), "\n"))
	}
	return b.String()
}

// renderProbes lists probe argvs one per line after indent.
func renderProbes(probes [][]string, indent string) string {
	var b strings.Builder
	for _, argv := range probes {
		b.WriteString(indent + strings.Join(mapStrings(argv, func(s string) string { return quoteArg(normalize(s)) }), " ") + "\n")
	}
	return b.String()
}

// prefixNote says what precedes the prompt in a prompt copy.
func prefixNote(content, prompt []byte) string {
	if i := bytes.Index(content, prompt); i > 0 {
		return fmt.Sprintf(" after a %d-byte preface", i)
	}
	return ""
}

// stdinName names a command's stdin kind.
func stdinName(cmd Command) string {
	switch cmd.Stdin {
	case StdinPrompt:
		return "prompt"
	case StdinBytes:
		return "bytes"
	}
	return "none"
}

// normalize replaces the fixed request paths with placeholders.
func normalize(s string) string {
	return strings.NewReplacer(contractPrivate, "<private>", contractReceipt, "<receipt>",
		contractCwd, "<cwd>", contractHome, "<home>", "/opt/bin/", "<bin>/").Replace(s)
}

// quoteArg shows an argv element, quoting it when it is empty or holds
// spaces or quotes.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'") {
		return strconv.Quote(s)
	}
	return s
}

func effortStrings(in []policy.Effort) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		out = append(out, string(e))
	}
	return out
}

func list(items []string) string {
	if len(items) == 0 {
		return "(none)"
	}
	return strings.Join(items, ", ")
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, f(s))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestEverySpecFillsEveryField(t *testing.T) {
	t.Parallel()
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			v := reflect.ValueOf(*mustLookup(t, p))
			for i := range v.NumField() {
				f := v.Field(i)
				name := v.Type().Field(i).Name
				if slices.Contains(optionalSpecFields, name) {
					continue
				}
				if f.Kind() == reflect.Slice {
					require.False(t, f.IsNil(), "%s.%s is nil; an empty behaviour is an explicit empty list", p, name)
					continue
				}
				require.False(t, f.IsZero(), "%s.%s is unset", p, name)
			}
		})
	}
}

func TestInvocationsKeepThePromptOutOfArgv(t *testing.T) {
	t.Parallel()
	wantStdin := map[policy.Provider]StdinKind{policy.Grok: StdinNone, policy.Devin: StdinNone, policy.Antigravity: StdinBytes}
	for _, p := range Names() {
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			t.Run(string(p)+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				spec := contractSpec(t, p)
				req := contractRequest(p, mode, policy.APISpendApproved)
				cmd, err := spec.Invocation(req)
				require.NoError(t, err)
				want, ok := wantStdin[p]
				if !ok {
					want = StdinPrompt
				}
				require.Equal(t, want, cmd.Stdin)
				require.Equal(t, req.Executable, cmd.Argv[0])
				for _, arg := range cmd.Argv {
					require.NotContains(t, arg, "Fix the parser", "the prompt never travels in argv")
				}
				files, _, err := spec.Prepare(req)
				require.NoError(t, err)
				carried := cmd.Stdin == StdinPrompt
				if cmd.Stdin == StdinBytes {
					var line struct {
						Message struct {
							Content string `json:"content"`
						} `json:"message"`
					}
					require.NoError(t, json.Unmarshal(cmd.StdinBytes, &line))
					require.True(t, strings.HasSuffix(line.Message.Content, "\n\n"+contractPrompt))
					require.Equal(t, 1, bytes.Count(cmd.StdinBytes, []byte("\n")), "one NDJSON line")
					carried = true
				}
				for _, f := range files {
					require.True(t, filepath.IsAbs(f.Path))
					if f.Dir {
						require.Equal(t, uint32(privateDirMode), f.Mode)
						continue
					}
					// Antigravity's approval program is owner-executable (0700),
					// in the writer's control directory under the real home.
					control := p == policy.Antigravity && strings.HasPrefix(f.Path, AntigravityControlDir(req)+"/")
					if control && filepath.Base(f.Path) == antigravityHookProgram {
						require.Equal(t, uint32(0o700), f.Mode)
					} else {
						require.Equal(t, uint32(privateFileMode), f.Mode)
					}
					inPrivateDir := strings.HasPrefix(f.Path, req.PrivateDir+"/")
					sidecar := strings.HasPrefix(f.Path, req.Receipt+".")
					agentFile := p == policy.Antigravity && (strings.HasPrefix(f.Path, req.Cwd+"/.agents/agents/") ||
						f.Path == req.Cwd+"/.agents/hooks.json")
					require.True(t, inPrivateDir || sidecar || agentFile || control, "%s is outside the attempt's private paths", f.Path)
					if bytes.Contains(f.Content, req.Prompt) {
						carried = true
						require.True(t, slices.ContainsFunc(cmd.Argv, func(a string) bool { return a == f.Path }),
							"the prompt copy %s is passed to the CLI", f.Path)
					}
				}
				require.True(t, carried, "the prompt reaches the CLI")
			})
		}
	}
}

func TestInvocationRejectsMissingModels(t *testing.T) {
	t.Parallel()
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			req := contractRequest(p, policy.ReadOnly, policy.APISpendApproved)
			req.CLIModel = ""
			_, err := mustLookup(t, p).Invocation(req)
			require.Error(t, err)
		})
	}
	t.Run("opencode needs provider/model", func(t *testing.T) {
		t.Parallel()
		for _, model := range []string{"gpt-5", "auto", "openai/", "/gpt", "a//b", " openai/gpt"} {
			req := contractRequest(policy.OpenCode, policy.ReadOnly, policy.APISpendApproved)
			req.CLIModel = model
			_, err := mustLookup(t, policy.OpenCode).Invocation(req)
			require.Error(t, err, model)
			_, _, err = mustLookup(t, policy.OpenCode).Prepare(req)
			require.Error(t, err, model)
		}
		req := contractRequest(policy.OpenCode, policy.ReadOnly, policy.APISpendApproved)
		req.CLIModel = "openrouter/anthropic/claude-x"
		_, err := mustLookup(t, policy.OpenCode).Invocation(req)
		require.NoError(t, err, "extra path segments are preserved")
	})
}

func TestCursorPrepareCopiesOnlyTheHTTP1Switch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		files   map[string]string // path → content; absent paths do not exist
		err     error             // returned for every read when set
		want    string            // the network section of the private config, "" for none
		wantErr bool
	}{
		{name: "no user configuration", want: ""},
		{name: "true is copied", files: map[string]string{"/h/.cursor/cli-config.json": `{"network":{"useHttp1ForAgent":true,"proxy":"x"}}`},
			want: `"useHttp1ForAgent": true`},
		{name: "false is copied", files: map[string]string{"/h/.cursor/cli-config.json": `{"network":{"useHttp1ForAgent":false}}`},
			want: `"useHttp1ForAgent": false`},
		{name: "no network section", files: map[string]string{"/h/.cursor/cli-config.json": `{"permissions":{"allow":["Shell(*)"]}}`}},
		{name: "CURSOR_CONFIG_DIR wins", env: map[string]string{"CURSOR_CONFIG_DIR": "/c", "XDG_CONFIG_HOME": "/x"},
			files: map[string]string{"/c/cli-config.json": `{"network":{"useHttp1ForAgent":true}}`,
				"/x/cursor/cli-config.json": `{"network":{"useHttp1ForAgent":false}}`},
			want: `"useHttp1ForAgent": true`},
		{name: "XDG_CONFIG_HOME beats home", env: map[string]string{"XDG_CONFIG_HOME": "/x"},
			files: map[string]string{"/x/cursor/cli-config.json": `{"network":{"useHttp1ForAgent":false}}`,
				"/h/.cursor/cli-config.json": `{"network":{"useHttp1ForAgent":true}}`},
			want: `"useHttp1ForAgent": false`},
		{name: "malformed JSON fails", files: map[string]string{"/h/.cursor/cli-config.json": `{"network":`}, wantErr: true},
		{name: "a non-object fails", files: map[string]string{"/h/.cursor/cli-config.json": `[1]`}, wantErr: true},
		{name: "a non-boolean switch fails", files: map[string]string{"/h/.cursor/cli-config.json": `{"network":{"useHttp1ForAgent":"yes"}}`}, wantErr: true},
		{name: "a malformed network section fails", files: map[string]string{"/h/.cursor/cli-config.json": `{"network":true}`}, wantErr: true},
		{name: "an unreadable file fails", err: fs.ErrPermission, wantErr: true},
		{name: "a relative location fails", env: map[string]string{"CURSOR_CONFIG_DIR": "rel/dir"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := cursorSpec(func(path string) ([]byte, error) {
				if tt.err != nil {
					return nil, tt.err
				}
				if c, ok := tt.files[path]; ok {
					return []byte(c), nil
				}
				return nil, fs.ErrNotExist
			})
			req := contractRequest(policy.Cursor, policy.IsolatedWrite, policy.APISpendApproved)
			req.Home, req.ParentEnv = "/h", tt.env
			files, overlay, err := spec.Prepare(req)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrUserConfig)
				require.NotContains(t, err.Error(), "Shell(*)")
				for _, v := range tt.env {
					require.NotContains(t, err.Error(), v, "errors name the source, never an environment value")
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, []string{"CURSOR_CONFIG_DIR=" + contractPrivate}, overlay)
			require.Len(t, files, 1)
			content := string(files[0].Content)
			require.NotContains(t, content, "Shell(*)", "user permissions are never copied")
			require.NotContains(t, content, "proxy")
			if tt.want == "" {
				require.NotContains(t, content, "network")
			} else {
				require.Contains(t, content, tt.want)
			}
		})
	}
}
