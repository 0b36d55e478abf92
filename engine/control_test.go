package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// TestVerdictGatesStartedWriter proves that a writer whose started
// attempt ended usage-exhausted pauses for inspection in its own fresh
// worktree; a verdict sent before that is refused; clear launches the next
// descriptor in another fresh worktree (the failed one kept), unsafe stops
// the lane.
func TestVerdictGatesStartedWriter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state events.VerdictState
		want  machines.State
	}{
		{events.VerdictClear, machines.StateComplete},
		{events.VerdictUnsafe, machines.StateStopped},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newHarness(t, memory)
			h.run()
			run := h.submitUnrestricted(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.IsolatedWrite, policy.Cursor)
			job := h.nextJob(events.JobSubject("codex"))
			require.NotEmpty(t, job.Paths.Worktree)
			require.Equal(t, job.Paths.Worktree, job.Paths.Cwd, "a writer runs in its worktree, never the checkout")
			require.True(t, strings.HasPrefix(job.Paths.Worktree, filepath.Join(h.data, "worktrees")))
			require.FileExists(t, filepath.Join(job.Paths.Worktree, "README.md"))

			err := h.eng.Verdict(ctx, run, 0, tc.state, "diff reviewed")
			require.ErrorIs(t, err, engine.ErrNotWaiting, "no verdict before the lane inspects")

			h.execute(job, "usage-exhausted")
			h.report(job, events.ReportFinished)
			h.waitLane(run, 0, machines.StateInspecting)
			st, err := h.eng.Status(ctx, run)
			require.NoError(t, err)
			require.Equal(t, engine.WaitVerdict, st.Lanes[0].WaitingFor)
			h.noJob(run, events.JobSubject("cursor"))

			require.NoError(t, h.eng.Verdict(ctx, run, 0, tc.state, "diff reviewed"))
			if tc.state == events.VerdictClear {
				next := h.nextJob(events.JobSubject("cursor"))
				require.NotEqual(t, job.Paths.Worktree, next.Paths.Worktree, "each writer attempt gets a fresh worktree")
				require.FileExists(t, job.Paths.Receipt, "the failed receipt is kept")
				require.DirExists(t, job.Paths.Worktree, "the failed worktree is kept")
				h.execute(next, "success")
				h.report(next, events.ReportFinished)
			}
			r, envs := h.waitFinal(run)
			require.Equal(t, tc.want, r.Lanes[0].State)
			v := ofType(envs, events.TypeVerdict)
			require.Len(t, v, 1)
			require.Equal(t, "parent", v[0].Payload.(events.Verdict).By)
			if tc.state == events.VerdictUnsafe {
				require.Equal(t, string(policy.StopUnsafeWriter), r.Lanes[0].Reason)
			}
			h.verifyReplay(run)
		})
	}
}

// TestOperationDoneAnswersHandoff proves a delivered handoff waits for the
// parent operation it asked for, and that the recorded result is what the
// next decision reads (without a # continuation the lane then stops).
func TestOperationDoneAnswersHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "judgment and prose: claude:sonnet@low"), "judgment and prose", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("claude"))
	require.ErrorIs(t, h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, "c0ffee"), engine.ErrNotWaiting)
	h.execute(job, "handoff")
	h.report(job, events.ReportFinished)
	h.waitLane(run, 0, machines.StateAwaitingOperation)
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, engine.WaitOperation, st.Lanes[0].WaitingFor)
	require.Equal(t, &policy.Operation{Kind: policy.OpCommitCheckpoint, TaskID: "T-1", CheckpointID: "C-1", Ref: "Updated the README heading."}, st.Lanes[0].Operation)

	commit := h.operate(run, 0)
	r, envs := h.waitFinal(run)
	done := ofType(envs, events.TypeOperationDone)
	require.Len(t, done, 1)
	require.Equal(t, "T-1", done[0].Payload.(events.OperationDone).Operation.TaskID)
	require.Equal(t, machines.StateStopped, r.Lanes[0].State)
	require.Equal(t, string(policy.DenyNoContinuation), r.Lanes[0].Reason)
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Contains(t, rep.Lanes[0].Attempts[0].Operation, "succeeded ("+commit+")")
	h.verifyReplay(run)
}

// TestCancelRunningLaneWaitsForItsReceipt proves a lane cancelled while its
// attempt runs is final at once, that the run waits for the attempt's
// cancelled receipt, records it as the report a cancel leads to
// (report-after-cancel, not late-report), and only then closes.
func TestCancelRunningLaneWaitsForItsReceipt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("codex"))
	h.report(job, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)

	require.NoError(t, h.eng.Cancel(ctx, run, 0, "user changed plans"))
	r := h.waitLane(run, 0, machines.StateCancelled)
	require.Nil(t, r.Closed, "run-final waits for the running attempt's report")
	require.ErrorIs(t, h.eng.Cancel(ctx, run, 0, "again"), engine.ErrFinal)

	executeCancelled(t, job)
	h.report(job, events.ReportFinished)
	_, envs := h.waitFinal(run)
	audits := ofType(envs, events.TypeAudit)
	require.Len(t, audits, 1)
	a := audits[0].Payload.(events.Audit)
	require.Equal(t, events.AuditReportAfterCancel, a.Reason, "the cancelled attempt's own report is expected, not late")
	require.Contains(t, a.Detail, "receipt cancelled")
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Equal(t, machines.StateCancelled, rep.Lanes[0].State)
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "cancelled by the parent")
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "receipt cancelled")
	h.noJob(run, events.JobSubject("cursor"))
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, map[events.AuditReason]int{events.AuditReportAfterCancel: 1}, st.Audits)
	h.verifyReplay(run)
}

