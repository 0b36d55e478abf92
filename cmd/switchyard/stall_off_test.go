package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunStallTimeoutOff: --stall-timeout off becomes the request's
// NoStallWatchdog with no stall timeout; a duration after it turns the
// watchdog back on; off with --stall-timeout-for is refused.
func TestRunStallTimeoutOff(t *testing.T) {
	rf := runFlags{sheet: filepath.Join(repoRoot, panelSheet), role: "swarm workers", parent: "claude",
		prompt: filepath.Join(repoRoot, "README.md"), cwd: repoRoot, mode: "read-only", contract: "legacy"}
	v := stallTimeoutValue{&rf.stallTimeout, &rf.noStallWatchdog}
	require.NoError(t, v.Set("off"))
	require.Equal(t, "off", v.String())
	rf.stallTimeoutSet = true
	in, err := prepareRun(rf)
	require.NoError(t, err)
	require.True(t, in.req.NoStallWatchdog)
	require.Zero(t, in.req.StallTimeout)

	require.NoError(t, v.Set("90s"))
	in, err = prepareRun(rf)
	require.NoError(t, err)
	require.False(t, in.req.NoStallWatchdog)
	require.Equal(t, 90*time.Second, in.req.StallTimeout)

	require.Error(t, v.Set("soon"))
	require.NoError(t, v.Set("off"))
	rf.stallTimeoutFor = []string{"codex=5m"}
	_, err = prepareRun(rf)
	require.ErrorContains(t, err, "--stall-timeout off and --stall-timeout-for")
}
