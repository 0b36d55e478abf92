package providers

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// classifierFile is the one non-test file allowed to carry quota evidence
// strings (STYLE.md "Outcomes are classified once").
const classifierFile = "providers/classify.go"

// guardedFragments are matched case-insensitively against every string
// literal of every other non-test Go file: the status code, the word, and
// the usage-limit phrases of the quota adapters.
//
// The bare word "quota" is not among them: quota is a subject of its own
// (capacity reports, the usage command, a flag), so a literal may name it;
// matching text against it is what is forbidden (guardedMatches).
var guardedFragments = []string{
	"429",
	"quota exceeded",
	"hit your",
	"usage limit",
	"usage credit",
	"out of credits",
	"out of usage credits",
	"spend cap",
	"spend limit",
	"shared budget",
	"reached your",
	"reached its monthly",
	"free grok build usage",
}

// TestGuardrailSingleClassifier fails when a non-test file other than
// classify.go matches quota evidence in a string literal, so receipt status
// and quota code cannot be decided anywhere else.
func TestGuardrailSingleClassifier(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var scanned int
	var violations []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
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
		if rel == classifierFile {
			return nil
		}
		for _, v := range guardedLiterals(rel, src) {
			violations = append(violations, v)
		}
		for _, v := range guardedMatches(rel, src) {
			violations = append(violations, v)
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, scanned, 20, "the walk from %s found too few Go files to prove anything", root)
	require.Empty(t, violations, "quota evidence belongs only in %s", classifierFile)
}

// TestGuardrailDetects proves the scanner flags literals (raw and
// interpreted, any case) and ignores comments and identifiers.
func TestGuardrailDetects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		hits int
	}{
		{name: "interpreted literal", src: "package x\nvar s = \"status 429\"\n", hits: 1},
		{name: "raw literal any case", src: "package x\nvar s = `QUOTA exceeded`\n", hits: 1},
		{name: "phrase", src: "package x\nvar s = \"you've hit your limit\"\n", hits: 1},
		{name: "escaped apostrophe phrase", src: "package x\nvar s = \"You\\u2019ve reached your free Grok Build usage\"\n", hits: 1},
		{name: "comment only", src: "package x\n// quota and 429 in prose\nvar s = 1\n", hits: 0},
		{name: "identifier only", src: "package x\nvar QuotaLiveHTTP = 429\n", hits: 0},
		{name: "two literals", src: "package x\nvar a, b = \"spend cap\", \"usage limit\"\n", hits: 2},
		{name: "struct tag", src: "package x\ntype T struct{ A int `json:\"allowUnknownQuota\"` }\n", hits: 0},
		{name: "the word quota named", src: "package x\nvar s = \"quota source\"\n", hits: 0},
		{name: "the word quota matched", src: "package x\nimport \"strings\"\nvar b = strings.Contains(s, \"Quota\")\n", hits: 1},
		{name: "the word quota compared", src: "package x\nvar b = s == \"quota\"\n", hits: 1},
		{name: "the word quota as a case", src: "package x\nfunc f(s string) { switch s { case \"QUOTA\": } }\n", hits: 1},
		{name: "the word quota in a pattern", src: "package x\nimport \"regexp\"\nvar re = regexp.MustCompile(`(?i)quota`)\n", hits: 1},
		{name: "the word quota as bytes", src: "package x\nimport \"bytes\"\nvar b = bytes.Contains(s, []byte(\"quota\"))\n", hits: 1},
		{name: "the word quota through a constant", src: "package x\nimport \"strings\"\nconst q = \"QUOTA\"\nvar b = strings.Contains(s, q)\n", hits: 1},
		{name: "the word quota through a local variable", src: "package x\nimport \"strings\"\nfunc f(s string) bool { w := \"quota\"; return strings.HasPrefix(s, w) }\n", hits: 1},
		{name: "an enum value compared by name", src: "package x\nconst r = \"unknown-quota-override\"\nfunc f(s string) bool { switch s { case r: return true }; return s == r }\n", hits: 0},
		{name: "a constant named but not matched", src: "package x\nconst q = \"quota source\"\nvar s = q\n", hits: 0},
		{name: "429 through a constant", src: "package x\nimport \"strings\"\nconst c = \"429\"\nvar b = strings.Contains(s, c)\n", hits: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Len(t, append(guardedLiterals("x.go", []byte(tc.src)), guardedMatches("x.go", []byte(tc.src))...), tc.hits)
		})
	}
}

