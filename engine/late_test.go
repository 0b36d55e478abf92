package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// lateAudits returns the audits recorded after run-final, in log order.
func lateAudits(t *testing.T, envs []events.Envelope) []events.Audit {
	t.Helper()
	var out []events.Audit
	closed := false
	for _, env := range envs {
		if env.Type == events.TypeRunFinal {
			closed = true
			continue
		}
		if !closed {
			continue
		}
		require.Equal(t, events.TypeAudit, env.Type, "only audits follow run-final")
		require.Equal(t, events.RunLane, env.Lane, "late audits go on the run subject")
		out = append(out, env.Payload.(events.Audit))
	}
	return out
}

// TestReportsAfterRunFinalAreAudited: once a run is final, every report or
// control that reaches it — while the engine runs, or while none does —
// becomes exactly one audit event after run-final, with its reason and
// report sequence, across engine restarts; no lane changes and replay
// still verifies. run-final records how far the driver read.
func TestReportsAfterRunFinalAreAudited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, srv := listeningHarness(t)
	stop := h.run()
	run, job := h.submitOneLane()
	h.execute(job, "success")
	h.report(job, events.ReportClaimed)
	finished := h.report(job, events.ReportFinished)
	_, before := h.waitFinal(run)
	closed := ofType(before, events.TypeRunFinal)[0].Payload.(events.RunFinal)
	require.Equal(t, finished, closed.ReportsThrough, "run-final records the last report its driver read")

	// While the engine runs: a finished report from another worker, a
	// claimed report, a control and bytes that are no report.
	seqs := []uint64{
		h.report(job, events.ReportFinished, func(r *events.Report) { r.WorkerID = "slow-worker" }),
		h.report(job, events.ReportClaimed, func(r *events.Report) { r.WorkerID = "slow-worker" }),
	}
	cs, err := h.queue.(events.ControlQueue).PublishControl(ctx, events.Control{ID: "late-cancel", Kind: events.ControlCancel,
		Run: run, Lane: events.RunLane, Cancel: &events.Cancel{Reason: "too late", By: "test"}, Time: time.Now()})
	require.NoError(t, err)
	seqs = append(seqs, cs)
	js, err := srv.Conn().JetStream()
	require.NoError(t, err)
	ack, err := js.Publish(events.ReportSubject(run, 0), []byte(`{"not":"a report"}`))
	require.NoError(t, err)
	seqs = append(seqs, ack.Sequence)
	envs := h.waitType(run, events.TypeAudit, 4)
	audits := lateAudits(t, envs)
	require.Len(t, audits, 4, dump(envs))
	for i, want := range []events.AuditReason{events.AuditLateReport, events.AuditLateReport, events.AuditLateReport, events.AuditMalformedReport} {
		require.Equal(t, want, audits[i].Reason, "audit %d", i)
		require.Equal(t, seqs[i], audits[i].ReportSeq, "audit %d", i)
	}
	require.Equal(t, "slow-worker", audits[0].Report.WorkerID)
	require.Equal(t, events.ReportClaimed, audits[1].Report.Kind)
	require.Contains(t, audits[2].Detail, "cancel control for the run arrived after run-final")
	stop()

	// While no engine runs: the job delivered again after its attempt
	// ended. The next engine records it at start.
	redo := h.report(job, events.ReportRedelivered, func(r *events.Report) {
		r.WorkerID, r.JobSeq, r.Delivery = "second-worker", 1, 2
	})
	stop = h.startEngine()
	envs = h.waitType(run, events.TypeAudit, 5)
	audits = lateAudits(t, envs)
	require.Len(t, audits, 5, dump(envs))
	require.Equal(t, events.AuditRedeliveredJob, audits[4].Reason)
	require.Equal(t, redo, audits[4].ReportSeq)
	require.Equal(t, "job (jobs-stream sequence 1) delivered again (delivery 2) after its execution ended; removed by second-worker without starting anything", audits[4].Detail)
	stop()

	// A third engine records nothing twice: only the report sent after it
	// started is added.
	stop = h.startEngine()
	last := h.report(job, events.ReportRedelivered, func(r *events.Report) {
		r.WorkerID, r.JobSeq, r.Delivery = "third-worker", 7, 1 // a copy a restarted engine published again
	})
	envs = h.waitType(run, events.TypeAudit, 6)
	stop()
	envs, err = h.store.LoadRun(ctx, run)
	require.NoError(t, err)
	audits = lateAudits(t, envs)
	require.Len(t, audits, 6, dump(envs))
	require.Equal(t, last, audits[5].ReportSeq)
	require.Equal(t, "job published again (jobs-stream sequence 7) after its execution ended; removed by third-worker without starting anything", audits[5].Detail)
	for i := 1; i < len(audits); i++ {
		require.Greater(t, audits[i].ReportSeq, audits[i-1].ReportSeq, "each report once, in order")
	}

	r, err := machines.FoldRun(envs)
	require.NoError(t, err)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Equal(t, before, envs[:len(before)], "nothing before run-final changed")
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, map[events.AuditReason]int{events.AuditLateReport: 3, events.AuditMalformedReport: 1, events.AuditRedeliveredJob: 2}, st.Audits)
	h.verifyReplay(run)
}

