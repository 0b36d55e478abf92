package machines_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// next asks policy.Next for lane i of the folded run: the fold's LaneState
// is what the engine hands the policy.
func next(t *testing.T, r *machines.Run, i int) policy.Decision {
	t.Helper()
	st, err := r.LaneState(i)
	require.NoError(t, err)
	return policy.Next(r.Lanes[i].Policy, st, nil)
}

func fold(t *testing.T, l *runLog) *machines.Run {
	t.Helper()
	r, err := machines.FoldRun(l.envs)
	require.NoError(t, err)
	return r
}

// TestRunExhaustionIsSeenByEveryLane: lane 0's primary hits usage
// exhaustion, the group is recorded once for the run, and both lanes' next
// decisions skip it.
func TestRunExhaustionIsSeenByEveryLane(t *testing.T) {
	t.Parallel()
	usage := policy.OutcomeUsageExhausted
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1", usage), lanePolicy("lane#2", usage)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).
		add(0, finishP("e1", outcome(0, usage, true))).
		add(events.RunLane, exhaustedP(policy.Claude, 0, "e1"))

	r := fold(t, l)
	assert.Equal(t, "run-1", r.ID)
	assert.Equal(t, []policy.Provider{policy.Claude}, r.Exhausted)
	assert.Equal(t, machines.StateTerminal, r.Lanes[0].State)
	assert.Equal(t, machines.StateCreated, r.Lanes[1].State)
	for i := range r.Lanes {
		d := next(t, r, i)
		require.Equal(t, policy.DecideLaunch, d.Kind, "lane %d", i)
		assert.Equal(t, 1, *d.AttemptIndex, "lane %d skips the exhausted claude group", i)
	}
	st, err := r.LaneState(0)
	require.NoError(t, err)
	assert.Equal(t, policy.LaneState{
		Events:          []policy.Event{outcome(0, usage, true)},
		ExhaustedGroups: []policy.Provider{policy.Claude},
		Access:          policy.ReadOnly,
	}, st)

	l.add(0, launchP(1, "e2")).add(0, claimP("e2")).add(0, finishP("e2", outcome(1, policy.OutcomeComplete, true))).
		add(events.RunLane, exhaustedP(policy.Claude, 0, "e1")). // a second exhaustion of the same group
		add(1, launchP(1, "e3")).add(1, claimP("e3")).add(1, finishP("e3", outcome(1, policy.OutcomeComplete, true)))
	r = fold(t, l)
	assert.Equal(t, []policy.Provider{policy.Claude}, r.Exhausted, "a group is listed once")
	for i := range r.Lanes {
		assert.Equal(t, policy.Stop(policy.StopComplete), next(t, r, i))
	}
	assert.False(t, r.Final())

	l.add(0, completeP()).add(1, completeP())
	r = fold(t, l)
	assert.True(t, r.Final())
	assert.Equal(t, "complete", r.Lanes[0].Reason)
	assert.Nil(t, r.Closed)

	l.add(events.RunLane, finalP(events.FinalComplete, events.FinalComplete))
	r = fold(t, l)
	require.NotNil(t, r.Closed)
	assert.Equal(t, uint64(15), r.Seq, "run subject's last sequence")
	assert.Equal(t, uint64(14), r.Lanes[1].Seq)
	assert.Equal(t, uint64(13), r.Lanes[0].Seq)
	assert.Equal(t, "e2", r.Lanes[0].Dispatch.ExecutionID)
	assert.Equal(t, "e2", r.Lanes[0].Claim.ExecutionID)
}

// TestRunWriterInspection: a started writer that failed waits for a
// verdict; clear advances to the next attempt, unsafe stops.
func TestRunWriterInspection(t *testing.T) {
	t.Parallel()
	failed := outcome(0, policy.OutcomeTerminalFailure, true)
	base := func() *runLog {
		return newRunLog(t, policy.IsolatedWrite, lanePolicy("writer#1", policy.OutcomeTerminalFailure)).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", failed))
	}
	r := fold(t, base())
	require.Equal(t, policy.DecideInspect, next(t, r, 0).Kind)

	r = fold(t, base().add(0, inspectP()))
	assert.Equal(t, machines.StateInspecting, r.Lanes[0].State)
	assert.Equal(t, policy.DecideInspect, next(t, r, 0).Kind, "no verdict yet: still inspect")

	for _, tc := range []struct {
		verdict events.VerdictState
		want    policy.Decision
	}{
		{events.VerdictClear, policy.Decision{Kind: policy.DecideLaunch}},
		{events.VerdictUnsafe, policy.Stop(policy.StopUnsafeWriter)},
	} {
		t.Run(string(tc.verdict), func(t *testing.T) {
			t.Parallel()
			r := fold(t, base().add(0, inspectP()).add(0, verdictP(tc.verdict)))
			assert.Equal(t, machines.StateTerminal, r.Lanes[0].State)
			require.Len(t, r.Lanes[0].History, 1)
			assert.Equal(t, &policy.Inspection{State: string(tc.verdict), EvidenceRef: "diff and tool log reviewed"}, r.Lanes[0].History[0].Inspection)
			d := next(t, r, 0)
			assert.Equal(t, tc.want.Kind, d.Kind)
			assert.Equal(t, tc.want.Reason, d.Reason)
			if d.Kind == policy.DecideLaunch {
				assert.Equal(t, 1, *d.AttemptIndex)
			}
		})
	}
}

