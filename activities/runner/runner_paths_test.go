package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// evalRef is how a path was made canonical before pathResolver: the whole
// path through filepath.EvalSymlinks, or for a path that does not resolve
// its directory through it and the last component joined as it is.
func evalRef(p string) (pathRef, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return pathRef{}, false
	}
	if canon, err := filepath.EvalSymlinks(abs); err == nil {
		return pathRef{abs: abs, canon: canon}, true
	}
	dir, base := filepath.Split(abs)
	canonDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return pathRef{}, false
	}
	return pathRef{abs: abs, canon: filepath.Join(canonDir, base)}, true
}

// TestPathResolverIsEvalSymlinks: over a tree of directory and file
// links (relative and absolute, chained, dangling, looping, through a
// linked directory), existing and missing files, and missing directories,
// one resolver asked for every path in turn gives exactly what resolving
// each path whole gives, and refuses exactly the paths whose directory
// does not resolve; and it says of each path whether it resolved to its
// end, as the receipt's canonical paths need.
func TestPathResolverIsEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string { return filepath.Join(root, p) }
	require.NoError(t, os.MkdirAll(mk("real/exec/sub"), 0o755))
	require.NoError(t, os.WriteFile(mk("real/exec/prompt.md"), []byte("x"), 0o644))
	for link, target := range map[string]string{
		"data":                   "real",            // a linked directory, relative
		"abs":                    mk("real/exec"),   // absolute
		"real/exec/p-link":       "prompt.md",       // a file link
		"real/exec/chain":        "p-link",          // a chain of them
		"real/exec/up":           "../exec/sub",     // up and back down
		"real/exec/dangling":     "missing.md",      // leads nowhere
		"real/exec/dangling-dir": "nodir/out.md",    // nor does its directory
		"real/exec/loop-a":       "loop-b",          // a loop
		"real/exec/loop-b":       "loop-a",          //
		"real/exec/to-data":      "../../data/exec", // back through the linked directory
	} {
		require.NoError(t, os.Symlink(target, mk(link)))
	}
	var paths []string
	for _, dir := range []string{"real/exec", "data/exec", "abs", "data/exec/to-data", "data/exec/up", "real/nodir", "data/exec/loop-a"} {
		for _, base := range []string{"prompt.md", "p-link", "chain", "up", "dangling", "dangling-dir", "loop-a", "to-data", "output.md", "sub", ""} {
			paths = append(paths, mk(filepath.Join(dir, base)))
		}
	}
	paths = append(paths, "/", mk("real/exec/./sub/../prompt.md"), mk("real/exec/chain/"))

	wd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(wd, mk("data/exec/chain"))
	require.NoError(t, err)
	paths = append(paths, rel)

	res := pathResolver{}
	refused := 0
	for _, p := range paths {
		want, ok := evalRef(p)
		got, err := res.ref("--output", p)
		if !ok {
			require.Error(t, err, p)
			require.Contains(t, err.Error(), "does not exist or is not reachable", p)
			refused++
			continue
		}
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
		whole, werr := filepath.EvalSymlinks(got.abs)
		c, ok, err := res.canon(got.abs)
		require.NoError(t, err, p)
		require.Equal(t, werr == nil, ok, "%s: whole says whether the path resolves to its end", p)
		if ok {
			require.Equal(t, whole, c, p)
		}
	}
	require.Greater(t, refused, 0, "the tree has paths whose directory does not resolve")
	require.Less(t, refused, len(paths)/2)
	_, err = res.ref("--output", "a\x00b")
	require.ErrorContains(t, err, "NUL byte")
}

// BenchmarkResolvePaths resolves an attempt's five paths, four of them in
// one execution directory nine deep, as the worker's runner does at every
// attempt. BenchmarkResolvePathsWhole is the same through
// filepath.EvalSymlinks of each path whole (evalRef), for the ratio.
func BenchmarkResolvePaths(b *testing.B) {
	o := benchPaths(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := resolvePaths(o, ".private"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolvePathsWhole(b *testing.B) {
	o := benchPaths(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range []string{o.Prompt, o.Cwd, o.Output, o.Receipt, o.Progress} {
			if _, ok := evalRef(p); !ok {
				b.Fatal(p)
			}
		}
	}
}

func benchPaths(b *testing.B) Options {
	root := b.TempDir()
	exec := filepath.Join(root, "data", "runs", "r1", "L1", "x", "y", "z")
	cwd := filepath.Join(root, "checkout")
	require.NoError(b, os.MkdirAll(exec, 0o755))
	require.NoError(b, os.MkdirAll(cwd, 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(exec, "prompt.md"), []byte("x"), 0o644))
	return Options{Prompt: filepath.Join(exec, "prompt.md"), Cwd: cwd, Output: filepath.Join(exec, "output.md"),
		Receipt: filepath.Join(exec, "receipt.json"), Progress: filepath.Join(exec, "progress.json")}
}
