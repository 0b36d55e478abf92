package policy

import (
	"fmt"
	"strings"
)

// ParseAttempt parses one chain element as written in a sheet: an alias
// (inherit-parent, auto) or a descriptor <provider>:<model>@<effort>.
//
// Provider-specific rules enforced here are the sheet parser's: OpenCode
// takes provider/model paths at @default only, Antigravity takes @default
// only, and "auto" is never a model (for OpenCode, in any letter case and
// in any path segment; for Antigravity, in any letter case). Cursor and Devin effort rules belong
// to the runner (see providers.Spec.CLIModel), as in the reference helper.
func ParseAttempt(s string) (Attempt, error) {
	switch Alias(s) {
	case AliasInheritParent, AliasAuto:
		return Attempt{Kind: KindAlias, Alias: Alias(s)}, nil
	}
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return Attempt{}, fmt.Errorf("attempt %q is not <provider>:<model>@<effort>, inherit-parent or auto", s)
	}
	prov := Provider(s[:colon])
	if !prov.Valid() {
		return Attempt{}, fmt.Errorf("attempt %q names unknown provider %q (want one of %s)", s, prov, providerList())
	}
	rest := s[colon+1:]
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return Attempt{}, fmt.Errorf("attempt %q has no @<effort>", s)
	}
	model, effort := rest[:at], Effort(rest[at+1:])
	if !effort.Valid() {
		return Attempt{}, fmt.Errorf("attempt %q has unknown effort %q (want low, medium, high, xhigh, max or default)", s, effort)
	}
	if model == "auto" {
		return Attempt{}, fmt.Errorf("attempt %q: auto is not a model; name an exact model or use the auto alias", s)
	}
	switch prov {
	case OpenCode:
		for _, seg := range strings.Split(model, "/") {
			if strings.EqualFold(seg, "auto") {
				return Attempt{}, fmt.Errorf("attempt %q: opencode has no auto provider or model (only the parent aliases auto and inherit-parent choose for you); name an exact <provider>/<model>", s)
			}
		}
		if !validOpenCodeModel(model) {
			return Attempt{}, fmt.Errorf("attempt %q: opencode models are <provider>/<model>[/...] with non-empty segments", s)
		}
		if effort != EffortDefault {
			return Attempt{}, fmt.Errorf("attempt %q: opencode takes @default only (the runner passes no variant)", s)
		}
	default:
		if !validModel(model) {
			return Attempt{}, fmt.Errorf("attempt %q: model must start with a letter or digit and use only letters, digits, '.', '_' and '-'", s)
		}
		if prov == Antigravity && strings.EqualFold(model, "auto") {
			return Attempt{}, fmt.Errorf("attempt %q: antigravity has no auto model (only the parent aliases auto and inherit-parent choose for you); name an exact model slug", s)
		}
		if prov == Antigravity && effort != EffortDefault {
			return Attempt{}, fmt.Errorf("attempt %q: antigravity slugs carry their variant; use @default", s)
		}
	}
	return Attempt{Kind: KindDescriptor, Provider: prov, Model: model, Effort: effort}, nil
}

func providerList() string {
	names := make([]string, len(Providers))
	for i, p := range Providers {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validSegment reports whether s matches [A-Za-z0-9][A-Za-z0-9<extra>]*.
func validSegment(s, extra string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

func validModel(m string) bool { return validSegment(m, "._-") }

// validOpenCodeModel matches [A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._:-]*)+.
func validOpenCodeModel(m string) bool {
	segs := strings.Split(m, "/")
	if len(segs) < 2 || !validSegment(segs[0], "._-") {
		return false
	}
	for _, s := range segs[1:] {
		if !validSegment(s, "._:-") {
			return false
		}
	}
	return true
}

// rollingClaudeFamilies are the Claude families whose versioned IDs are
// normalized to the rolling alias at read time.
var rollingClaudeFamilies = []string{"fable", "opus", "sonnet"}

// VersionedClaudeAlias maps a versioned Claude model ID of a rolling family
// (claude-opus-4-5, claude-sonnet-5-0-1) to its alias (opus, sonnet). The
// revision must be digits separated by single hyphens. ok is false for any
// other model, which passes through unchanged.
func VersionedClaudeAlias(model string) (alias string, ok bool) {
	for _, fam := range rollingClaudeFamilies {
		prefix := "claude-" + fam + "-"
		if strings.HasPrefix(model, prefix) && digitRevision(model[len(prefix):]) {
			return fam, true
		}
	}
	return "", false
}

// digitRevision matches [0-9]+(-[0-9]+)*.
func digitRevision(s string) bool {
	for _, part := range strings.Split(s, "-") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// NormalizeAttempt applies the seed's read-time normalization: a Claude
// descriptor pinned to a versioned rolling-family ID uses the family alias.
// Everything else is returned unchanged.
func NormalizeAttempt(a Attempt) Attempt {
	if a.Kind == KindDescriptor && a.Provider == Claude {
		if alias, ok := VersionedClaudeAlias(a.Model); ok {
			a.Model = alias
		}
	}
	return a
}

// DevinModelUID maps a Devin descriptor's model and effort to the CLI model
// UID. Effort is part of a Devin UID, so only the legacy families have
// selectable efforts.
func DevinModelUID(model string, effort Effort) (string, error) {
	switch model {
	case "swe-2":
		switch effort {
		case EffortMedium, EffortHigh, EffortMax:
			return "swe-2-" + string(effort), nil
		case EffortDefault:
			return "swe-2", nil
		}
		return "", fmt.Errorf("devin:swe-2@%s is invalid: SWE-2 supports medium, high and max (never clamped)", effort)
	case "swe-1.6":
		if effort == EffortDefault {
			return "swe-1-6", nil
		}
		return "", fmt.Errorf("devin:swe-1.6@%s is invalid: SWE-1.6 has no selectable effort; use @default", effort)
	}
	if effort != EffortDefault {
		return "", fmt.Errorf("devin:%s@%s is invalid: effort is part of a Devin model UID; use @default", model, effort)
	}
	return model, nil
}
