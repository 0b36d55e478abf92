package providers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The provider contract: adapters, drivers and classifiers derive from the
// ProviderSpec; "Do not reintroduce parallel tables". A provider-keyed
// table is a map literal keyed by policy.<Provider> or a switch with a
// case on one, outside the provider files that build the specs.

// specFiles may key on providers: each provider's own spec file builds
// that provider's spec.
func specFile(rel string) bool {
	return rel == "providers/spec.go"
}

// knownTables are the provider-keyed tables that still live outside the
// spec (issue 26, "One source per provider"): each entry is a file and a
// line's table, to be moved into a Spec field and deleted from here. The
// test fails on any table not listed, and on a listed one that is gone,
// so the list only shrinks.
var knownTables = []string{
	"events/eventstest/samples.go: map", // a test sample's per-provider stall timeout, not a table of behaviour
}

// comparisonScope are the packages whose provider comparisons the
// guardrail checks: the launcher (providers), the activities, the engine
// and the CLI, where a provider's behaviour must come from its spec.
// policy/ is outside it: the pure policy package holds the sheet's own
// vocabulary and byte-exact reference behaviour (which providers are on
// the sheet, Claude's versioned aliases, Devin's UIDs) and cannot import
// providers, whose specs are built from it. events/ and machines/ carry
// facts, not provider behaviour, and are left to review.
var comparisonScope = []string{"providers/", "activities/", "engine/", "cmd/"}

// providerSpecFile reports whether rel is one provider's own spec file
// (providers/<provider>.go or providers/<provider>_*.go), which may name
// its provider freely.
func providerSpecFile(rel string) bool {
	dir, file := filepath.Split(rel)
	if dir != "providers/" {
		return false
	}
	for _, n := range providerNames {
		p := strings.ToLower(n)
		if file == p+".go" || strings.HasPrefix(file, p+"_") {
			return true
		}
	}
	return false
}

// knownComparisons are the comparisons with a provider constant (==, !=
// or slices.Contains) that still live outside the specs, each with why:
// to be moved into a Spec field and deleted from here. The test fails on
// any comparison not listed, and on a listed one that is gone, so the
// list only shrinks.
var knownComparisons = []string{
	// Another helper is rewriting setup and the launch refusal (issue 26);
	// each needs a spec field first:
	"cmd/switchyard/setup.go: == policy.Grok", // Grok under deny always ends billing-policy-blocked (setup skips it)
	"cmd/switchyard/setup.go: == policy.Gemini",
	"cmd/switchyard/setup.go: == policy.OpenCode",                                                               // OpenCode needs approved spending (or the subscription mode) for setup to propose it // Gemini is optional: setup proposes no family for it
	"cmd/switchyard/setup.go: slices.Contains policy.Devin, policy.Cursor, policy.Antigravity, policy.OpenCode", // providers whose families come from their own listing
	"engine/launch_refusal.go: == policy.Antigravity",                                                           // Spec.ExplicitAPISpend now holds this rule
}

// TestGuardrailOneSourcePerProvider fails when a provider-keyed map or
// switch appears outside the spec files and the shrinking known list.
func TestGuardrailOneSourcePerProvider(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	found, foundCmp := map[string]bool{}, map[string]bool{}
	var violations, cmpViolations []string
	var scanned int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "vendor" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		if specFile(rel) {
			return nil
		}
		for _, kind := range providerTables(rel, src) {
			key := rel + ": " + kind
			found[key] = true
			if !slices.Contains(knownTables, key) {
				violations = append(violations, key)
			}
		}
		if providerSpecFile(rel) || !slices.ContainsFunc(comparisonScope, func(p string) bool { return strings.HasPrefix(rel, p) }) {
			return nil
		}
		for _, kind := range providerComparisons(rel, src) {
			key := rel + ": " + kind
			foundCmp[key] = true
			if !slices.Contains(knownComparisons, key) {
				cmpViolations = append(cmpViolations, key)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, scanned, 20)
	require.Empty(t, violations, "a provider-keyed table outside the ProviderSpec: move it into a Spec field (provider-contract.md: do not reintroduce parallel tables)")
	for _, k := range knownTables {
		require.True(t, found[k], "%s is no longer a provider-keyed table: remove it from knownTables", k)
	}
	require.Empty(t, cmpViolations, "a comparison with a provider constant outside the ProviderSpec: give the behaviour a Spec field set in the provider's spec file (provider-contract.md: do not reintroduce parallel tables)")
	for _, k := range knownComparisons {
		require.True(t, foundCmp[k], "%s is no longer a provider comparison: remove it from knownComparisons", k)
	}
}

// TestGuardrailOneSourceDetects proves the scanner finds maps and switches
// keyed by a provider constant and ignores other maps and comparisons.
func TestGuardrailOneSourceDetects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"map", "package x\nvar m = map[policy.Provider]bool{policy.Codex: true}\n", []string{"map"}},
		{"switch", "package x\nfunc f(p policy.Provider) int { switch p { case policy.Grok: return 1 }; return 0 }\n", []string{"switch"}},
		{"map keyed otherwise", "package x\nvar m = map[string]bool{\"codex\": true}\n", nil},
		{"comparison", "package x\nfunc f(p policy.Provider) bool { return p == policy.Codex }\n", nil},
		{"switch on other values", "package x\nfunc f(s string) { switch s { case \"codex\": } }\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, providerTables("x.go", []byte(tc.src)))
		})
	}
}

