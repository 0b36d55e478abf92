package policy_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports are standard-library packages that would let policy do
// I/O, talk to the network or log. policy takes data (and "now") and returns
// values; the callers own every side effect.
var forbiddenImports = []string{
	"os", "os/*",
	"net", "net/*",
	"syscall",
	"log", "log/*",
	"io/ioutil",
	"plugin",
	"runtime/cgo",
}

// forbiddenCalls are clock and timer functions: policy gets "now" as a
// parameter so every decision replays.
var forbiddenCalls = map[string][]string{
	"time": {"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTicker", "NewTimer"},
}

func isForbidden(path string) bool {
	for _, f := range forbiddenImports {
		if base, ok := strings.CutSuffix(f, "/*"); ok {
			if strings.HasPrefix(path, base+"/") {
				return true
			}
		} else if path == f {
			return true
		}
	}
	return false
}

// TestPolicyImportsOnlyPureStdlib proves policy is pure at the import level:
// it imports nothing outside the standard library, directly or
// transitively, and none of the I/O, network or logging packages directly.
func TestPolicyImportsOnlyPureStdlib(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("read package policy: %v", err)
	}
	for _, imp := range pkg.Imports {
		if isForbidden(imp) {
			t.Errorf("policy imports %q: policy must not do I/O, networking or logging", imp)
		}
		dep, err := build.Import(imp, ".", build.FindOnly)
		if err != nil || !dep.Goroot {
			t.Errorf("policy imports %q, which is not in the standard library", imp)
		}
	}

	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found for the transitive check: %v", err)
	}
	self, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		if std != "true" && path != strings.TrimSpace(string(self)) {
			t.Errorf("policy depends on %q, which is not in the standard library", path)
		}
	}
}

// TestPolicyHasNoGoroutinesOrClock proves the rest of "pure" that imports
// cannot: no go statements and no reads of the wall clock or timers in
// policy's non-test sources.
func TestPolicyHasNoGoroutinesOrClock(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("read package policy: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		local := map[string]string{} // local import name -> import path
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			n := filepath.Base(path)
			if imp.Name != nil {
				n = imp.Name.Name
			}
			local[n] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: policy starts a goroutine; it must stay synchronous", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				id, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				for _, fn := range forbiddenCalls[local[id.Name]] {
					if n.Sel.Name == fn {
						t.Errorf("%s: policy calls %s.%s; take the time as a parameter instead", fset.Position(n.Pos()), local[id.Name], fn)
					}
				}
			}
			return true
		})
	}
}
