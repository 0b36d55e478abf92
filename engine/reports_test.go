package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestReportsDriveFallbackToComplete applies worker reports by hand: a
// claimed and a finished report become claim and finish; the primary's
// usage exhaustion (a real receipt from the runner and the simulated CLI)
// records the exhausted group and launches the fallback, whose complete
// receipt completes the lane and closes the run. The report names the
// primary, the failed attempt's observed cause and the successful
// descriptor, and replay reproduces every decision.
func TestReportsDriveFallbackToComplete(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)

	primary := h.nextJob(events.JobSubject("codex"))
	h.execute(primary, "usage-exhausted")
	h.report(primary, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	h.report(primary, events.ReportFinished)

	fallback := h.nextJob(events.JobSubject("cursor"))
	require.NotEqual(t, primary.ExecutionID, fallback.ExecutionID)
	require.Equal(t, 1, fallback.AttemptIndex)
	h.execute(fallback, "success")
	h.report(fallback, events.ReportClaimed)
	h.report(fallback, events.ReportFinished)

	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Equal(t, []policy.Provider{policy.Codex}, r.Exhausted)
	require.Equal(t, []events.Type{
		events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeComplete,
	}, types(onLane(envs, 0)))
	require.Equal(t, []events.Type{events.TypeRunCreated, events.TypeGroupExhausted, events.TypeRunFinal}, types(onLane(envs, events.RunLane)))
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.Equal(t, policy.OutcomeUsageExhausted, fin.Event.Status)
	require.Equal(t, policy.StatusUsageExhausted, fin.Receipt.Status)

	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	require.True(t, rep.Final)
	lane := rep.Lanes[0]
	require.Equal(t, "codex:gpt-5.6-sol@high", lane.Primary)
	require.Equal(t, "cursor:composer-2.5@default", lane.Success)
	require.Len(t, lane.Attempts, 2)
	require.Equal(t, policy.OutcomeUsageExhausted, lane.Attempts[0].Outcome)
	require.Contains(t, lane.Attempts[0].Cause, "usage-exhausted")
	require.Equal(t, policy.OutcomeComplete, lane.Attempts[1].Outcome)
	require.Equal(t, []policy.Provider{policy.Cursor}, rep.Diversity.Providers)
	require.Contains(t, rep.Text(), "complete via cursor:composer-2.5@default")
	h.verifyReplay(run)
}

// TestStaleAndDuplicateReportsAreAudited proves that a report that changes
// nothing (a second claim, a report naming another execution, a repeated
// finish) is recorded as audit and moves no lane.
func TestStaleAndDuplicateReportsAreAudited(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high, cursor:composer-2.5@default"), "arena runners", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("codex"))
	other := h.nextJob(events.JobSubject("cursor"))

	h.report(job, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	other.Lane = 0 // lane 0 does not run the other lane's execution
	h.report(job, events.ReportClaimed, func(r *events.Report) { r.WorkerID = "second-worker" })
	h.report(other, events.ReportClaimed)
	envs := h.waitType(run, events.TypeAudit, 2)
	reasons := []events.AuditReason{}
	for _, e := range ofType(envs, events.TypeAudit) {
		reasons = append(reasons, e.Payload.(events.Audit).Reason)
	}
	require.Equal(t, []events.AuditReason{events.AuditDuplicateReport, events.AuditStaleReport}, reasons)
	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, machines.StateRunning, st.Lanes[0].State)
	require.Equal(t, "test-worker", st.Lanes[0].WorkerID, "the first claim stands")
	require.Equal(t, machines.StateLaunching, st.Lanes[1].State)

	h.execute(job, "success")
	h.report(job, events.ReportFinished)
	h.waitLane(run, 0, machines.StateComplete)
	h.report(job, events.ReportFinished, func(r *events.Report) { r.WorkerID = "second-worker" })
	envs = h.waitType(run, events.TypeAudit, 3)
	last := ofType(envs, events.TypeAudit)[2].Payload.(events.Audit)
	require.Equal(t, events.AuditLateReport, last.Reason, "a report for a final lane is late")
	require.Len(t, ofType(onLane(envs, 0), events.TypeFinish), 1, "one finish per execution")
	h.verifyReplay(run)
}

// TestAbandonedAttemptFailsAndIsNeverRelaunched proves an abandoned report
// finishes the attempt failed with processStarted unknown: the lane stops
// and no job is published again for it.
func TestAbandonedAttemptFailsAndIsNeverRelaunched(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet(`# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure","deadline-exceeded"]}`,
		"bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("codex"))
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportAbandoned)
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateStopped, r.Lanes[0].State)
	require.Equal(t, string(policy.StopNotEligible), r.Lanes[0].Reason)
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.True(t, fin.Abandoned)
	require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
	require.Nil(t, fin.Event.ProcessStarted)
	h.noJob(run, events.JobSubject("cursor"))
	h.noJob(run, events.JobSubject("codex"))
	h.verifyReplay(run)
}