// TestGuardrailOneSourceDetectsComparisons proves the scanner finds ==,
// != and slices.Contains with a provider constant, on either side, and
// ignores comparisons of other values and of provider variables.
func TestGuardrailOneSourceDetectsComparisons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"equal", "package x\nfunc f(p policy.Provider) bool { return p == policy.Codex }\n", []string{"== policy.Codex"}},
		{"not equal, constant first", "package x\nfunc f(p policy.Provider) bool { return policy.Cursor != p }\n", []string{"== policy.Cursor"}},
		{"in an if", "package x\nfunc f(s *Spec) int { if s.Provider == policy.Grok && s.X { return 1 }; return 0 }\n", []string{"== policy.Grok"}},
		{"contains in a literal", "package x\nfunc f(p policy.Provider) bool { return slices.Contains([]policy.Provider{policy.Devin, policy.Grok}, p) }\n", []string{"slices.Contains policy.Devin, policy.Grok"}},
		{"contains the needle", "package x\nfunc f(ps []policy.Provider) bool { return slices.Contains(ps, policy.Claude) }\n", []string{"slices.Contains policy.Claude"}},
		{"twice in a file", "package x\nfunc f(p policy.Provider) bool { return p == policy.Codex || p != policy.Codex }\n", []string{"== policy.Codex"}},
		{"provider variables", "package x\nfunc f(a, b policy.Provider) bool { return a == b || slices.Contains(ps, a) }\n", nil},
		{"other constants", "package x\nfunc f(p policy.Parent) bool { return p == policy.ParentCodex }\n", nil},
		{"a provider as a value", "package x\nvar s = Spec{Provider: policy.Codex}\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, providerComparisons("x.go", []byte(tc.src)))
		})
	}
	require.True(t, providerSpecFile("providers/codex.go"))
	require.True(t, providerSpecFile("providers/opencode_auth.go"))
	require.False(t, providerSpecFile("providers/models.go"))
	require.False(t, providerSpecFile("cmd/switchyard/codex.go"))
}

// providerComparisons returns one entry per provider constant compared
// with == or != ("== policy.Codex"), and one per slices.Contains call
// naming provider constants ("slices.Contains policy.Devin, policy.Grok").
func providerComparisons(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{"unparseable"}
	}
	provider := func(e ast.Expr) string {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "policy" && slices.Contains(providerNames, sel.Sel.Name) {
				return "policy." + sel.Sel.Name
			}
		}
		return ""
	}
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			for _, side := range []ast.Expr{n.X, n.Y} {
				if p := provider(side); p != "" {
					add("== " + p)
				}
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Contains" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "slices" {
				return true
			}
			var named []string
			for _, arg := range n.Args {
				ast.Inspect(arg, func(m ast.Node) bool {
					if e, ok := m.(ast.Expr); ok {
						if p := provider(e); p != "" {
							named = append(named, p)
						}
					}
					return true
				})
			}
			if len(named) > 0 {
				add("slices.Contains " + strings.Join(named, ", "))
			}
		}
		return true
	})
	return out
}

// providerNames are the policy constants of the providers.
var providerNames = []string{"Claude", "Codex", "Grok", "Devin", "Cursor", "Antigravity", "OpenCode", "Gemini"}

// providerTables returns "map" or "switch" once per kind of
// provider-keyed table in src.
func providerTables(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{"unparseable"}
	}
	isProvider := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == "policy" && slices.Contains(providerNames, sel.Sel.Name)
	}
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if _, ok := n.Type.(*ast.MapType); ok {
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isProvider(kv.Key) {
						add("map")
					}
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if isProvider(e) {
					add("switch")
				}
			}
		}
		return true
	})
	return out
}
