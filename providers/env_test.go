package providers

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// secretPrefix marks every planted value: no golden, guard name or error
// may contain it.
const secretPrefix = "planted-secret-"

// plantedEnv is a parent environment holding every provider's API keys and
// route overrides, host markers, non-credential locations, and unrelated
// secrets, each with a recognizable value.
func plantedEnv() map[string]string {
	env := map[string]string{
		// base allowlist
		"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/worker", "TERM": "xterm-256color",
		"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LC_CTYPE": "C.UTF-8", "TMPDIR": "/tmp", "USER": "worker",
		// switches that are set but off: never a route
		"CLAUDE_CODE_USE_FOUNDRY": "false", "AGY_GATEWAY_OFF": "0",
		// switches that are on
		"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "TRUE", "AGY_ADC_AUTH": "1",
		"GOOGLE_GENAI_USE_VERTEXAI": "yes",
	}
	for _, name := range []string{
		// billing routes
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AWS_API_KEY", "ANTHROPIC_BASE_URL",
		"ANTHROPIC_CUSTOM_HEADERS", "OPENAI_API_KEY", "XAI_API_KEY", "GROK_CODE_XAI_API_KEY",
		"DEVIN_API_KEY", "DEVIN_API_URL", "CURSOR_API_KEY", "CURSOR_API_ENDPOINT",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS",
		"AGY_GATEWAY_X", "AGY_LLM_GATEWAY_URL",
		// host markers
		"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS",
		"CODEX_THREAD_ID", "CODEX_SANDBOX", "CODEX_CI", "DEVIN_REFUSAL_FALLBACK",
		"OPENCODE_CONFIG", "OPENCODE_PERMISSION", "OPENCODE_DISABLE_PROJECT_CONFIG",
		// non-credential locations some specs keep
		"CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
		"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
		// unrelated secrets and process controls
		"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN",
		"HTTPS_PROXY", "NODE_OPTIONS", "SSH_AUTH_SOCK", "LD_PRELOAD",
	} {
		env[name] = "/" + secretPrefix + name // absolute, so location variables resolve
	}
	return env
}

// unrelatedSecrets never reach any child under any policy.
var unrelatedSecrets = []string{"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "GH_TOKEN",
	"NPM_TOKEN", "NODE_OPTIONS", "SSH_AUTH_SOCK", "LD_PRELOAD"}

// envRequest is a request for provider p under a spending policy.
func envRequest(t *testing.T, p policy.Provider, spend policy.APISpend) Request {
	return Request{Provider: p, Mode: policy.ReadOnly, APISpend: spend, Home: t.TempDir(),
		PrivateDir: "/runs/a1/private", Receipt: "/runs/a1/receipt.json", Cwd: "/work/checkout"}
}

// envNames returns the names of NAME=value pairs.
func envNames(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	return out
}

func TestGuardNamesUnderDenyListExactlyTheProvidersRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     policy.Provider
		want     []string
		legacyTo []string // names under legacy spending (nil: guard passes)
	}{
		{name: policy.Claude, want: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AWS_API_KEY",
			"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"}},
		{name: policy.Codex, want: []string{"OPENAI_API_KEY"}},
		{name: policy.Grok, want: []string{"GROK_CODE_XAI_API_KEY", "XAI_API_KEY"}},
		{name: policy.Devin, want: []string{"DEVIN_API_KEY", "DEVIN_API_URL"}},
		{name: policy.Cursor, want: []string{"CURSOR_API_ENDPOINT", "CURSOR_API_KEY"}},
		{name: policy.Antigravity, want: []string{"AGY_ADC_AUTH", "AGY_GATEWAY_OFF", "AGY_GATEWAY_X", "AGY_LLM_GATEWAY_URL",
			"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"}},
		{name: policy.OpenCode, want: []string{openCodeNativeAuth}, legacyTo: []string{openCodeNativeAuth}},
		{name: policy.Gemini, want: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
			"GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"}},
	}
	require.Len(t, tests, len(Names()), "one row per registered provider")
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			t.Parallel()
			spec, err := Lookup(tt.name)
			require.NoError(t, err)
			env := plantedEnv()
			require.Equal(t, tt.want, GuardNames(spec, env, envRequest(t, tt.name, policy.APISpendDeny)))
			require.Nil(t, GuardNames(spec, env, envRequest(t, tt.name, policy.APISpendApproved)), "approved passes the guard")
			require.Equal(t, tt.legacyTo, GuardNames(spec, env, envRequest(t, tt.name, policy.APISpendLegacy)))
			for _, name := range tt.want {
				require.NotContains(t, name, secretPrefix)
			}
			require.NotContains(t, GuardEvidence(envRequest(t, tt.name, policy.APISpendDeny), tt.want), secretPrefix)
		})
	}
}