// TestRunHandoff: a delivered handoff asks for its operation; the
// operation-done event becomes the parentOperation that answers it.
func TestRunHandoff(t *testing.T) {
	t.Parallel()
	delivered := outcome(0, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	base := func() *runLog {
		return newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered))
	}
	r := fold(t, base())
	d := next(t, r, 0)
	require.Equal(t, policy.DecideParentOperation, d.Kind)

	r = fold(t, base().add(0, requestP(0)))
	assert.Equal(t, machines.StateAwaitingOperation, r.Lanes[0].State)
	require.NotNil(t, r.Lanes[0].Request)
	assert.Equal(t, d.Operation, r.Lanes[0].Request.Decision.Operation)

	for _, tc := range []struct {
		result events.OperationResult
		status policy.Outcome
		want   policy.Decision
	}{
		// The lane has no # continuation, so an answered handoff is denied
		// no-continuation; an unanswered one would ask again.
		{events.OperationSucceeded, policy.OutcomeComplete, policy.Deny(policy.DenyNoContinuation)},
		{events.OperationFailed, policy.OutcomeFailed, policy.Stop(policy.StopNotEligible)},
	} {
		t.Run(string(tc.result), func(t *testing.T) {
			t.Parallel()
			r := fold(t, base().add(0, requestP(0)).add(0, opDoneP(tc.result)))
			lane := r.Lanes[0]
			assert.Equal(t, machines.StateTerminal, lane.State)
			assert.Nil(t, lane.Request)
			require.Len(t, lane.History, 2)
			assert.Equal(t, policy.Event{
				AttemptIndex: 0, Status: tc.status,
				ParentOperation: &policy.ParentOperation{Kind: handoff.Operation, TaskID: handoff.TaskID, CheckpointID: handoff.CheckpointID},
			}, lane.History[1])
			assert.Equal(t, tc.want, next(t, r, 0))
		})
	}

	// The engine's continue after a completed operation folds like any
	// dispatch.
	r = fold(t, base().add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded)).
		add(0, continueP(0, "e2", 2)).add(0, claimP("e2")))
	assert.Equal(t, machines.StateRunning, r.Lanes[0].State)
	assert.True(t, r.Lanes[0].Continued)
}

// TestRunCancel: a run-level cancel records the request; each lane then
// ends with its own cancel, and no lane may launch afterwards.
func TestRunCancel(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1"), lanePolicy("lane#2")).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).
		add(events.RunLane, cancelP()).
		add(0, cancelP()).add(1, cancelP()).
		add(0, auditP()) // the cancelled child's late report
	r := fold(t, l)
	require.NotNil(t, r.Cancel)
	assert.Equal(t, machines.StateCancelled, r.Lanes[0].State)
	assert.Equal(t, "operator cancelled", r.Lanes[0].Reason)
	assert.Equal(t, machines.StateCancelled, r.Lanes[1].State)
	assert.Equal(t, uint64(7), r.Lanes[0].Seq, "audit advances the lane subject's sequence")
	assert.True(t, r.Final())

	l2 := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1"), lanePolicy("lane#2")).
		add(events.RunLane, cancelP()).add(1, launchP(0, "e9"))
	_, err := machines.FoldRun(l2.envs)
	assert.ErrorIs(t, err, machines.ErrInconsistent)
	assert.ErrorContains(t, err, "launch after the run was cancelled")
}

func TestRunStopReasons(t *testing.T) {
	t.Parallel()
	r := fold(t, newRunLog(t, policy.ReadOnly, lanePolicy("lane#1"), lanePolicy("lane#2")).
		add(0, stopP(policy.StopUnauthorized)).add(1, deniedP(policy.DenyNoContinuation)))
	assert.Equal(t, machines.StateStopped, r.Lanes[0].State)
	assert.Equal(t, "unauthorized", r.Lanes[0].Reason)
	assert.Equal(t, "no-continuation", r.Lanes[1].Reason)
	assert.Empty(t, r.Lanes[0].History)
}