// TestReportsStoredBeforeRunFinalButUnreadAreAudited: a report stored
// after the one that finishes the run, while no engine ran, is never read
// by the driver (it records run-final as soon as the last lane is final);
// the catch-up that follows run-final records it.
func TestReportsStoredBeforeRunFinalButUnreadAreAudited(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	stop := h.run()
	run, job := h.submitOneLane()
	h.report(job, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	stop()

	h.execute(job, "success")
	finished := h.report(job, events.ReportFinished)
	dup := h.report(job, events.ReportClaimed, func(r *events.Report) { r.WorkerID = "other-worker" })
	stop = h.startEngine()
	envs := h.waitType(run, events.TypeAudit, 1)
	stop()
	r, err := machines.FoldRun(envs)
	require.NoError(t, err)
	require.Equal(t, finished, r.Closed.ReportsThrough)
	audits := lateAudits(t, envs)
	require.Len(t, audits, 1, dump(envs))
	require.Equal(t, events.AuditLateReport, audits[0].Reason)
	require.Equal(t, dup, audits[0].ReportSeq)
	require.Equal(t, "other-worker", audits[0].Report.WorkerID)
	h.verifyReplay(run)
}

// TestLateReportsWithTwoEnginesAreRecordedOnce: two engines drive the same
// store; each sees every late report and catches the run up, and the run
// subject's expected sequence lets only one of them record each report.
func TestLateReportsWithTwoEnginesAreRecordedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	stopA := h.startEngine()
	defer stopA()
	stopB := h.startEngine()
	defer stopB()
	run, job := h.submitOneLane()
	h.execute(job, "success")
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportFinished)
	h.waitFinal(run)

	const n = 20
	var seqs []uint64
	for i := range n {
		seqs = append(seqs, h.report(job, events.ReportRedelivered, func(r *events.Report) {
			r.WorkerID, r.JobSeq, r.Delivery = "late-worker", 1, uint64(i+2)
		}))
	}
	h.waitType(run, events.TypeAudit, n)
	// A second recording, if one were possible, is made by an engine
	// behind the one that recorded first. Stop A (its Run has returned: it
	// writes nothing more), then a sentinel report recorded by B proves B
	// has read past all n: the log is settled for them.
	stopA()
	sentinel := h.report(job, events.ReportRedelivered, func(r *events.Report) {
		r.WorkerID, r.JobSeq, r.Delivery = "sentinel-worker", 1, n+2
	})
	h.waitAudit(run, sentinel)
	envs, err := h.store.LoadRun(ctx, run)
	require.NoError(t, err)
	var got []uint64
	for _, a := range lateAudits(t, envs) {
		require.Equal(t, events.AuditRedeliveredJob, a.Reason)
		got = append(got, a.ReportSeq)
	}
	require.Equal(t, append(seqs, sentinel), got, "every report once, in order")
	h.verifyReplay(run)
}

