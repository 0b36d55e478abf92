package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// cliReferenceDir is where the command reference lives, relative to this
// package.
const cliReferenceDir = "../../docs/cli"

// referenceTree is the command tree the reference documents: the one
// switchyard builds, with the commands and flags cobra adds only when it
// executes (completion, --version) added the same way, so the reference
// lists what a user can type.
func referenceTree() *cobra.Command {
	root := newRootCmd(io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	root.DisableAutoGenTag = true
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// genCLIReference writes one Markdown file per visible command of the
// tree into dir (cobra/doc leaves hidden and help commands out).
func genCLIReference(dir string) error {
	return doc.GenMarkdownTree(referenceTree(), dir)
}

// readTree maps each file name in dir to its bytes.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestCLIReference regenerates docs/cli from the command tree and requires
// it to match the committed files byte for byte. `make docs` (go test
// -update) rewrites docs/cli instead.
func TestCLIReference(t *testing.T) {
	home, _ := os.UserHomeDir()
	// A default computed from the environment renders the same everywhere:
	// the reference is generated under a fixed, neutral environment.
	for _, kv := range [][2]string{{"HOME", "/home/user"}, {"USER", "user"}, {"XDG_STATE_HOME", ""},
		{"XDG_CONFIG_HOME", ""}, {dataDirEnv, ""}, {envNATSURL, ""}} {
		t.Setenv(kv[0], kv[1])
	}
	tmp := t.TempDir()
	require.NoError(t, genCLIReference(tmp))
	got := readTree(t, tmp)
	require.NotEmpty(t, got)

	// The reference must read the same on every machine: no home, working
	// or temporary directory, no user name, no version stamp.
	wd, _ := os.Getwd()
	machine := map[string]string{"home directory": home, "working directory": wd, "repository": repoRoot}
	if tmp := os.TempDir(); tmp != "/tmp" { // the examples use /tmp literally
		machine["temporary directory"] = tmp
	}
	for name, body := range got {
		for what, v := range machine {
			if v != "" && v != "/" {
				require.NotContains(t, body, v, "%s carries the %s; the reference must not depend on the machine", name, what)
			}
		}
		require.NotContains(t, body, "Auto generated", "%s carries a generation date", name)
		require.NotContains(t, body, "switchyard "+version, "%s carries the version", name)
	}
	hidden := []string{"switchyard_antigravity-hook.md", "switchyard_help.md"}
	for _, h := range hidden {
		require.NotContains(t, got, h, "hidden and help commands stay out of the reference")
	}

	if golden.Updating() {
		require.NoError(t, os.MkdirAll(cliReferenceDir, 0o755))
		old, err := os.ReadDir(cliReferenceDir)
		require.NoError(t, err)
		for _, e := range old {
			if _, ok := got[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".md") {
				require.NoError(t, os.Remove(filepath.Join(cliReferenceDir, e.Name())))
			}
		}
		for name, body := range got {
			require.NoError(t, os.WriteFile(filepath.Join(cliReferenceDir, name), []byte(body), 0o644))
		}
		return
	}
	want := readTree(t, cliReferenceDir)
	var stale []string
	for name, body := range got {
		if w, ok := want[name]; !ok || !bytes.Equal([]byte(w), []byte(body)) {
			stale = append(stale, name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			stale = append(stale, name+" (no such command any more)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("docs/cli is stale: run `make docs` (differs: %s)", strings.Join(stale, ", "))
	}
}
