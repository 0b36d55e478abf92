package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var cleanAbsCases = []string{
	"", "/", "//", "/.", "/..", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..",
	"/...", "/a/.b", "/a/b..", "a", "./a", "/a\x00b", "/work/run/x1/receipt.json", "/ä/ö",
}

// TestCleanAbs: the one-pass check agrees with filepath's definition on
// paths that take each of its branches.
func TestCleanAbs(t *testing.T) {
	for _, p := range cleanAbsCases {
		require.Equal(t, cleanAbsByClean(p), cleanAbs(p), "%q", p)
	}
	require.True(t, cleanAbs("/work/run/x1/receipt.json"))
	require.False(t, cleanAbs("/work//run"))
}

func FuzzCleanAbs(f *testing.F) {
	for _, p := range cleanAbsCases {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		require.Equal(t, cleanAbsByClean(p), cleanAbs(p), "%q", p)
	})
}
