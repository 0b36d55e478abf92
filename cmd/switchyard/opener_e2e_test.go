package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServePrintsNoOpenerCommand: serve's console sign-in line is a bare
// address, never an `open`/`xdg-open` command line (issue 28 finding 32
// printed macOS's opener on Linux; issue 25 class 6: a command line is
// visible to every local user in ps, so a sign-in code must not ride on
// one).
func TestServePrintsNoOpenerCommand(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	waitOutput(t, serve, "console sign-in")
	out, _ := serve.output()
	line := regexp.MustCompile(`(?m)^switchyard serve: console sign-in .*$`).FindString(out)
	require.Regexp(t, `\): http://127\.0\.0\.1:\d+/#code=[A-Za-z0-9_-]+$`, line, out)
	require.NotRegexp(t, `(xdg-)?open "`, out)
}