// guardedLiterals returns "file:line: literal" for each string literal that
// contains a guarded fragment. Struct tags (spelled key:"value") name
// fields and are skipped.
func guardedLiterals(name string, src []byte) []string {
	fset := token.NewFileSet()
	file := fset.AddFile(name, fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var out []string
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.STRING {
			continue
		}
		value, err := strconv.Unquote(lit)
		if err != nil {
			value = lit
		}
		if isStructTag(value) {
			continue
		}
		lower := strings.ToLower(strings.ReplaceAll(value, "\u2019", "'"))
		for _, f := range guardedFragments {
			if strings.Contains(lower, f) {
				out = append(out, fset.Position(pos).String()+": "+lit)
				break
			}
		}
	}
}

// matchFuncs are the functions that match text against a literal.
var matchFuncs = map[string]bool{
	"Contains": true, "ContainsAny": true, "HasPrefix": true, "HasSuffix": true, "Index": true,
	"IndexAny": true, "LastIndex": true, "EqualFold": true, "Count": true, "Cut": true,
	"CutPrefix": true, "CutSuffix": true, "TrimPrefix": true, "TrimSuffix": true,
	"MatchString": true, "Match": true, "MustCompile": true, "Compile": true,
}

// matchedWords are the bare words the provider contract forbids matching
// outside the classifier: "Substring matching for "quota" / "429" outside
// the classifier is forbidden".
var matchedWords = []string{"quota", "429"}

// guardedMatches returns "file:line: literal" for each text containing a
// matched word (any case) that is used to match text: an argument of a
// strings, bytes or regexp matching function, an operand of == or !=, or a
// switch case. The text may be a literal or a conversion of one
// ([]byte("quota")); a matching function's argument may also be a constant
// or variable of the same file initialised with one, so naming the word
// first does not hide a substring match. (Equality with a named enum
// value, such as an audit reason spelled "unknown-quota-override", names a
// value of Switchyard's own and is not text matching.)
func guardedMatches(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{name + ": does not parse: " + err.Error()}
	}
	named := map[string]*ast.BasicLit{}
	bind := func(ids []*ast.Ident, values []ast.Expr) {
		for i, id := range ids {
			if id != nil && i < len(values) {
				if lit := stringLit(values[i], nil); lit != nil {
					named[id.Name] = lit
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			bind(n.Names, n.Values)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				var ids []*ast.Ident
				for _, l := range n.Lhs {
					id, _ := l.(*ast.Ident)
					ids = append(ids, id)
				}
				bind(ids, n.Rhs)
			}
		}
		return true
	})
	var out []string
	flagIn := func(e ast.Expr, names map[string]*ast.BasicLit) {
		lit := stringLit(e, names)
		if lit == nil {
			return
		}
		value, err := strconv.Unquote(lit.Value)
		if err != nil {
			value = lit.Value
		}
		for _, w := range matchedWords {
			if strings.Contains(strings.ToLower(value), w) {
				out = append(out, fset.Position(e.Pos()).String()+": "+lit.Value)
				return
			}
		}
	}
	flag := func(e ast.Expr) { flagIn(e, nil) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "strings" || pkg.Name == "bytes" || pkg.Name == "regexp") && matchFuncs[sel.Sel.Name] {
					for _, a := range n.Args {
						flagIn(a, named)
					}
				}
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				flag(n.X)
				flag(n.Y)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				flag(e)
			}
		}
		return true
	})
	return out
}

// stringLit returns the string literal e spells: the literal itself, a
// conversion of one ([]byte(...), string(...)), or an identifier named
// in named; nil for anything else.
func stringLit(e ast.Expr, named map[string]*ast.BasicLit) *ast.BasicLit {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return e
		}
	case *ast.CallExpr:
		if len(e.Args) != 1 {
			return nil
		}
		switch fn := e.Fun.(type) {
		case *ast.ArrayType:
			return stringLit(e.Args[0], named)
		case *ast.Ident:
			if fn.Name == "string" {
				return stringLit(e.Args[0], named)
			}
		}
	case *ast.Ident:
		return named[e.Name]
	}
	return nil
}

// isStructTag reports whether a literal is spelled like a struct tag:
// space-separated key:"value" pairs.
func isStructTag(v string) bool {
	for _, part := range strings.Fields(v) {
		k, rest, ok := strings.Cut(part, ":")
		if !ok || k == "" || len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
			return false
		}
	}
	return v != ""
}

// moduleRoot walks up from the package directory to the go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the providers package")
		dir = parent
	}
}