// TestRunRefusesInconsistentLogs: each log's last envelope is refused with
// a *LogError naming it, and the run is left exactly as the log before it
// folds.
func TestRunRefusesInconsistentLogs(t *testing.T) {
	t.Parallel()
	ro := func(lanes int) *runLog {
		lps := []policy.LanePolicy{lanePolicy("lane#1", policy.OutcomeUsageExhausted)}
		if lanes == 2 {
			lps = append(lps, lanePolicy("lane#2"))
		}
		return newRunLog(t, policy.ReadOnly, lps...)
	}
	running := func() *runLog { return ro(1).add(0, launchP(0, "e1")).add(0, claimP("e1")) }
	finished := func() *runLog { return running().add(0, finishP("e1", outcome(0, policy.OutcomeComplete, true))) }
	inspected := func() *runLog {
		return running().add(0, finishP("e1", outcome(0, policy.OutcomeUsageExhausted, true))).add(0, inspectP()).add(0, verdictP(events.VerdictUnsafe))
	}
	withoutHead := &runLog{t: t}
	withoutHead.add(0, launchP(0, "e1"))
	otherRun := ro(1)
	otherRun.envs = append(otherRun.envs, events.NewEnvelope("run-2", 0, t0, launchP(0, "e1")))
	reordered := running()
	reordered.envs[2].Seq = 1
	laneTypeOnRun := ro(1)
	laneTypeOnRun.envs = append(laneTypeOnRun.envs, events.Envelope{Schema: 1, Type: events.TypeLaunch, Run: runID, Lane: events.RunLane, Time: t0, Payload: launchP(0, "e1")})
	runTypeOnLane := ro(1)
	runTypeOnLane.envs = append(runTypeOnLane.envs, events.Envelope{Schema: 1, Type: events.TypeGroupExhausted, Run: runID, Lane: 0, Time: t0, Payload: exhaustedP(policy.Claude, 0, "e1")})
	mislabelled := ro(1)
	mislabelled.envs = append(mislabelled.envs, events.Envelope{Schema: 1, Type: events.TypeLaunch, Run: runID, Lane: 0, Time: t0, Payload: claimP("e1")})

	for _, tc := range []struct {
		name string
		log  *runLog
		want error
		msg  string
	}{
		{"lane event before run-created", withoutHead, machines.ErrInconsistent, "launch before run-created"},
		{"second run-created", ro(1).add(events.RunLane, ro(1).envs[0].Payload), machines.ErrInconsistent, "a second run-created"},
		{"another run's envelope", otherRun, machines.ErrInconsistent, `envelope of run "run-2"`},
		{"lane out of range", ro(1).add(1, launchP(0, "e1")), machines.ErrInconsistent, "lane 1: the run has 1 lanes"},
		{"impossible transition", ro(1).add(0, claimP("e1")), machines.ErrImpossible, "impossible transition created → running on claim"},
		{"claim of another execution", ro(1).add(0, launchP(0, "e1")).add(0, claimP("e0")), machines.ErrInconsistent, "claim of execution e0 while e1 is dispatched"},
		{"finish of another attempt", running().add(0, finishP("e1", outcome(1, policy.OutcomeComplete, true))), machines.ErrInconsistent, "finish of attempt 1 for a dispatch of attempt 0"},
		{"attempt the lane does not have", ro(1).add(0, launchP(2, "e1")), machines.ErrInconsistent, `attempt 2: lane "lane#1" has 2 attempts`},
		{"execution dispatched twice", ro(2).add(1, launchP(0, "e1")).add(1, finishP("e1", outcome(0, policy.OutcomeUsageExhausted, false))).add(1, launchP(1, "e2")).add(1, finishP("e2", outcome(1, policy.OutcomeUsageExhausted, false))).add(1, launchP(1, "e2")), machines.ErrInconsistent, "execution e2 is dispatched again"},
		{"a second verdict never replaces unsafe", inspected().add(0, inspectP()).add(0, verdictP(events.VerdictClear)), machines.ErrInconsistent, "verdict clear on an outcome that already has verdict unsafe"},
		{"verdict on a parent operation", handoffAnswered(t).add(0, inspectP()).add(0, verdictP(events.VerdictClear)), machines.ErrInconsistent, "verdict with no execution outcome"},
		{"run-final while a lane runs", running().add(events.RunLane, finalP(events.FinalComplete)), machines.ErrInconsistent, "run-final while lane 0 is running"},
		{"run-final misreports a lane", finished().add(0, completeP()).add(events.RunLane, finalP(events.FinalStopped)), machines.ErrInconsistent, "run-final reports lane 0 stopped; it is complete"},
		{"run-final with the wrong lane count", finished().add(0, completeP()).add(events.RunLane, finalP(events.FinalComplete, events.FinalComplete)), machines.ErrInconsistent, "run-final reports 2 lanes"},
		{"event after run-final", finished().add(0, completeP()).add(events.RunLane, finalP(events.FinalComplete)).add(events.RunLane, cancelP()), machines.ErrInconsistent, "only audit may follow"},
		{"event after a final lane", finished().add(0, completeP()).add(0, cancelP()), machines.ErrFinal, "the lane is final"},
		{"sequence goes back", reordered, machines.ErrInconsistent, "sequence 1 does not follow 2"},
		{"lane type at run level", laneTypeOnRun, machines.ErrInconsistent, "launch is a lane event"},
		{"run type on a lane", runTypeOnLane, machines.ErrInconsistent, "group-exhausted is a run-level event"},
		{"type and payload disagree", mislabelled, machines.ErrInconsistent, "type launch carries a events.Claim payload"},
		{"exhaustion from a lane the run lacks", ro(1).add(events.RunLane, exhaustedP(policy.Claude, 3, "e1")), machines.ErrInconsistent, "group-exhausted from lane 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			envs := tc.log.envs
			last := len(envs) - 1
			r, err := machines.FoldRun(envs)
			require.Error(t, err)
			var le *machines.LogError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, last, le.Index, "the last envelope is the refused one")
			assert.Equal(t, envs[last].Type, le.Type)
			assert.Equal(t, envs[last].Lane, le.Lane)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.msg)

			before, err := machines.FoldRun(envs[:last])
			require.NoError(t, err)
			assert.Equal(t, before, r, "a refused envelope leaves the run unchanged")
		})
	}
}

