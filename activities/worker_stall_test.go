package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWorkerStalledJob: a job whose CLI prints one event and hangs ends
// with a timed-out receipt and a finished report carrying the stall
// metadata; the workload ran once.
func TestWorkerStalledJob(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, "stall-after-one", false)
	w := e.startWorker(e.workerConfig("worker-a"))
	job := e.newJob(0)
	// Long enough that the simulated CLI has started and logged itself
	// before the watchdog fires, even on a loaded machine.
	job.StallTimeoutMs = 1500
	e.publish(job)

	fin := e.waitReport(events.ReportFinished, job.ExecutionID)
	w.waitEvent(t, evAcked, job.ExecutionID, 1)
	require.NoError(t, fin.Validate())
	b, rc := e.receipt(job)
	require.Equal(t, policy.StatusTimedOut, rc.Status)
	require.Equal(t, events.Digest(b), fin.ReceiptDigest)
	require.NotNil(t, fin.Stall, "the finished report carries the stall")
	first := uint64(1)
	require.Equal(t, events.Stall{Failure: "response_stalled", IdleMs: fin.Stall.IdleMs, TimeoutMs: 1500,
		ProviderHealth: "request_stalled", Liveness: "available", Probe: "available", FenceClosed: true,
		Adapter: "codex", Target: "gpt-5.5", HealthObservationSeq: &first}, *fin.Stall,
		"the exact adapter and target the probe was checked against, and the worker connection's first observation")
	require.GreaterOrEqual(t, fin.Stall.IdleMs, int64(1500))
	require.Len(t, e.workloads(job), 1, "never retried")

	// The next stall this worker reports is its connection's second
	// observation.
	next := e.newJob(1)
	next.StallTimeoutMs = 1500
	e.publish(next)
	fin2 := e.waitReport(events.ReportFinished, next.ExecutionID)
	require.NoError(t, fin2.Validate())
	require.NotNil(t, fin2.Stall)
	require.NotNil(t, fin2.Stall.HealthObservationSeq)
	require.Equal(t, uint64(2), *fin2.Stall.HealthObservationSeq)
}
