package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileCLI stands in for grok: a CLI whose error carries a clear-screen
// sequence and an OSC 52 clipboard write (issue 25, class 7). Its output
// is made up on purpose: it is the attack, not a real CLI's transcript.
// The preflight (grok models) is the simulator's, so the attempt runs.
const hostileCLI = `#!/bin/bash
dir=$(dirname "$0")
if [ "$1" = models ]; then exec -a "$dir/grok" "$dir/.grok-sim" "$@"; fi
printf 'fatal: boom\033[2J\033]52;c;cHduZWQ=\007 gone\n' >&2
printf '%s\n' '{"type":"system","subtype":"init","cwd":"/","session_id":"s-1","model":"grok-4.7","permissionMode":"plan","tools":[]}'
printf '%s\n' '{"type":"error","message":"Internal error: boom\u001b[2J\u001b]52;c;cHduZWQ=\u0007 gone"}'
exit 1
`

// TestHostileCLIOutputReachesTheTerminalEscaped plays a provider CLI that
// writes terminal escape sequences into its error, through a real run (its
// embedded server, engine and worker) and report: every human-readable
// print (run, report, history) holds the sequences escaped and no raw ESC or BEL, while report
// --json keeps the exact text (JSON escapes it its own way).
func TestHostileCLIOutputReachesTheTerminalEscaped(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	grok := filepath.Join(s.bin, "grok")
	require.NoError(t, os.Rename(grok, filepath.Join(s.bin, ".grok-sim")))
	require.NoError(t, os.WriteFile(grok, []byte(hostileCLI), 0o755))

	clean := func(what, out string) {
		t.Helper()
		require.NotContains(t, out, "\x1b", "%s printed a raw ESC:\n%q", what, out)
		require.NotContains(t, out, "\x07", "%s printed a raw BEL:\n%q", what, out)
	}
	r := s.run(t, 120*time.Second, s.runArgs("hillclimb", "--run-id", "hostile")...)
	require.Contains(t, r.stdout, "terminal grok:grok-4.7@xhigh", "the hostile CLI ran:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	clean("run stdout", r.stdout)
	clean("run stderr", r.stderr)

	rep := s.run(t, 60*time.Second, "report", "--data-dir", s.data, "--run", "hostile")
	clean("report stdout", rep.stdout)
	clean("report stderr", rep.stderr)
	hist := s.run(t, 60*time.Second, "history", "--data-dir", s.data, "--run", "hostile")
	clean("history stdout", hist.stdout)
	clean("history stderr", hist.stderr)
	all := r.stdout + r.stderr + rep.stdout + rep.stderr + hist.stdout
	require.Contains(t, all, `boom\x1b[2J\x1b]52;c;cHduZWQ=\x07 gone`, "the CLI's error is shown, escaped:\n%s", all)

	js := s.run(t, 60*time.Second, "report", "--data-dir", s.data, "--run", "hostile", "--json")
	require.Equal(t, 0, js.code, js.stderr)
	require.True(t, json.Valid([]byte(js.stdout)), js.stdout)
	require.Contains(t, js.stdout, `boom\u001b[2J\u001b]52;c;cHduZWQ=\u0007 gone`, "--json keeps the exact text, JSON-escaped")
	require.False(t, strings.Contains(js.stdout, `\\x1b`), "--json is not escaped twice")
}
