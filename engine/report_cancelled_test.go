package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestReportOfCancelledRunSaysCancelled: the report of a cancelled run
// gives it the state status gives it, "cancelled", not "final" (issue 28,
// finding 32).
func TestReportOfCancelledRunSaysCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high, cursor:composer-2.5@default"), "arena runners", policy.ReadOnly)
	h.waitType(run, events.TypeLaunch, 2)
	require.NoError(t, h.eng.Cancel(ctx, run, events.RunLane, "abort"))
	h.waitFinal(run)

	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.True(t, rep.Final)
	require.True(t, rep.Cancelled)
	require.Contains(t, rep.Text(), "): cancelled\n")
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, engine.RunCancelled, st.State(), "status says the same")

	require.Contains(t, engine.RunReport{Run: "r", Final: true}.Text(), "): final\n", "a run that ended on its own is final")
}
