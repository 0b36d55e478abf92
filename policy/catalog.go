package policy

import "strings"

// RoleRow is one row of the role catalog: a sheet header, the leaf roles it
// names, and the seat rules for its right-hand side.
type RoleRow struct {
	Header     string   // the exact header before ':'; may contain commas
	Leaves     []string // leaf roles a --role may name; empty when the header is the only name
	Panel      bool     // seats fan out; non-panel rows take exactly one seat
	MinSeats   int      // minimum seat count
	NativeOnly bool     // every attempt must be an alias (needs the parent's live MCP surface)
}

// DefaultCatalog is the built-in 15-row role catalog of the reference
// helper.
func DefaultCatalog() []RoleRow {
	row := func(h string, panel bool, min int) RoleRow {
		return RoleRow{Header: h, Panel: panel, MinSeats: min}
	}
	return []RoleRow{
		{Header: "feature, refactoring", Leaves: []string{"feature", "refactoring"}, MinSeats: 1},
		row("bug-fix", false, 1),
		row("perf-issue", false, 1),
		row("hillclimb", false, 1),
		row("judgment and prose", false, 1),
		row("hardest tasks", false, 1),
		row("how explorer", false, 1),
		row("how explainer", false, 1),
		{Header: "why investigators, synthesizer", Leaves: []string{"why investigators", "synthesizer"}, MinSeats: 1, NativeOnly: true},
		{Header: "reflect tooling, judgment, divergent, synthesizer", Leaves: []string{"reflect tooling", "judgment", "divergent", "synthesizer"}, MinSeats: 1, NativeOnly: true},
		row("arena runners", true, 1),
		row("arena cross-judge pool", true, 1),
		row("swarm workers", true, 1),
		row("architect runners", true, 2),
		row("interrogate reviewers", true, 1),
	}
}

// Options configures the policy for a deployment: the role catalog and the
// Claude-native agent coverage. DefaultOptions gives the built-in values.
type Options struct {
	Catalog      []RoleRow
	ClaudeNative []NativeAgent
}

// DefaultOptions returns the built-in catalog and native coverage.
func DefaultOptions() Options {
	return Options{Catalog: DefaultCatalog(), ClaudeNative: DefaultClaudeNative()}
}

// headerAt returns the catalog row whose header, followed by ':', is the
// longest prefix of line, or -1.
func (o Options) headerAt(line string) int {
	best, bestLen := -1, -1
	for i, r := range o.Catalog {
		if len(r.Header) > bestLen && strings.HasPrefix(line, r.Header) &&
			len(line) > len(r.Header) && line[len(r.Header)] == ':' {
			best, bestLen = i, len(r.Header)
		}
	}
	return best
}

// nativeCovers reports whether a shipped Claude agent covers model@effort.
func (o Options) nativeCovers(model string, effort Effort) bool {
	_, ok := o.ClaudeNativeAgent(model, effort)
	return ok
}

// ClaudeNativeAgent names the shipped Claude agent that covers
// model@effort, pstack-<stem>-<effort>, from the same coverage the route
// decision uses (a versioned rolling-family pin is first normalized to its
// alias). ok is false when no shipped agent covers it.
func (o Options) ClaudeNativeAgent(model string, effort Effort) (agent string, ok bool) {
	if alias, isPin := VersionedClaudeAlias(model); isPin {
		model = alias
	}
	for _, a := range o.ClaudeNative {
		if a.Model == model && a.Effort == effort {
			return "pstack-" + claudeStem(a.Model) + "-" + string(effort), true
		}
	}
	return "", false
}

// claudeStem is the agent stem of a Claude model alias: the matrix row's
// ClaudeStem, or the alias itself for coverage outside the matrix.
func claudeStem(model string) string {
	for _, f := range ModelMatrix {
		if f.Provider == Claude && f.Model == model && f.ClaudeStem != "" {
			return f.ClaudeStem
		}
	}
	return model
}
