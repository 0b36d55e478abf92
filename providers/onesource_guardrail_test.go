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

// TestGuardrailOneSourcePerProvider fails when a provider-keyed map or
// switch appears outside the spec files and the shrinking known list.
func TestGuardrailOneSourcePerProvider(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	found := map[string]bool{}
	var violations []string
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
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, scanned, 20)
	require.Empty(t, violations, "a provider-keyed table outside the ProviderSpec: move it into a Spec field (provider-contract.md: do not reintroduce parallel tables)")
	for _, k := range knownTables {
		require.True(t, found[k], "%s is no longer a provider-keyed table: remove it from knownTables", k)
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