func handoffAnswered(t *testing.T) *runLog {
	delivered := outcome(0, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	return newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered)).
		add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded))
}

// TestRunLaneStateIsACopy: a LaneState taken earlier does not see later
// folds, and editing it does not reach the run.
func TestRunLaneStateIsACopy(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.IsolatedWrite, lanePolicy("writer#1", policy.OutcomeTerminalFailure)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(0, policy.OutcomeTerminalFailure, true))).
		add(0, inspectP())
	r := fold(t, l)
	st, err := r.LaneState(0)
	require.NoError(t, err)

	require.NoError(t, r.Apply(func() events.Envelope {
		env := events.NewEnvelope(runID, 0, t0, verdictP(events.VerdictClear))
		env.Seq = 99
		return env
	}()))
	assert.Nil(t, st.Events[0].Inspection, "the earlier LaneState is unchanged")
	assert.NotNil(t, r.Lanes[0].History[0].Inspection)

	st.Events[0].Status = policy.OutcomeComplete
	st.ExhaustedGroups = append(st.ExhaustedGroups, policy.Codex)
	assert.Equal(t, policy.OutcomeTerminalFailure, r.Lanes[0].History[0].Status)
	assert.Empty(t, r.Exhausted)

	_, err = r.LaneState(5)
	assert.Error(t, err)
	_, err = (&machines.Run{}).LaneState(0)
	assert.Error(t, err)
}

func TestRunZeroValue(t *testing.T) {
	t.Parallel()
	var r machines.Run
	assert.False(t, r.Final(), "a run with no lanes is not final")
	r2, err := machines.FoldRun(nil)
	require.NoError(t, err)
	assert.Equal(t, &machines.Run{}, r2)
}

