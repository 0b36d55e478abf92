package providers

import (
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
var guardedFragments = []string{
	"429",
	"quota",
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

// capacitySurface are the files whose subject is quota itself (the
// capacity contracts, the quota sources and their stand-in, the commands
// that show them): they may name the word "quota" in literals (a flag, a
// reason code, an endpoint), never the status code or a usage-limit
// phrase, so receipt outcomes are still classified in one place.
var capacitySurface = []string{
	"policy/capacity", "providers/quota/", "testdata/simquota/", "cmd/switchyard/usage",
	"cmd/switchyard/run", "cmd/switchyard/eligibility", "engine/eligibility", "engine/report", "engine/status",
}

func onCapacitySurface(rel string) bool {
	for _, p := range capacitySurface {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
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
		for _, v := range guardedLiterals(rel, src, onCapacitySurface(rel)) {
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
		name    string
		src     string
		surface bool
		hits    int
	}{
		{name: "interpreted literal", src: "package x\nvar s = \"status 429\"\n", hits: 1},
		{name: "raw literal any case", src: "package x\nvar s = `QUOTA exceeded`\n", hits: 1},
		{name: "phrase", src: "package x\nvar s = \"you've hit your limit\"\n", hits: 1},
		{name: "escaped apostrophe phrase", src: "package x\nvar s = \"You\\u2019ve reached your free Grok Build usage\"\n", hits: 1},
		{name: "comment only", src: "package x\n// quota and 429 in prose\nvar s = 1\n", hits: 0},
		{name: "identifier only", src: "package x\nvar QuotaLiveHTTP = 429\n", hits: 0},
		{name: "two literals", src: "package x\nvar a, b = \"spend cap\", \"usage limit\"\n", hits: 2},
		{name: "struct tag", src: "package x\ntype T struct{ A int `json:\"allowUnknownQuota\"` }\n", hits: 0},
		{name: "the word on the capacity surface", src: "package x\nvar s = \"quota source\"\n", surface: true, hits: 0},
		{name: "the status code on the capacity surface", src: "package x\nvar s = \"status 429\"\n", surface: true, hits: 1},
		{name: "a phrase on the capacity surface", src: "package x\nvar s = \"usage limit\"\n", surface: true, hits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Len(t, guardedLiterals("x.go", []byte(tc.src), tc.surface), tc.hits)
		})
	}
}

// guardedLiterals returns "file:line: literal" for each string literal that
// contains a guarded fragment. Struct tags (a literal right after a field's
// type, spelled key:"value") name fields and are skipped; on the capacity
// surface the bare word "quota" is allowed.
func guardedLiterals(name string, src []byte, surface bool) []string {
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
			if surface && f == "quota" {
				continue
			}
			if strings.Contains(lower, f) {
				out = append(out, fset.Position(pos).String()+": "+lit)
				break
			}
		}
	}
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
