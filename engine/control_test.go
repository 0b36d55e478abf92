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
// cancelled receipt, records it as a late report, and only then closes.
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
	require.Equal(t, events.AuditLateReport, a.Reason)
	require.Contains(t, a.Detail, "receipt cancelled")
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Equal(t, machines.StateCancelled, rep.Lanes[0].State)
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "cancelled by the parent")
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "receipt cancelled")
	h.noJob(run, events.JobSubject("cursor"))
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
