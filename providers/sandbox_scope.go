package providers

import (
	"path/filepath"

	"github.com/switchyard-dev/switchyard/policy"
)

// sandboxScope is what a contained attempt of one CLI may write outside
// the attempt (its state) and which hosts its egress proxy forwards to.
// The lists are minimal: the CLI's own login, session, config and cache
// locations, and its API, login and model hosts on 443
// (docs/GUARANTEES.md names them; PROVIDER-PROTOCOLS.md and
// QUOTA-PROTOCOLS.md are the sources for the hosts).
type sandboxScope struct {
	stateDirs func(home string, env map[string]string) []string
	apiHosts  []string
}

// under joins HOME-relative state locations.
func under(rel ...string) func(string, map[string]string) []string {
	return func(home string, _ map[string]string) []string {
		out := make([]string, len(rel))
		for i, r := range rel {
			out[i] = filepath.Join(home, r)
		}
		return out
	}
}

// envOr is env[name] when set, else home/rel.
func envOr(env map[string]string, name, home, rel string) string {
	if v := env[name]; v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(home, rel)
}

func https(hosts ...string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h + ":443"
	}
	return out
}

var sandboxScopes = map[policy.Provider]sandboxScope{
	// Claude Code: ~/.claude (sessions, todos, credentials) and
	// ~/.claude.json (its settings file); the Messages API and the OAuth
	// token endpoint.
	policy.Claude: {under(".claude", ".claude.json"), https("api.anthropic.com", "platform.claude.com", "claude.ai")},
	// Codex: $CODEX_HOME (default ~/.codex); the ChatGPT backend its
	// subscription route uses, the OpenAI API and its login.
	policy.Codex: {func(home string, env map[string]string) []string {
		return []string{envOr(env, "CODEX_HOME", home, ".codex")}
	}, https("chatgpt.com", "api.openai.com", "auth.openai.com")},
	// Gemini CLI: ~/.gemini; Code Assist, the Gemini API and Google OAuth.
	policy.Gemini: {under(".gemini"), https("cloudcode-pa.googleapis.com", "generativelanguage.googleapis.com", "oauth2.googleapis.com")},
	// Antigravity (agy): ~/.gemini (its antigravity-cli settings and
	// state); the Code Assist endpoints and Google OAuth.
	policy.Antigravity: {under(".gemini"), https("cloudcode-pa.googleapis.com", "daily-cloudcode-pa.googleapis.com", "oauth2.googleapis.com")},
	// OpenCode: its XDG data, config, state and cache directories;
	// opencode.ai (Zen/Go), models.dev and models.opencode.ai (its model
	// lists; 1.18.33 asks the latter at start) and the ChatGPT
	// subscription route.
	policy.OpenCode: {func(home string, env map[string]string) []string {
		return []string{
			filepath.Join(envOr(env, "XDG_DATA_HOME", home, ".local/share"), "opencode"),
			filepath.Join(envOr(env, "XDG_CONFIG_HOME", home, ".config"), "opencode"),
			filepath.Join(envOr(env, "XDG_STATE_HOME", home, ".local/state"), "opencode"),
			filepath.Join(envOr(env, "XDG_CACHE_HOME", home, ".cache"), "opencode"),
		}
	}, https("opencode.ai", "models.dev", "models.opencode.ai", "chatgpt.com", "auth.openai.com")},
	// Grok CLI: ~/.grok; its chat proxy and the xAI API.
	policy.Grok: {under(".grok"), https("cli-chat-proxy.grok.com", "api.x.ai")},
	// Cursor Agent: ~/.cursor and ~/.config/cursor; its API hosts.
	policy.Cursor: {under(".cursor", ".config/cursor"), https("api2.cursor.sh", "api.cursor.com", "cursor.com")},
	// Devin: its XDG config and data directories; the Codeium seat
	// service and Devin's API.
	policy.Devin: {func(home string, env map[string]string) []string {
		return []string{
			filepath.Join(envOr(env, "XDG_CONFIG_HOME", home, ".config"), "devin"),
			filepath.Join(envOr(env, "XDG_DATA_HOME", home, ".local/share"), "devin"),
		}
	}, https("server.codeium.com", "api.devin.ai")},
}
