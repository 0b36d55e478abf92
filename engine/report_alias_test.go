package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestReportMarksAliasAttempts: the report marks an inherit-parent
// attempt as an alias (what the diversity note is computed from) and a
// descriptor attempt as none.
func TestReportMarksAliasAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submitParent(sheet("", "arena runners: inherit-parent, cursor:composer-2.5@default"), "arena runners", policy.ParentClaude, policy.ReadOnly, "")
	h.waitLane(run, 0, machines.StateLaunching)
	h.waitLane(run, 1, machines.StateLaunching)
	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.Len(t, rep.Lanes[0].Attempts, 1)
	require.True(t, rep.Lanes[0].Attempts[0].Alias)
	require.Len(t, rep.Lanes[1].Attempts, 1)
	require.False(t, rep.Lanes[1].Attempts[0].Alias)
}