// BenchmarkFoldRun folds an 18-envelope run: a writer inspected clear,
// a handoff continued, a second lane cancelled.
func BenchmarkFoldRun(b *testing.B) {
	delivered := outcome(1, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	l := newRunLog(b, policy.IsolatedWrite, lanePolicy("writer#1", policy.OutcomeTerminalFailure), lanePolicy("writer#2", policy.OutcomeTerminalFailure)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(0, policy.OutcomeTerminalFailure, true))).
		add(0, inspectP()).add(0, verdictP(events.VerdictClear)).
		add(0, launchP(1, "e2")).add(0, claimP("e2")).add(0, finishP("e2", delivered)).
		add(0, requestP(1)).add(0, opDoneP(events.OperationSucceeded)).
		add(0, continueP(1, "e3", 2)).add(0, claimP("e3")).add(0, finishP("e3", outcome(1, policy.OutcomeComplete, true))).
		add(0, completeP()).
		add(1, launchP(0, "e4")).add(1, claimP("e4")).add(1, cancelP()).
		add(events.RunLane, finalP(events.FinalComplete, events.FinalCancelled))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := machines.FoldRun(l.envs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunRecover: an interrupted outcome names its execution; a recover
// attaches the parent's inspection and recovery to it without a
// transition, once, and only to a terminal lane's handoff or permission
// blockage; the continued execution's outcome is the prepared one.
func TestRunRecover(t *testing.T) {
	t.Parallel()
	delivered := outcome(0, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	answered := func() *runLog {
		return newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered)).
			add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded))
	}
	r := fold(t, answered())
	launch := launchP(0, "e1")
	assert.Equal(t, &policy.ExecutionIdentity{ID: "e1", OutputPath: launch.Paths.Output, ReceiptPath: launch.Paths.Receipt,
		WorkspacePath: "/work/repo", Descriptor: launch.Descriptor, APISpend: lanePolicy("lane#1").Attempts[0].APISpend,
		Access: policy.ReadOnly, Contract: policy.ContractLegacy}, r.Lanes[0].History[0].Execution, "the interrupted execution names itself")

	next := &policy.ExecutionIdentity{ID: "e2", OutputPath: "/data/runs/e2/output.md", ReceiptPath: "/data/runs/e2/receipt.json",
		WorkspacePath: "/work/repo", Descriptor: launch.Descriptor, Access: policy.ReadOnly, Contract: policy.ContractLegacy}
	rec := events.Recover{State: events.VerdictClear, EvidenceRef: "review.md", Recovery: &policy.Recovery{
		Correction: "c", BlockageID: "b", SnapshotRef: "s", SnapshotDigest: strings.Repeat("a", 64),
		PartialWorkRef: "p", SideEffectsRef: "e", StoppedWritersRef: "w", NextExecution: next}}
	r = fold(t, answered().add(0, rec))
	lane := r.Lanes[0]
	assert.Equal(t, machines.StateTerminal, lane.State, "no transition")
	assert.Equal(t, uint64(7), lane.Seq)
	assert.Equal(t, &policy.Inspection{State: "clear", EvidenceRef: "review.md"}, lane.History[0].Inspection)
	assert.Equal(t, next, lane.History[0].Recovery.NextExecution)
	assert.Nil(t, lane.History[1].Inspection, "the operation record is not the interrupted outcome")

	cont := continueP(0, "e2", 2)
	cont.Decision.PreparedExecution = next
	r = fold(t, answered().add(0, rec).add(0, cont).add(0, claimP("e2")).add(0, finishP("e2", outcome(0, policy.OutcomeComplete, true))))
	assert.Equal(t, next, r.Lanes[0].History[2].Execution, "the continued execution is the prepared one")

	// A started writer's handoff is inspected before its operation
	// (POLICY-CLI.md section 4); its clear verdict still waits for the
	// recovery, which replaces the inspection with the parent's answer.
	inspectedWriter := func(v events.VerdictState) *runLog {
		return newRunLog(t, policy.IsolatedWrite, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered)).
			add(0, inspectP()).add(0, verdictP(v))
	}
	r = fold(t, inspectedWriter(events.VerdictClear).add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded)).add(0, rec))
	assert.Equal(t, &policy.Inspection{State: "clear", EvidenceRef: "review.md"}, r.Lanes[0].History[0].Inspection, "the recover's inspection")
	assert.Equal(t, next, r.Lanes[0].History[0].Recovery.NextExecution)

	declined := events.Recover{State: events.VerdictUnsafe, EvidenceRef: "no.md"}
	for name, l := range map[string]*runLog{
		"twice":                         answered().add(0, declined).add(0, declined),
		"after a clear recover":         answered().add(0, rec).add(0, declined),
		"of a writer judged unsafe":     inspectedWriter(events.VerdictUnsafe).add(0, declined),
		"of an inspected writer, twice": inspectedWriter(events.VerdictClear).add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded)).add(0, rec).add(0, rec),
		"while awaiting the operation": newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered)).add(0, requestP(0)).add(0, declined),
		"of a complete outcome": newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(0, policy.OutcomeUsageExhausted, true))).add(0, declined),
	} {
		_, err := machines.FoldRun(l.envs)
		assert.ErrorIs(t, err, machines.ErrInconsistent, name)
	}
}