// TestReportAfterCancelNamesOnlyTheCancelledExecution proves that only the
// report of the execution a cancel stopped is report-after-cancel: on a
// lane cancelled while its fallback ran, a report for the earlier
// (finished) execution is still late-report, and the fallback's own
// cancelled receipt is report-after-cancel; the run then closes and
// replay verifies.
func TestReportAfterCancelNamesOnlyTheCancelledExecution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)
	primary := h.nextJob(events.JobSubject("codex"))
	h.execute(primary, "usage-exhausted")
	h.report(primary, events.ReportClaimed)
	h.report(primary, events.ReportFinished)
	fallback := h.nextJob(events.JobSubject("cursor"))
	h.report(fallback, events.ReportClaimed)
	h.waitLane(run, 0, machines.StateRunning)
	require.NoError(t, h.eng.Cancel(ctx, run, 0, "user changed plans"))
	h.waitLane(run, 0, machines.StateCancelled)

	older := h.report(primary, events.ReportFinished, func(r *events.Report) { r.WorkerID = "second-worker" })
	envs := h.waitType(run, events.TypeAudit, 1)
	a := ofType(envs, events.TypeAudit)[0].Payload.(events.Audit)
	require.Equal(t, events.AuditLateReport, a.Reason, "a report for the execution before the cancelled one is late")
	require.Equal(t, older, a.ReportSeq)
	require.Equal(t, primary.ExecutionID, a.ExecutionID)

	executeCancelled(t, fallback)
	own := h.report(fallback, events.ReportFinished)
	_, envs = h.waitFinal(run)
	audits := ofType(envs, events.TypeAudit)
	require.Len(t, audits, 2)
	a = audits[1].Payload.(events.Audit)
	require.Equal(t, events.AuditReportAfterCancel, a.Reason)
	require.Equal(t, own, a.ReportSeq)
	require.Equal(t, fallback.ExecutionID, a.ExecutionID)
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, map[events.AuditReason]int{events.AuditLateReport: 1, events.AuditReportAfterCancel: 1}, st.Audits)
	h.verifyReplay(run)
}

// TestReportAfterCancelNeedsAnExecutionTheCancelStopped proves a lane
// cancelled after its execution ended (awaiting the parent's operation)
// records a repeated report of that execution as late-report: the cancel
// stopped nothing, so no report is expected after it.
func TestReportAfterCancelNeedsAnExecutionTheCancelStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "arena runners: claude:sonnet@low, codex:gpt-5.6-sol@high"), "arena runners", policy.ReadOnly)
	ended := h.nextJob(events.JobSubject("claude"))
	running := h.nextJob(events.JobSubject("codex"))
	h.execute(ended, "handoff")
	h.report(ended, events.ReportClaimed)
	h.report(ended, events.ReportFinished)
	h.waitLane(run, ended.Lane, machines.StateAwaitingOperation)
	h.report(running, events.ReportClaimed)
	h.waitLane(run, running.Lane, machines.StateRunning)
	require.NoError(t, h.eng.Cancel(ctx, run, ended.Lane, "parent moved on"))
	h.waitLane(run, ended.Lane, machines.StateCancelled)

	h.report(ended, events.ReportFinished, func(r *events.Report) { r.WorkerID = "second-worker" })
	envs := h.waitType(run, events.TypeAudit, 1)
	a := ofType(envs, events.TypeAudit)[0].Payload.(events.Audit)
	require.Equal(t, events.AuditLateReport, a.Reason, "the cancel stopped no execution of this lane")
	require.Equal(t, ended.ExecutionID, a.ExecutionID)

	require.NoError(t, h.eng.Cancel(ctx, run, running.Lane, "parent moved on"))
	executeCancelled(t, running)
	h.report(running, events.ReportFinished)
	_, envs = h.waitFinal(run)
	audits := ofType(envs, events.TypeAudit)
	require.Len(t, audits, 2)
	require.Equal(t, events.AuditReportAfterCancel, audits[1].Payload.(events.Audit).Reason)
	h.verifyReplay(run)
}

// TestCancelRunCancelsEveryLane proves a run-level cancel is recorded on
// the run and then on every lane that is not final.
func TestCancelRunCancelsEveryLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high, cursor:composer-2.5@default"), "arena runners", policy.ReadOnly)
	h.waitType(run, events.TypeLaunch, 2)
	require.NoError(t, h.eng.Cancel(ctx, run, events.RunLane, "abort"))
	r, envs := h.waitFinal(run)
	require.NotNil(t, r.Cancel)
	for i := range r.Lanes {
		require.Equal(t, machines.StateCancelled, r.Lanes[i].State)
		require.Equal(t, "abort", r.Lanes[i].Reason)
	}
	require.Len(t, ofType(envs, events.TypeCancel), 3, "one run-level and one per lane")
	require.ErrorIs(t, h.eng.Cancel(ctx, run, events.RunLane, "again"), engine.ErrFinal)
	require.ErrorIs(t, h.eng.Verdict(ctx, run, 0, events.VerdictClear, "x"), engine.ErrFinal)
	h.verifyReplay(run)
}

// executeCancelled runs job's attempt with a context that is already done,
// which the runner records as a cancelled receipt.
func executeCancelled(t *testing.T, job events.Job) {
	t.Helper()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{string(job.Provider): "long-running"}))
	r, err := runner.New(runner.Config{
		Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": t.TempDir()},
		Stdout: discard{}, Stderr: discard{},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Main(ctx, runnerArgs(job))
	b, err := os.ReadFile(job.Paths.Receipt)
	require.NoError(t, err)
	rc, err := policy.DecodeReceipt(b)
	require.NoError(t, err)
	require.Equal(t, policy.StatusCancelled, rc.Status)
}