func TestGuardNamesIgnoreBlankAndOffValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "blank key is no route", env: map[string]string{"ANTHROPIC_API_KEY": "  \t"}},
		{name: "switch set to 0 is off", env: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "0"}},
		{name: "switch set to no is off", env: map[string]string{"ANTHROPIC_BASE_URL": " No "}},
		{name: "switch set to false is off", env: map[string]string{"CLAUDE_CODE_USE_VERTEX": "FALSE"}},
		{name: "empty switch is off", env: map[string]string{"CLAUDE_CODE_USE_FOUNDRY": ""}},
		{name: "any other switch value is on", env: map[string]string{"CLAUDE_CODE_USE_FOUNDRY": "enabled"},
			want: []string{"CLAUDE_CODE_USE_FOUNDRY"}},
		{name: "another provider's key is not claude's route", env: map[string]string{"OPENAI_API_KEY": "k"}},
	}
	spec, err := Lookup(policy.Claude)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, GuardNames(spec, tt.env, envRequest(t, policy.Claude, policy.APISpendDeny)))
		})
	}
}

// billingOwners maps each planted billing variable to the providers whose
// spec uses it: under approved spending only their children may hold it.
var billingOwners = map[string][]policy.Provider{
	"ANTHROPIC_API_KEY":              {policy.Claude},
	"ANTHROPIC_AUTH_TOKEN":           {policy.Claude},
	"ANTHROPIC_AWS_API_KEY":          {policy.Claude},
	"ANTHROPIC_BASE_URL":             {policy.Claude},
	"ANTHROPIC_CUSTOM_HEADERS":       {policy.Claude},
	"CLAUDE_CODE_USE_BEDROCK":        {policy.Claude},
	"CLAUDE_CODE_USE_VERTEX":         {policy.Claude},
	"CLAUDE_CODE_USE_FOUNDRY":        {policy.Claude},
	"OPENAI_API_KEY":                 {policy.Codex},
	"XAI_API_KEY":                    {policy.Grok},
	"GROK_CODE_XAI_API_KEY":          {policy.Grok},
	"DEVIN_API_KEY":                  {policy.Devin},
	"DEVIN_API_URL":                  {policy.Devin},
	"CURSOR_API_KEY":                 {policy.Cursor},
	"CURSOR_API_ENDPOINT":            {policy.Cursor},
	"GEMINI_API_KEY":                 {policy.Antigravity, policy.Gemini},
	"GOOGLE_GEMINI_BASE_URL":         {policy.Antigravity, policy.Gemini},
	"AGY_ADC_AUTH":                   {policy.Antigravity},
	"AGY_GATEWAY_X":                  {policy.Antigravity},
	"AGY_GATEWAY_OFF":                {policy.Antigravity},
	"AGY_LLM_GATEWAY_URL":            {policy.Antigravity},
	"GOOGLE_API_KEY":                 {policy.Gemini},
	"GOOGLE_APPLICATION_CREDENTIALS": {policy.Gemini},
	"GOOGLE_GENAI_USE_VERTEXAI":      {policy.Gemini},
}

func TestChildEnvKeepsBillingKeysOnlyForTheirProvider(t *testing.T) {
	t.Parallel()
	for _, spend := range []policy.APISpend{policy.APISpendApproved, policy.APISpendLegacy, policy.APISpendDeny} {
		for _, p := range Names() {
			t.Run(string(spend)+"/"+string(p), func(t *testing.T) {
				t.Parallel()
				spec, err := Lookup(p)
				require.NoError(t, err)
				env := plantedEnv()
				child := ChildEnv(spec, env, envRequest(t, p, spend), nil)
				names := envNames(child)
				require.True(t, slices.IsSorted(child), "sorted NAME=value pairs")
				for name, owners := range billingOwners {
					want := spend != policy.APISpendDeny && slices.Contains(owners, p)
					require.Equal(t, want, slices.Contains(names, name), "%s in the %s child under %s", name, p, spend)
				}
				for _, name := range unrelatedSecrets {
					require.NotContains(t, names, name)
				}
				require.Contains(t, names, "HTTPS_PROXY", "proxy variables reach every child outside the ChatGPT-subscription mode")
				for _, kv := range child {
					name, value, _ := strings.Cut(kv, "=")
					require.Equal(t, env[name], value, "values pass unchanged")
				}
				for _, name := range []string{"PATH", "HOME", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER"} {
					require.Contains(t, names, name)
				}
				for _, name := range names {
					owned := slices.Contains(spec.KeepEnv, name) || matchesAny(spec.OwnEnv, name) || matchesAny(baseEnv, name) || slices.Contains(ProxyEnv, name)
					require.True(t, owned, "%s reached the %s child without an allowlist entry", name, p)
				}
			})
		}
	}
}

