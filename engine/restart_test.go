package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// lossyQueue is a MemoryQueue whose job publications are lost, as when an
// engine dies between recording a launch and publishing its job.
type lossyQueue struct{ *events.MemoryQueue }

func (lossyQueue) PublishJob(context.Context, string, events.Job) error {
	return errors.New("connection lost")
}

// TestRestartPublishesRecordedLaunch proves that a launch recorded without
// its job reaching the queue is published after a restart under the same
// execution id, and never decided (or launched) a second time. The run was
// submitted while no engine ran, so the first engine also proves pickup.
func TestRestartPublishesRecordedLaunch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)

	lossy := h.cfg
	lossy.Queue = lossyQueue{events.NewMemoryQueue()}
	first, err := engine.New(lossy)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	h.waitLane(run, 0, machines.StateLaunching)
	cancel()
	require.NoError(t, <-done)

	stop := h.run() // the harness engine, on the real queue
	job := h.nextJob(events.JobSubject("codex"))
	stop()
	envs, err := h.store.LoadRun(context.Background(), run)
	require.NoError(t, err)
	launches := ofType(envs, events.TypeLaunch)
	require.Len(t, launches, 1, "the launch is decided once")
	require.Equal(t, launches[0].Payload.(events.Launch).ExecutionID, job.ExecutionID)
}

// TestRestartResumesReports proves, on JetStream, that an engine started
// over an existing run resumes its reports after the last one recorded:
// the finished report sent while no engine ran completes the lane, and the
// claimed report already recorded is not applied (or audited) again.
func TestRestartResumesReports(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	stop := h.run()
	run, job := h.submitOneLane()
	h.report(job, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	stop()

	h.execute(job, "success")
	h.report(job, events.ReportFinished)
	stop = h.startEngine()
	r, envs := h.waitFinal(run)
	stop()
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Empty(t, ofType(envs, events.TypeAudit))
	require.Len(t, ofType(envs, events.TypeClaim), 1)
	h.verifyReplay(run)
}