// TestWaitReportsLaneChanges proves Wait delivers one change per lane
// state change, with a progress notice before the fallback, and returns
// the final report.
func TestWaitReportsLaneChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	type result struct {
		rep engine.RunReport
		err error
	}
	var changes []engine.LaneChange
	done := make(chan result, 1)
	go func() {
		rep, err := h.eng.Wait(context.Background(), run, func(c engine.LaneChange) { changes = append(changes, c) })
		done <- result{rep, err}
	}()
	primary := h.nextJob(events.JobSubject("codex"))
	h.execute(primary, "usage-exhausted")
	h.report(primary, events.ReportFinished)
	fallback := h.nextJob(events.JobSubject("cursor"))
	h.execute(fallback, "success")
	h.report(fallback, events.ReportFinished)
	res := <-done
	require.NoError(t, res.err)
	require.True(t, res.rep.Final)
	var to []machines.State
	var notice string
	for _, c := range changes {
		to = append(to, c.To)
		if c.Notice != "" {
			notice = c.Notice
		}
	}
	require.Equal(t, []machines.State{machines.StateLaunching, machines.StateTerminal, machines.StateLaunching, machines.StateTerminal, machines.StateComplete}, to)
	require.Contains(t, notice, "codex:gpt-5.6-sol@high ended usage-exhausted: ")
	require.Contains(t, notice, "falls back to cursor:composer-2.5@default")
}

// TestUnusableReceiptFinishesFailed proves a finished report whose receipt
// cannot back an outcome (its digest differs from the report's, or it is
// another descriptor's receipt) is explained by an audit and finishes the
// attempt failed, so the lane stops instead of waiting forever, and replay
// still verifies.
func TestUnusableReceiptFinishesFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		execute     func(h *harness, job events.Job)
		report      func(*events.Report)
		withReceipt bool
		detail      string
	}{
		{"digest differs from the report", func(h *harness, job events.Job) { h.execute(job, "success") },
			func(r *events.Report) { r.ReceiptDigest = events.Digest([]byte("other bytes")) }, false, "digest"},
		{"another descriptor's receipt", func(h *harness, job events.Job) {
			job.Model = "gpt-5.6-luna"
			h.execute(job, "success")
		}, func(*events.Report) {}, true, "normalize receipt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, memory)
			h.run()
			run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
			job := h.nextJob(events.JobSubject("codex"))
			tc.execute(h, job)
			h.report(job, events.ReportFinished, tc.report)
			r, envs := h.waitFinal(run)
			require.Equal(t, machines.StateStopped, r.Lanes[0].State)
			audits := ofType(envs, events.TypeAudit)
			require.Len(t, audits, 1)
			require.Equal(t, events.AuditMalformedReport, audits[0].Payload.(events.Audit).Reason)
			require.Contains(t, audits[0].Payload.(events.Audit).Detail, tc.detail)
			fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
			require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
			require.Equal(t, tc.withReceipt, fin.Receipt != nil)
			h.noJob(run, events.JobSubject("cursor"))
			h.verifyReplay(run)
		})
	}
}

// TestNotEligibleStopSaysWhy (issue 28, finding 12): a not-eligible stop
// names its cause in status, the report and the run's lane changes,
// where the policy decision keeps its contract reason: an abandoned
// attempt and a plain failure read differently.
func TestNotEligibleStopSaysWhy(t *testing.T) {
	t.Parallel()
	row := "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"
	for _, tc := range []struct {
		name string
		end  func(h *harness, job events.Job)
		want string
	}{
		{"abandoned", func(h *harness, job events.Job) {
			h.report(job, events.ReportClaimed)
			h.report(job, events.ReportAbandoned)
		}, "not-eligible: attempt 0 codex:gpt-5.6-sol@high was abandoned (its worker went away without a usable receipt); it may have started, so it is not run again and the lane does not fall back"},
		{"failed", func(h *harness, job events.Job) { h.finishWith(job, "malformed") },
			"not-eligible: attempt 0 codex:gpt-5.6-sol@high failed (malformed-output); a failure is not an outcome # fallback moves on from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, memory)
			h.run()
			run := h.submit(sheet(`# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure"]}`, row), "bug-fix", policy.ReadOnly)
			tc.end(h, h.nextJob(events.JobSubject("codex")))
			rep, changes := h.wait(run)
			require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
			require.Equal(t, tc.want, rep.Lanes[0].Reason, "report")
			st, err := h.eng.Status(context.Background(), run)
			require.NoError(t, err)
			require.Equal(t, tc.want, st.Lanes[0].Reason, "status")
			last := changes[len(changes)-1]
			require.Equal(t, tc.want, last.Reason, "lane change")
			envs, err := h.store.LoadRun(context.Background(), run)
			require.NoError(t, err)
			notes := engine.HistoryNotes(envs)
			found := false
			for _, n := range notes {
				found = found || n == "lane stopped: stop "+tc.want
			}
			require.True(t, found, "history note among %q", notes)
		})
	}
}
