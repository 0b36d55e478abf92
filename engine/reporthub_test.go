package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// reportConsumers is how many consumers the reports stream has now.
func reportConsumers(t *testing.T, srv *events.Embedded) int {
	t.Helper()
	js, err := srv.Conn().JetStream()
	require.NoError(t, err)
	info, err := js.StreamInfo(events.ReportsStream)
	require.NoError(t, err)
	return info.State.Consumers
}

// waitConsumers waits until the reports stream has want consumers.
func waitConsumers(t *testing.T, srv *events.Embedded, want int, why string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := reportConsumers(t, srv)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the reports stream has %d consumers, want %d", why, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDriversShareOneReportsWatch: the drivers of live runs are handed
// their reports by the engine's one watch of every run's reports. However
// many runs wait for their workers, the reports stream has that one
// consumer, not one more per run, and each run's reports still drive it to
// final, recorded with their sequences.
func TestDriversShareOneReportsWatch(t *testing.T) {
	t.Parallel()
	h, srv := listeningHarness(t)
	h.run()
	const n = 3
	var runs []string
	var jobs []events.Job
	for range n {
		run, job := h.submitOneLane()
		runs, jobs = append(runs, run), append(jobs, job)
	}
	// Every driver subscribed before it published its job.
	waitConsumers(t, srv, 1, "three runs wait for their workers")
	for i, job := range jobs {
		h.execute(job, "success")
		claimed := h.report(job, events.ReportClaimed)
		finished := h.report(job, events.ReportFinished)
		_, envs := h.waitFinal(runs[i])
		require.Equal(t, claimed, ofType(envs, events.TypeClaim)[0].ReportSeq(), dump(envs))
		require.Equal(t, finished, ofType(envs, events.TypeFinish)[0].ReportSeq(), dump(envs))
	}
	waitConsumers(t, srv, 1, "every run is final")
}

// TestResumedRunReadsReportsStoredWhileNoEngineRan: a report stored while
// no engine ran lies before the new engine's watch of every run's reports,
// so the driver of its run reads it with the run's own consumer; a run
// resumed with no such report is served by the watch alone. Both runs then
// complete, every report recorded once with its sequence.
func TestResumedRunReadsReportsStoredWhileNoEngineRan(t *testing.T) {
	t.Parallel()
	h, srv := listeningHarness(t)
	stop := h.run()
	runA, jobA := h.submitOneLane()
	runB, jobB := h.submitOneLane()
	stop()

	claimedA := h.report(jobA, events.ReportClaimed)
	h.startEngine()
	envs := h.waitType(runA, events.TypeClaim, 1)
	require.Equal(t, claimedA, ofType(envs, events.TypeClaim)[0].ReportSeq())
	// The watch, and run A's own consumer; run B has none.
	waitConsumers(t, srv, 2, "run A caught up, run B waits")

	h.execute(jobA, "success")
	h.execute(jobB, "success")
	finishedA := h.report(jobA, events.ReportFinished)
	claimedB := h.report(jobB, events.ReportClaimed)
	finishedB := h.report(jobB, events.ReportFinished)
	for run, want := range map[string][2]uint64{runA: {claimedA, finishedA}, runB: {claimedB, finishedB}} {
		_, envs := h.waitFinal(run)
		claims, finishes := ofType(envs, events.TypeClaim), ofType(envs, events.TypeFinish)
		require.Len(t, claims, 1, dump(envs))
		require.Len(t, finishes, 1, dump(envs))
		require.Equal(t, want, [2]uint64{claims[0].ReportSeq(), finishes[0].ReportSeq()}, dump(envs))
		require.Empty(t, ofType(envs, events.TypeAudit), dump(envs))
	}
}
