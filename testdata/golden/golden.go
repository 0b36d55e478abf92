// Package golden is the one golden-file helper of the repository's tests.
//
// A test compares the bytes it produced with a file under its package's
// testdata:
//
//	golden.Check(t, "testdata/next/launch.golden", got)
//
// Importing the package registers the -update flag in the test binary (one
// flag per binary, whichever packages of the binary import this one).
// go test ./policy -update rewrites the files instead of comparing, and so
// does UPDATE_GOLDENS=1 go test ./policy (any value strconv.ParseBool reads
// as true; for go test ./... where a flag would reach binaries that do not
// import this package). A rewrite
// that changes a file fails the test ("updated golden X; review the diff and
// rerun without -update"), so a blanket -update cannot pass a regression
// silently; a run that changes nothing passes.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing against them; a rewrite that changes a file fails the test")

// Updating reports whether the test binary runs with -update or
// UPDATE_GOLDENS=1, e.g. for a test that checks every golden file has a
// case and tolerates new ones while they are being written.
func Updating() bool { return *update || envUpdate(os.Getenv("UPDATE_GOLDENS")) }

// envUpdate reads UPDATE_GOLDENS: true for values strconv.ParseBool accepts
// as true ("1", "true"), false when unset, empty or false. Any other value
// is treated as false (comparing, the safe side).
func envUpdate(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// Check compares got with the file at path (forward slashes, relative to
// the test's package directory), or, under -update, writes got there and
// fails the test when that changed the file. got is exactly the bytes the
// file holds, trailing newline included.
func Check[D ~string | ~[]byte](t testing.TB, path string, got D) {
	t.Helper()
	check(t, Updating(), path, []byte(got), t.Name())
}

// tb is the part of testing.TB that check uses; the package's own tests
// pass a recorder.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

func check(t tb, update bool, path string, got []byte, name string) {
	t.Helper()
	path = filepath.FromSlash(path)
	old, err := os.ReadFile(path)
	if update {
		if err == nil && string(old) == string(got) {
			return
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		t.Errorf("updated golden %s; review the diff and rerun without -update", path)
		return
	}
	rerun := rerunHint(name)
	require.NoError(t, err, "golden file %s is missing; to create it run: %s", path, rerun)
	require.Equal(t, string(old), string(got), "output differs from golden %s; if the change is intended run: %s", path, rerun)
}

// rerunHint is the command that rewrites the test's golden files: go test
// with the package directory relative to the module root (the directory
// holding go.mod) and the test's name.
func rerunHint(name string) string {
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				if rel, err := filepath.Rel(dir, wd); err == nil {
					pkg = "./" + filepath.ToSlash(rel)
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if pkg == "./." {
		pkg = "."
	}
	return fmt.Sprintf("go test %s -run '%s' -update", pkg, name)
}
