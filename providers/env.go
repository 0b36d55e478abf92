package providers

import (
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// baseEnv is the allowlist every child starts from (LC_* by prefix). It is
// constructed, never the parent's environment passed through: anything not
// named here, in the spec's KeepEnv or (when spending allows) its OwnEnv
// does not reach the child.
var baseEnv = []string{"PATH", "HOME", "TERM", "LANG", "LC_*", "TMPDIR", "USER"}

// ProxyEnv are the network proxy and certificate variables a child keeps
// so the CLIs work behind a corporate proxy or TLS-inspecting gateway
// (both spellings of the proxy variables, as curl, Node and Go read
// them). They carry routing and trust, not provider credentials; the one
// mode that drops them is OpenCode's ChatGPT-subscription attempt, whose
// environment allowlist drops proxy controls with every route override.
var ProxyEnv = []string{
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "NODE_USE_ENV_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
}

// markerEnv are host markers removed from every child even if a spec's
// KeepEnv or OwnEnv would admit them: nested-session markers of Claude Code
// and Codex and every OpenCode override (the OpenCode spec sets its own
// after removal). Devin's provider-side model substitution switch,
// DEVIN_REFUSAL_FALLBACK, is not here: the dispatch seed removes it from
// Devin's children only (the Devin spec's RemoveEnv) and leaves the parent
// environment and other providers unchanged.
var markerEnv = []string{
	"CLAUDECODE", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ID",
	"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS",
	"OPENCODE_*",
}

// ChildEnv constructs a child's complete environment as sorted NAME=value
// pairs: the base allowlist, the proxy and certificate variables (except
// for an OpenCode ChatGPT-subscription attempt) and the spec's KeepEnv
// read from parent, plus
// its OwnEnv when req.APISpend is approved or legacy; minus the spec's
// RemoveEnv and the host markers; then overlay (NAME=value pairs from
// Prepare) on top. HOME falls back to req.Home when the parent has none.
// Nothing else in parent reaches the child.
func ChildEnv(spec *Spec, parent map[string]string, req Request, overlay []string) []string {
	allowed := append(append([]string{}, baseEnv...), spec.KeepEnv...)
	if !req.ChatGPTSubscription {
		allowed = append(allowed, ProxyEnv...)
	}
	if spendAllowsOwnEnv(req.APISpend) {
		allowed = append(allowed, spec.OwnEnv...)
	}
	removed := append(append([]string{}, markerEnv...), spec.RemoveEnv...)
	for _, other := range registry {
		if other.Provider != spec.Provider {
			removed = append(removed, other.HostMarkers...)
		}
	}
	env := map[string]string{}
	for name, value := range parent {
		if matchesAny(allowed, name) && !matchesAny(removed, name) {
			env[name] = value
		}
	}
	if _, ok := env["HOME"]; !ok && req.Home != "" {
		env["HOME"] = req.Home
	}
	for _, kv := range overlay {
		name, value, ok := strings.Cut(kv, "=")
		if ok && name != "" {
			env[name] = value
		}
	}
	out := make([]string, 0, len(env))
	for name, value := range env {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

// GuardNames applies spec.Guard to the parent environment and returns the
// names (never values) of the billing routes that block this attempt before
// launch, sorted and deduplicated; none means the guard passes. Each Guard
// decides for its own spending policy: most check only under deny, OpenCode
// blocks everything but approved.
func GuardNames(spec *Spec, parent map[string]string, req Request) []string {
	if spec.Guard == nil {
		return nil
	}
	names := spec.Guard(parent, req)
	if len(names) == 0 {
		return nil
	}
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// GuardEvidence is the launcher-authored evidence of a guard block: the
// spending policy and the blocking route names, never their values.
func GuardEvidence(req Request, names []string) string {
	return "api-spend " + string(req.APISpend) + " blocks known billing routes: " + strings.Join(names, ", ")
}

// spendAllowsOwnEnv reports whether a child may keep its provider's own
// billing variables: only with explicit approval or on a legacy call.
func spendAllowsOwnEnv(s policy.APISpend) bool {
	return s == policy.APISpendApproved || s == policy.APISpendLegacy
}

// matchesAny reports whether name matches one of patterns; a pattern ending
// in * matches by prefix.
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

// nonBlank reports whether a variable holds anything but whitespace.
func nonBlank(v string) bool { return strings.TrimSpace(v) != "" }

// truthy reports whether a switch-like variable is on: anything but empty,
// 0, false or no (case-insensitive, surrounding space ignored).
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// envGuard is a declarative billing-route check: NonBlank names block when
// they hold anything, Truthy names (prefixes allowed) when they are on.
type envGuard struct {
	NonBlank []string
	Truthy   []string
}

// names returns the route names set in env, in no particular order.
func (g envGuard) names(env map[string]string) []string {
	var out []string
	for _, name := range g.NonBlank {
		if nonBlank(env[name]) {
			out = append(out, name)
		}
	}
	for name, value := range env {
		if matchesAny(g.Truthy, name) && truthy(value) {
			out = append(out, name)
		}
	}
	return out
}

// vars lists the guard's variables (prefix patterns included): a spec's
// OwnEnv, the variables a child may keep once spending is allowed.
func (g envGuard) vars() []string {
	out := append(append([]string{}, g.NonBlank...), g.Truthy...)
	slices.Sort(out)
	return out
}

// denyOnly wraps a check so it runs only under --api-spend deny, the
// policy every provider but OpenCode guards.
func denyOnly(check func(env map[string]string, req Request) []string) func(map[string]string, Request) []string {
	return func(env map[string]string, req Request) []string {
		if req.APISpend != policy.APISpendDeny {
			return nil
		}
		return check(env, req)
	}
}

// envGuardFunc turns an envGuard into a deny-only Spec.Guard.
func envGuardFunc(g envGuard) func(map[string]string, Request) []string {
	return denyOnly(func(env map[string]string, _ Request) []string { return g.names(env) })
}

// parentEnv reads one variable of req.ParentEnv ("" when unset).
func parentEnv(req Request, name string) string { return req.ParentEnv[name] }