func TestChildEnvRemovesHostMarkers(t *testing.T) {
	t.Parallel()
	markers := []string{"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_CHILD_SESSION",
		"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "CODEX_THREAD_ID", "CODEX_SANDBOX", "CODEX_CI",
		"OPENCODE_CONFIG", "OPENCODE_PERMISSION", "OPENCODE_DISABLE_PROJECT_CONFIG"}
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			spec, err := Lookup(p)
			require.NoError(t, err)
			// Even a spec that admitted every marker keeps none of them.
			greedy := *spec
			greedy.KeepEnv = append(slices.Clone(markers), spec.KeepEnv...)
			names := envNames(ChildEnv(&greedy, plantedEnv(), envRequest(t, p, policy.APISpendApproved), nil))
			plain := envNames(ChildEnv(spec, plantedEnv(), envRequest(t, p, policy.APISpendApproved), nil))
			for _, m := range markers {
				require.NotContains(t, plain, m)
				if p == policy.Codex && strings.HasPrefix(m, "CODEX_") {
					continue // Codex's own markers are not removed from Codex, only never allowlisted
				}
				require.NotContains(t, names, m)
			}
		})
	}
	t.Run("codex keeps its own home", func(t *testing.T) {
		t.Parallel()
		codex, err := Lookup(policy.Codex)
		require.NoError(t, err)
		require.Contains(t, envNames(ChildEnv(codex, plantedEnv(), envRequest(t, policy.Codex, policy.APISpendDeny), nil)), "CODEX_HOME")
		claude, err := Lookup(policy.Claude)
		require.NoError(t, err)
		greedy := *claude
		greedy.KeepEnv = []string{"CODEX_HOME"}
		require.NotContains(t, envNames(ChildEnv(&greedy, plantedEnv(), envRequest(t, policy.Claude, policy.APISpendDeny), nil)), "CODEX_HOME")
	})
}

func TestChildEnvOverlayAndHome(t *testing.T) {
	t.Parallel()
	spec, err := Lookup(policy.OpenCode)
	require.NoError(t, err)
	tests := []struct {
		name    string
		parent  map[string]string
		overlay []string
		want    []string
	}{
		{name: "overlay adds after OPENCODE_* removal",
			parent:  map[string]string{"PATH": "/bin", "HOME": "/h", "OPENCODE_CONFIG": "/evil.json"},
			overlay: []string{"OPENCODE_CONFIG=/private/opencode.json"},
			want:    []string{"HOME=/h", "OPENCODE_CONFIG=/private/opencode.json", "PATH=/bin"}},
		{name: "overlay replaces an allowlisted value",
			parent: map[string]string{"PATH": "/bin", "HOME": "/h", "XDG_DATA_HOME": "/d"}, overlay: []string{"XDG_DATA_HOME=/p"},
			want: []string{"HOME=/h", "PATH=/bin", "XDG_DATA_HOME=/p"}},
		{name: "HOME falls back to the request's home",
			parent: map[string]string{"PATH": "/bin"}, want: []string{"HOME=/real/home", "PATH=/bin"}},
		{name: "malformed overlay entries are ignored",
			parent: map[string]string{"HOME": "/h"}, overlay: []string{"NOEQUALS", "=value"}, want: []string{"HOME=/h"}},
		{name: "values with = survive", parent: map[string]string{"HOME": "/h", "LC_ALL": "a=b"},
			want: []string{"HOME=/h", "LC_ALL=a=b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := Request{Provider: policy.OpenCode, APISpend: policy.APISpendApproved, Home: "/real/home"}
			require.Equal(t, tt.want, ChildEnv(spec, tt.parent, req, tt.overlay))
		})
	}
}