// waitAudit waits for the audit recording the report at seq and returns
// it with the lane it was recorded on.
func (h *harness) waitAudit(run string, seq uint64) (events.Audit, int) {
	h.t.Helper()
	_, envs := h.waitRun(run, fmt.Sprintf("the audit of report %d", seq), func(_ *machines.Run, envs []events.Envelope) bool {
		for _, e := range ofType(envs, events.TypeAudit) {
			if e.Payload.(events.Audit).ReportSeq == seq {
				return true
			}
		}
		return false
	})
	for _, e := range ofType(envs, events.TypeAudit) {
		if a := e.Payload.(events.Audit); a.ReportSeq == seq {
			return a, e.Lane
		}
	}
	panic("unreachable")
}

// TestRedeliveredJobsWhileTheRunIsLive: a job delivered again after its
// execution ended is recorded as redelivered-job (with the worker's
// explanation) while the run is still live, not only after run-final:
// first for lane 0's first execution while lane 0 runs its fallback (the
// lane is running another execution), then for the fallback's execution
// once lane 0 is complete and lane 1 is still running. Neither moves a
// lane, and replay still verifies.
func TestRedeliveredJobsWhileTheRunIsLive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(panelSheet, "arena runners", policy.ReadOnly)
	codex := h.nextJob(events.JobSubject("codex"))
	claude := h.nextJob(events.JobSubject("claude"))

	h.execute(codex, "usage-exhausted")
	h.report(codex, events.ReportClaimed)
	h.report(codex, events.ReportFinished)
	cursor := h.nextJob(events.JobSubject("cursor"))
	h.waitRun(run, "lane 0 launching its fallback", func(r *machines.Run, _ []events.Envelope) bool {
		l := r.Lanes[0]
		return l.State == machines.StateLaunching && l.Dispatch != nil && l.Dispatch.ExecutionID == cursor.ExecutionID
	})

	// Lane 0 runs its fallback: the primary's job comes back.
	first := h.report(codex, events.ReportRedelivered, func(r *events.Report) {
		r.WorkerID, r.JobSeq, r.Delivery = "second-worker", 1, 2
	})
	a, lane := h.waitAudit(run, first)
	require.Equal(t, 0, lane)
	require.Equal(t, events.AuditRedeliveredJob, a.Reason, a.Detail)
	require.Equal(t, codex.ExecutionID, a.ExecutionID)
	require.Equal(t, "job (jobs-stream sequence 1) delivered again (delivery 2) after its execution ended; removed by second-worker without starting anything", a.Detail)

	// Lane 0 is complete, lane 1 still runs: the fallback's job comes back.
	h.execute(cursor, "success")
	h.report(cursor, events.ReportClaimed)
	h.report(cursor, events.ReportFinished)
	h.waitLane(run, 0, machines.StateComplete)
	second := h.report(cursor, events.ReportRedelivered, func(r *events.Report) {
		r.WorkerID, r.JobSeq, r.Delivery = "third-worker", 3, 1
	})
	a, lane = h.waitAudit(run, second)
	require.Equal(t, 0, lane)
	require.Equal(t, events.AuditRedeliveredJob, a.Reason, a.Detail)
	require.Equal(t, cursor.ExecutionID, a.ExecutionID)
	require.Equal(t, "job published again (jobs-stream sequence 3) after its execution ended; removed by third-worker without starting anything", a.Detail)

	envs, err := h.store.LoadRun(context.Background(), run)
	require.NoError(t, err)
	r, err := machines.FoldRun(envs)
	require.NoError(t, err)
	require.Nil(t, r.Closed, "the run is live")
	require.Equal(t, machines.StateLaunching, r.Lanes[1].State, dump(envs))

	h.execute(claude, "usage-exhausted")
	h.report(claude, events.ReportClaimed)
	h.report(claude, events.ReportFinished)
	r, envs = h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Equal(t, machines.StateStopped, r.Lanes[1].State)
	require.Len(t, ofType(envs, events.TypeAudit), 2, dump(envs))
	h.verifyReplay(run)
}
