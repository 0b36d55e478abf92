package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWaitSettledWaitsForStoredReports proves WaitSettled waits for the
// reports stored when it is called, not only for lane states: a lane still
// launching in the log whose worker's claimed and finished (cancelled)
// reports are stored but unrecorded is not settled while no engine runs;
// once an engine runs, WaitSettled returns after the lane's finish and the
// stop that follows (never at terminal), and the stop does not fall back.
func TestWaitSettledWaitsForStoredReports(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	stop := h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("codex"))
	h.waitLane(run, 0, machines.StateLaunching)
	stop()

	// What a stopped worker leaves: its attempt claimed, stopped and
	// reported, while no engine runs.
	h.report(job, events.ReportClaimed)
	executeCancelled(t, job)
	h.report(job, events.ReportFinished)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.eng.WaitSettled(short, run), context.DeadlineExceeded, "the stored reports are not recorded yet")

	h.startEngine()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, h.eng.WaitSettled(ctx, run))
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, machines.StateStopped, st.Lanes[0].State, "recorded and decided, not left terminal")
	require.Contains(t, st.Lanes[0].Reason, "was stopped while it ran (receipt cancelled")
	require.Equal(t, "codex:gpt-5.6-sol@high", st.Lanes[0].Descriptor, "no fallback to cursor")
	h.noJob(run, events.JobSubject("cursor"))
}

// TestWaitSettledLeavesQueuedJobs proves a lane whose job is queued (no
// worker took it) is settled: WaitSettled returns at once, and the lane
// stays launching for a later worker.
func TestWaitSettledLeavesQueuedJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high"), "bug-fix", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateLaunching)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, h.eng.WaitSettled(ctx, run))
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, machines.StateLaunching, st.Lanes[0].State)
	require.Equal(t, engine.WaitWorker, st.Lanes[0].WaitingFor)
}