func TestTruthyAndNonBlank(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value            string
		truthy, nonBlank bool
	}{
		{"", false, false}, {"   ", false, false}, {"0", false, true}, {"false", false, true},
		{"FALSE", false, true}, {" no ", false, true}, {"No", false, true}, {"1", true, true},
		{"true", true, true}, {"yes", true, true}, {"off", true, true}, {"https://gw", true, true},
	}
	for _, tt := range tests {
		t.Run("value "+strconv.Quote(tt.value), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.truthy, truthy(tt.value))
			require.Equal(t, tt.nonBlank, nonBlank(tt.value))
		})
	}
}

func TestAntigravityGuardReadsSettingsUnderDenyOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings string // "" means the file is missing
		err      error
		want     []string
	}{
		{name: "missing settings are no route"},
		{name: "plain settings are no route", settings: `{"theme":"dark","trustedWorkspaces":["/w"]}`},
		{name: "model provider blocks", settings: `{"modelProvider":"vertex"}`,
			want: []string{"~/.gemini/antigravity-cli/settings.json: modelProvider"}},
		{name: "nested model overrides block", settings: `{"a":{"modelConfigOverrides":{}}}`,
			want: []string{"~/.gemini/antigravity-cli/settings.json: modelConfigOverrides"}},
		{name: "malformed settings block", settings: `{"modelProvider":`,
			want: []string{"~/.gemini/antigravity-cli/settings.json (malformed)"}},
		{name: "a non-object document blocks", settings: `[]`,
			want: []string{"~/.gemini/antigravity-cli/settings.json (malformed)"}},
		{name: "unreadable settings block", err: fmt.Errorf("open settings: %w", fs.ErrPermission),
			want: []string{"~/.gemini/antigravity-cli/settings.json (unreadable)"}},
	}
	t.Run("an unknown home blocks without reading", func(t *testing.T) {
		t.Parallel()
		spec := antigravitySpec(func(string) ([]byte, error) { panic("read without a home") })
		req := Request{Provider: policy.Antigravity, APISpend: policy.APISpendDeny}
		require.Equal(t, []string{"~/.gemini/antigravity-cli/settings.json (unreadable: home directory unknown)"},
			GuardNames(spec, map[string]string{}, req))
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			spec := antigravitySpec(func(path string) ([]byte, error) {
				asked = append(asked, path)
				if tt.err != nil {
					return nil, tt.err
				}
				if tt.settings == "" {
					return nil, fmt.Errorf("open settings: %w", fs.ErrNotExist)
				}
				return []byte(tt.settings), nil
			})
			req := Request{Provider: policy.Antigravity, APISpend: policy.APISpendDeny, Home: "/home/w"}
			require.Equal(t, tt.want, GuardNames(spec, map[string]string{}, req))
			require.Equal(t, []string{"/home/w/.gemini/antigravity-cli/settings.json"}, asked)
			asked = nil
			req.APISpend = policy.APISpendApproved
			require.Nil(t, GuardNames(spec, map[string]string{}, req))
			require.Empty(t, asked, "approved spending reads no settings")
		})
	}
}

// TestChildEnvDevinRefusalFallbackDevinOnly: the dispatch seed removes an
// inherited DEVIN_REFUSAL_FALLBACK from Devin's children only; the parent
// environment and other providers are unchanged (a spec that admits the
// name passes it on).
func TestChildEnvDevinRefusalFallbackDevinOnly(t *testing.T) {
	t.Parallel()
	const name = "DEVIN_REFUSAL_FALLBACK"
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			spec, err := Lookup(p)
			require.NoError(t, err)
			parent := plantedEnv()
			before := maps.Clone(parent)
			admitting := *spec
			admitting.KeepEnv = append([]string{name}, spec.KeepEnv...)
			admitting.OwnEnv = append([]string{name}, spec.OwnEnv...)
			names := envNames(ChildEnv(&admitting, parent, envRequest(t, p, policy.APISpendApproved), nil))
			require.Equal(t, before, parent, "the parent environment is unchanged")
			if p == policy.Devin {
				require.NotContains(t, names, name, "Devin's child never inherits the substitution switch")
				require.NotContains(t, envNames(ChildEnv(spec, parent, envRequest(t, p, policy.APISpendLegacy), nil)), name)
				return
			}
			require.Contains(t, names, name, "only Devin's children lose %s", name)
		})
	}
}
