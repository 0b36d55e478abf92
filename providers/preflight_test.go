package providers

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// exit builds a probe capture that exited with code.
func exit(code int, stdout, stderr string) Capture {
	return Capture{Stdout: []byte(stdout), Stderr: []byte(stderr), ExitCode: &code}
}

// preflightRow is one ReadPreflight case.
type preflightRow struct {
	name   string
	req    func(*Request)       // adjusts the base request
	probe  int                  // probe index
	c      Capture              // the probe's capture
	status policy.ReceiptStatus // "" when the probe passes
	retry  bool
	hidden string // raw output that must not reach the evidence
}

// runPreflightRows checks rows against the spec for p.
func runPreflightRows(t *testing.T, spec *Spec, base Request, rows []preflightRow) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := base
			if tt.req != nil {
				tt.req(&req)
			}
			probes := spec.Preflight(req)
			require.Less(t, tt.probe, len(probes), "the spec runs this probe")
			got := spec.ReadPreflight(req, tt.probe, tt.c)
			require.Equal(t, tt.status, got.Status, "evidence: %s", got.Evidence)
			require.Equal(t, tt.retry, got.Retry)
			require.NotEmpty(t, got.Evidence)
			if tt.hidden != "" {
				require.NotContains(t, got.Evidence, tt.hidden)
			}
		})
	}
}

// baseRequest is a request for p with its contract model.
func baseRequest(p policy.Provider) Request {
	req := contractRequest(p, policy.ReadOnly, policy.APISpendApproved)
	req.ParentEnv = map[string]string{}
	return req
}

func deny(r *Request)   { r.APISpend = policy.APISpendDeny }
func writer(r *Request) { r.Mode = policy.IsolatedWrite }

func TestClaudePreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Claude)
	require.Nil(t, spec.Preflight(baseRequest(policy.Claude)), "read-only lanes defer authentication to the invocation")
	runPreflightRows(t, spec, baseRequest(policy.Claude), []preflightRow{
		{name: "writer at the floor passes", req: writer, c: exit(0, "2.1.285 (Claude Code)\n", "")},
		{name: "writer above the floor passes", req: writer, c: exit(0, "2.10.0 (Claude Code)\n", "")},
		{name: "writer below the floor is unavailable", req: writer, c: exit(0, "2.1.284 (Claude Code)\n", ""),
			status: policy.StatusUnavailableCLI},
		{name: "prerelease is unavailable", req: writer, c: exit(0, "2.2.0-beta.1 (Claude Code)\n", ""),
			status: policy.StatusUnavailableCLI},
		{name: "malformed output is unavailable", req: writer, c: exit(0, "claude version unknown\n", ""),
			status: policy.StatusUnavailableCLI, hidden: "unknown"},
		{name: "failing probe is unavailable", req: writer, c: exit(127, "", "not found"), status: policy.StatusUnavailableCLI},
		{name: "signalled probe is unavailable", req: writer, c: Capture{Signal: "SIGKILL"}, status: policy.StatusUnavailableCLI},
	})
}

func TestCodexPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Codex)
	runPreflightRows(t, spec, baseRequest(policy.Codex), []preflightRow{
		{name: "ChatGPT login passes approved", c: exit(0, "", "Logged in using ChatGPT\n")},
		{name: "API key login passes approved", c: exit(0, "", "Logged in using an API key - sk-proj-***ABCDE\n"),
			hidden: "sk-proj"},
		{name: "ChatGPT login passes deny", req: deny, c: exit(0, "", "Logged in using ChatGPT\n")},
		{name: "ChatGPT login on stdout passes deny", req: deny, c: exit(0, "Logged in using ChatGPT\n", "")},
		{name: "API key login blocks deny", req: deny, c: exit(0, "", "Logged in using an API key - sk-proj-***ABCDE\n"),
			status: policy.StatusBillingPolicyBlocked, hidden: "sk-proj"},
		{name: "API evidence beats ChatGPT evidence", req: deny,
			c:      exit(0, "", "Logged in using ChatGPT\nLogged in using an API key - sk-***\n"),
			status: policy.StatusBillingPolicyBlocked},
		{name: "an extra line blocks deny", req: deny, c: exit(0, "", "WARNING: proceeding\nLogged in using ChatGPT\n"),
			status: policy.StatusBillingPolicyBlocked, hidden: "WARNING"},
		{name: "a decorated ChatGPT line blocks deny", req: deny, c: exit(0, "", "Logged in using ChatGPT (Plus)\n"),
			status: policy.StatusBillingPolicyBlocked, hidden: "Plus"},
		{name: "not logged in is unauthenticated", c: exit(1, "", "Not logged in\n"), status: policy.StatusUnauthenticated},
		{name: "not logged in under deny is unauthenticated", req: deny, c: exit(1, "", "Not logged in\n"),
			status: policy.StatusUnauthenticated},
		{name: "a config error is unauthenticated", c: exit(1, "", "Error loading configuration: bad toml\n"),
			status: policy.StatusUnauthenticated, hidden: "toml"},
		{name: "silence is unauthenticated", c: exit(0, "", ""), status: policy.StatusUnauthenticated},
	})
}

func TestGrokPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Grok)
	listed := "Logged in as dev@example.com\nAvailable models:\n  grok-4.7\n  grok-4.7-fast\n"
	runPreflightRows(t, spec, baseRequest(policy.Grok), []preflightRow{
		{name: "login and model pass", c: exit(0, listed, ""), hidden: "dev@example.com"},
		{name: "a longer slug is not the model", c: exit(0, "Logged in\nModels: grok-4.7-fast, grok-5\n", ""),
			status: policy.StatusUnavailableModel},
		{name: "not logged in asks for the retry", c: exit(1, "Not logged in. Run grok interactively to authenticate.\n", ""),
			status: policy.StatusUnauthenticated, retry: true},
		{name: "no login banner asks for the retry", c: exit(0, "grok-4.7\n", ""),
			status: policy.StatusUnauthenticated, retry: true},
		{name: "a crash is unavailable without retry", c: exit(2, "", "panic: boom\n"),
			status: policy.StatusUnavailableCLI, hidden: "panic"},
		{name: "a login is no subscription proof under deny", req: deny, c: exit(0, listed, ""),
			status: policy.StatusBillingPolicyBlocked},
		{name: "unauthenticated under deny still retries", req: deny, c: exit(1, "Not logged in.\n", ""),
			status: policy.StatusUnauthenticated, retry: true},
	})
}

func TestDevinPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Devin)
	runPreflightRows(t, spec, baseRequest(policy.Devin), []preflightRow{
		{name: "logged in passes", c: exit(0, "Logged in as dev@example.com (team)\n", ""), hidden: "dev@example.com"},
		{name: "logged in on a later line passes", c: exit(0, "Devin CLI\nLogged in\n", "")},
		{name: "not logged in is unauthenticated", c: exit(1, "Not logged in\n", ""), status: policy.StatusUnauthenticated},
		{name: "a mid-line mention is no login", c: exit(0, "Status: Logged in\n", ""), status: policy.StatusUnauthenticated},
		{name: "a failing exit is no login", c: exit(1, "Logged in\n", ""), status: policy.StatusUnauthenticated},
	})
}

func TestCursorPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Cursor)
	withKey := func(r *Request) { r.ParentEnv = map[string]string{"CURSOR_API_KEY": "key_abc"} }
	blankKey := func(r *Request) { r.ParentEnv = map[string]string{"CURSOR_API_KEY": "  "} }
	authed := "{\n  \"status\": \"authenticated\",\n  \"isAuthenticated\": true,\n  \"userInfo\": {\"email\": \"dev@example.com\"}\n}\n"
	runPreflightRows(t, spec, baseRequest(policy.Cursor), []preflightRow{
		{name: "authenticated status passes", c: exit(0, authed, ""), hidden: "dev@example.com"},
		{name: "unauthenticated status exits 0 but fails", c: exit(0, `{"status":"unauthenticated","isAuthenticated":false,"message":"Not logged in"}`, ""),
			status: policy.StatusUnauthenticated},
		{name: "a blank key still checks status", req: blankKey, c: exit(0, authed, "")},
		{name: "non-JSON status is unavailable", c: exit(0, "✓ Logged in as dev@example.com\n", ""),
			status: policy.StatusUnavailableCLI, hidden: "dev@example.com"},
		{name: "a status without isAuthenticated is unavailable", c: exit(0, `{"status":"authenticated"}`, ""),
			status: policy.StatusUnavailableCLI},
		{name: "a string isAuthenticated is unavailable", c: exit(0, `{"isAuthenticated":"true"}`, ""),
			status: policy.StatusUnavailableCLI},
		{name: "a failing status reading as signed out is unauthenticated", c: exit(1, "", "Not logged in\n"),
			status: policy.StatusUnauthenticated},
		{name: "a failing status otherwise is unavailable", c: exit(1, "", "Segmentation fault\n"),
			status: policy.StatusUnavailableCLI},
		{name: "with an API key the version probe passes", req: withKey, c: exit(0, "2026.10.01-0a1b2c3\n", "")},
		{name: "with an API key a failing version probe is unavailable", req: withKey, c: exit(1, "", ""),
			status: policy.StatusUnavailableCLI},
	})
	t.Run("the probe follows CURSOR_API_KEY", func(t *testing.T) {
		t.Parallel()
		req := baseRequest(policy.Cursor)
		require.Equal(t, [][]string{{"/opt/bin/cursor-agent", "status", "--format", "json"}}, spec.Preflight(req))
		withKey(&req)
		require.Equal(t, [][]string{{"/opt/bin/cursor-agent", "--version"}}, spec.Preflight(req))
	})
}

func TestAntigravityPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Antigravity)
	runPreflightRows(t, spec, baseRequest(policy.Antigravity), []preflightRow{
		{name: "a listed slug passes", c: exit(0, "gemini-3.1-flash  Gemini 3.1 Flash\ngemini-3.1-pro-high  Gemini 3.1 Pro (High)\n", "")},
		{name: "the slug must be the first token", c: exit(0, "* gemini-3.1-pro-high\n", ""), status: policy.StatusUnavailableModel},
		{name: "a longer slug is not the model", c: exit(0, "gemini-3.1-pro-high-preview\n", ""), status: policy.StatusUnavailableModel},
		{name: "a display name is not the slug", c: exit(0, "Gemini 3.1 Pro (High)\n", ""), status: policy.StatusUnavailableModel},
		{name: "a sign-in failure is unauthenticated", c: exit(1, "", "Error: not authenticated\n"), status: policy.StatusUnauthenticated},
		{name: "another failure is unavailable", c: exit(1, "", "bubbletea: could not open TTY\n"),
			status: policy.StatusUnavailableCLI, hidden: "bubbletea"},
	})
}

func TestGeminiPreflight(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Gemini)
	runPreflightRows(t, spec, baseRequest(policy.Gemini), []preflightRow{
		{name: "a stable version passes", c: exit(0, "0.6.1\n", "")},
		{name: "a nightly is unavailable", c: exit(0, "0.56.0-nightly.20260821\n", ""), status: policy.StatusUnavailableCLI},
		{name: "a failing probe is unavailable", c: exit(1, "", "node: not found\n"), status: policy.StatusUnavailableCLI},
	})
}

func TestReadPreflightRejectsUnknownProbes(t *testing.T) {
	t.Parallel()
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			spec := mustLookup(t, p)
			req := baseRequest(p)
			req.Mode = policy.IsolatedWrite
			n := len(spec.Preflight(req))
			got := spec.ReadPreflight(req, n, exit(0, "", ""))
			require.Equal(t, policy.StatusUnavailableCLI, got.Status)
		})
	}
}

// editConfig decodes an OpenCode configuration keeping member order,
// applies edit, and renders it again the way debug config prints (indented).
func editConfig(t *testing.T, config []byte, edit func(doc jsonObject) jsonObject) string {
	t.Helper()
	v, err := decodeOrdered(config)
	require.NoError(t, err)
	out, err := json.MarshalIndent(edit(v.(jsonObject)), "", "  ")
	require.NoError(t, err)
	return string(out) + "\n"
}

// set replaces or appends member key.
func (o jsonObject) set(key string, v any) jsonObject {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = v
			return o
		}
	}
	return append(o, jsonMember{key, v})
}

// withExtras reorders the top-level and agent members, and adds effective
// keys and another agent, as a merged configuration may.
func withExtras(t *testing.T, config []byte, name string) string {
	return editConfig(t, config, func(doc jsonObject) jsonObject {
		slices.Reverse(doc)
		agents := doc.mustGet("agent").(jsonObject)
		ours := agents.mustGet(name).(jsonObject)
		slices.Reverse(ours)
		agents = append(agents, jsonMember{"build", jsonObject{{"mode", "primary"}}})
		return append(doc.set("agent", agents), jsonMember{"username", "dev"}, jsonMember{"keybinds", jsonObject{{"leader", "ctrl+x"}}})
	})
}

// swapPermission swaps the first two top-level permission rules.
func swapPermission(t *testing.T, config []byte) string {
	return editConfig(t, config, func(doc jsonObject) jsonObject {
		perm := doc.mustGet("permission").(jsonObject)
		perm[0], perm[1] = perm[1], perm[0]
		return doc
	})
}

// replaceModel pins another model.
func replaceModel(t *testing.T, config []byte) string {
	return editConfig(t, config, func(doc jsonObject) jsonObject { return doc.set("model", "openai/gpt-5") })
}

// setKey replaces a top-level member with raw JSON.
func setKey(t *testing.T, config []byte, key, raw string) string {
	v, err := decodeOrdered([]byte(raw))
	require.NoError(t, err)
	return editConfig(t, config, func(doc jsonObject) jsonObject { return doc.set(key, v) })
}
