package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServePrintsThePlatformsOpener: serve's console sign-in line names
// the platform's URL opener: xdg-open on Linux, open on macOS (issue 28,
// finding 32).
func TestServePrintsThePlatformsOpener(t *testing.T) {
	t.Parallel()
	require.Equal(t, "open", openerFor("darwin"))
	require.Equal(t, "xdg-open", openerFor("linux"))

	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	waitOutput(t, serve, "console sign-in")
	out, _ := serve.output()
	want := "open \"http://"
	if runtime.GOOS == "linux" {
		want = "xdg-open \"http://"
	}
	require.Contains(t, out, "readable only by you): "+want, out)
}
