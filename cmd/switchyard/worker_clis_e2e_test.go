package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWorkerWithoutCLIsSaysSo (issue 28, finding 2): a worker whose
// providers' CLIs are all missing from its PATH says so at start, one line
// per provider and one that none is there, and status names it among the
// live workers as having no CLI for them. A worker whose CLIs are there
// says nothing of the kind.
func TestWorkerWithoutCLIsSaysSo(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)

	// A PATH without the simulated CLIs (and, on a test machine, without
	// real ones: /usr/bin and /bin carry no provider CLI).
	bare := slices.Clone(s.env)
	for i, kv := range bare {
		if strings.HasPrefix(kv, "PATH=") {
			bare[i] = "PATH=/usr/bin:/bin"
		}
	}
	sb := *s
	sb.env = bare
	lost := sb.start(t, "worker", "--data-dir", s.data, "--provider", "grok,devin")
	waitOutput(t, lost, "none of this worker's providers has its CLI on this host")
	out, _ := lost.output()
	require.Contains(t, out, "switchyard worker: no grok CLI on PATH (tried grok): its attempts will end unavailable-cli; install it or pass --bin grok=/path\n")
	require.Contains(t, out, "switchyard worker: no devin CLI on PATH (tried devin): its attempts will end unavailable-cli; install it or pass --bin devin=/path\n")

	found := s.start(t, "worker", "--data-dir", s.data, "--provider", "codex")
	waitOutput(t, found, "stop with Ctrl-C")

	var st result
	require.NoError(t, waitFor(60*time.Second, "status lists both workers", func() (bool, error) {
		st = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
		return strings.Contains(st.stdout, "workers: 2 live"), nil
	}), "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
	require.Equal(t, 0, st.code, st.stderr)
	require.Regexp(t, `(?m)^  worker \S+( on \S+)? has no CLI for grok, devin: those attempts end unavailable-cli$`, st.stdout)
	require.Equal(t, 1, strings.Count(st.stdout, "has no CLI"), "only the worker without CLIs is named:\n%s", st.stdout)
	fout, _ := found.output()
	require.NotContains(t, fout, "unavailable-cli", "a worker whose CLI is there warns of nothing")
}
