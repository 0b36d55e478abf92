// Package realcli finds the provider CLIs published on the npm registry
// (codex, claude, gemini, opencode and the sandbox runtime srt) that
// `make real-clis` installed, for the tests that check provider facts
// against them (the conformance suite).
//
// The install lives in SWITCHYARD_REALCLI_DIR, default
// ${XDG_CACHE_HOME:-~/.cache}/switchyard/real-clis (scripts/real-clis.sh
// picks the same directory). A test that needs a CLI calls Bin: without the
// install it skips and says how to get it, except under CI=true, where it
// fails, since .ci/run installs them.
package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CLI names one installed command and the npm package that ships it.
type CLI struct {
	Name    string // the command on PATH: claude, codex, gemini, opencode, srt
	Package string // the npm package
}

// All is every CLI the install provides, in a fixed order.
var All = []CLI{
	{Name: "claude", Package: "@anthropic-ai/claude-code"},
	{Name: "codex", Package: "@openai/codex"},
	{Name: "gemini", Package: "@google/gemini-cli"},
	{Name: "opencode", Package: "opencode-ai"},
	{Name: "srt", Package: "@anthropic-ai/sandbox-runtime"},
}

// Dir is the install directory: SWITCHYARD_REALCLI_DIR, else the user cache
// directory's switchyard/real-clis.
func Dir() string {
	if d := os.Getenv("SWITCHYARD_REALCLI_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "switchyard", "real-clis")
}

// BinDir is the directory holding every installed CLI's command, for a
// test's PATH. It skips (fails under CI=true) when nothing is installed.
func BinDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Dir(), "node_modules", ".bin")
	if _, err := os.Stat(dir); err != nil {
		missing(t, fmt.Sprintf("the real provider CLIs are not installed in %s", Dir()))
	}
	return dir
}

// Bin is the path of one installed CLI's command (claude, codex, gemini,
// opencode, srt). It skips (fails under CI=true) when it is not installed.
func Bin(t testing.TB, name string) string {
	t.Helper()
	cli := lookup(t, name)
	path := filepath.Join(Dir(), "node_modules", ".bin", cli.Name)
	if _, err := os.Stat(path); err != nil {
		missing(t, fmt.Sprintf("the real %s CLI (%s) is not installed in %s", cli.Name, cli.Package, Dir()))
	}
	return path
}

// Installed is the version of the package that ships the named CLI in the
// install (what Bin runs), read from its package.json.
func Installed(t testing.TB, name string) string {
	t.Helper()
	cli := lookup(t, name)
	return readVersion(t, filepath.Join(Dir(), "node_modules", filepath.FromSlash(cli.Package), "package.json"), cli.Package)
}

// Pinned is the version testdata/realcli/package.json pins for the named
// CLI: the release the conformance suite verified.
func Pinned(t testing.TB, name string) string {
	t.Helper()
	cli := lookup(t, name)
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("realcli: cannot locate testdata/realcli/package.json")
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "package.json"))
	if err != nil {
		t.Fatalf("realcli: %v", err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("realcli: testdata/realcli/package.json: %v", err)
	}
	v, ok := pkg.Dependencies[cli.Package]
	if !ok {
		t.Fatalf("realcli: testdata/realcli/package.json pins no %s", cli.Package)
	}
	return v
}

// Trying reports whether the install holds another release of the named
// CLI than the pinned one: `make conformance VERSIONS="pkg@version ..."`
// passes its VERSIONS as SWITCHYARD_REALCLI_VERSIONS. Checks that the
// install is the pinned release apply only when it is not.
func Trying(t testing.TB, name string) bool {
	t.Helper()
	cli := lookup(t, name)
	for _, v := range strings.Fields(os.Getenv("SWITCHYARD_REALCLI_VERSIONS")) {
		if i := strings.LastIndex(v, "@"); i > 0 && v[:i] == cli.Package {
			return true
		}
	}
	return false
}

func lookup(t testing.TB, name string) CLI {
	t.Helper()
	for _, c := range All {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("realcli: no CLI named %q (have claude, codex, gemini, opencode, srt)", name)
	return CLI{}
}

func readVersion(t testing.TB, path, pkgName string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		missing(t, fmt.Sprintf("%s is not installed in %s", pkgName, Dir()))
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Version == "" {
		t.Fatalf("realcli: %s: no version (%v)", path, err)
	}
	return pkg.Version
}

// missing skips with the way to install, or fails under CI=true, where
// .ci/run (through make test) installs the CLIs first.
func missing(t testing.TB, what string) {
	t.Helper()
	msg := what + ": run `make real-clis` (needs npm), or set SWITCHYARD_REALCLI_DIR to an install"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: .ci/run installs them, so this is a failure)")
	}
	t.Skip(msg)
}
