package machines_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// seedLogs are run logs the fold tests use: exhaustion across lanes, a
// writer inspected, a handoff answered and continued, a cancel, attempts
// excluded before launch and between attempts.
func seedLogs(tb testing.TB) [][]events.Envelope {
	usage := policy.OutcomeUsageExhausted
	delivered := outcome(1, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	exhausted := newRunLog(tb, policy.ReadOnly, lanePolicy("lane#1", usage), lanePolicy("lane#2", usage)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).
		add(0, finishP("e1", outcome(0, usage, true))).
		add(events.RunLane, exhaustedP(policy.Claude, 0, "e1")).
		add(0, launchP(1, "e2")).add(0, claimP("e2")).add(0, finishP("e2", outcome(1, policy.OutcomeComplete, true))).
		add(1, launchP(1, "e3")).add(1, claimP("e3")).add(1, finishP("e3", outcome(1, policy.OutcomeComplete, true))).
		add(0, completeP()).add(1, completeP()).
		add(events.RunLane, finalP(events.FinalComplete, events.FinalComplete)).
		add(events.RunLane, auditP())
	writer := newRunLog(tb, policy.IsolatedWrite, lanePolicy("writer#1", policy.OutcomeTerminalFailure), lanePolicy("writer#2", policy.OutcomeTerminalFailure)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(0, policy.OutcomeTerminalFailure, true))).
		add(0, inspectP()).add(0, verdictP(events.VerdictClear)).
		add(0, launchP(1, "e2")).add(0, claimP("e2")).add(0, finishP("e2", delivered)).
		add(0, requestP(1)).add(0, opDoneP(events.OperationSucceeded)).
		add(0, continueP(1, "e3", 2)).add(0, claimP("e3")).add(0, finishP("e3", outcome(1, policy.OutcomeComplete, true))).
		add(0, completeP()).
		add(1, launchP(0, "e4")).add(1, claimP("e4")).add(1, cancelP()).
		add(events.RunLane, finalP(events.FinalComplete, events.FinalCancelled))
	cancelled := newRunLog(tb, policy.ReadOnly, lanePolicy("lane#1")).
		add(events.RunLane, cancelP()).add(0, cancelP()).add(0, stopP(policy.StopChainExhausted)).
		add(0, deniedP(policy.DenyAmbiguousState))
	excluded := newRunLog(tb, policy.ReadOnly, lanePolicy("lane#1", usage), lanePolicy("lane#2", usage)).
		add(0, excludeP(0, policy.ExcludePolicyBlocked)).
		add(0, launchP(1, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(1, usage, true))).
		add(1, launchP(0, "e2")).add(1, claimP("e2")).add(1, finishP("e2", outcome(0, usage, true))).
		add(1, excludeP(1, policy.ExcludeQuotaExhausted)).
		add(0, stopP(policy.StopChainExhausted)).add(1, stopP(policy.StopChainExhausted)).
		add(events.RunLane, finalP(events.FinalStopped, events.FinalStopped))
	return [][]events.Envelope{exhausted.envs, writer.envs, cancelled.envs, excluded.envs}
}

// mutateLog applies the fuzzer's edit program to a copy of base, three
// bytes an edit: drop, swap, duplicate, move to another lane (or the run
// subject), renumber, or give one envelope another's type and payload.
// The result is a log the engine never writes but a damaged or forged
// store could return.
func mutateLog(base []events.Envelope, ops []byte) []events.Envelope {
	envs := append([]events.Envelope(nil), base...)
	for i := 0; i+2 < len(ops) && len(envs) > 0; i += 3 {
		n := len(envs)
		a, b := int(ops[i+1])%n, int(ops[i+2])%n
		switch ops[i] % 6 {
		case 0:
			envs = append(envs[:a], envs[a+1:]...)
		case 1:
			envs[a], envs[b] = envs[b], envs[a]
		case 2:
			envs = append(envs[:a+1], envs[a:]...)
		case 3:
			envs[a].Lane = int(ops[i+2])%4 - 1 // RunLane, 0, 1, 2
		case 4:
			envs[a].Seq = uint64(ops[i+2])
		case 5:
			envs[a].Type, envs[a].Payload = envs[b].Type, envs[b].Payload
		}
	}
	return envs
}

// FuzzFoldRun feeds run logs edited by the fuzzer (envelopes dropped,
// reordered, duplicated, moved, renumbered or retyped) to FoldRun, the fold
// the engine and replay rebuild every run from. It proves: folding never
// panics; a refusal is a *LogError naming the first refused envelope, and
// the run returned is exactly the fold of the envelopes before it (a
// refused envelope changes nothing); an accepted lane's state is what
// RebuildLane folds from that lane's envelopes alone; every lane's policy
// state is readable and policy.Next decides on it.
func FuzzFoldRun(f *testing.F) {
	logs := seedLogs(f)
	for i := range logs {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 3, 0})
		f.Add(uint8(i), []byte{1, 2, 5, 2, 4, 0})
		f.Add(uint8(i), []byte{3, 6, 0, 4, 7, 1})
		f.Add(uint8(i), []byte{5, 1, 2, 5, 9, 0})
	}
	f.Fuzz(func(t *testing.T, base uint8, ops []byte) {
		envs := mutateLog(logs[int(base)%len(logs)], ops)
		r, err := machines.FoldRun(envs)
		require.NotNil(t, r)
		applied := len(envs)
		if err != nil {
			var le *machines.LogError
			require.True(t, errors.As(err, &le), "fold error %T %v", err, err)
			require.GreaterOrEqual(t, le.Index, 0)
			require.Less(t, le.Index, len(envs))
			require.Equal(t, envs[le.Index].Type, le.Type)
			require.Equal(t, envs[le.Index].Seq, le.Seq)
			require.True(t, errors.Is(err, machines.ErrInconsistent) || errors.As(err, new(*machines.TransitionError)),
				"a refusal is an inconsistency or a refused transition: %v", err)
			before, err := machines.FoldRun(envs[:le.Index])
			require.NoError(t, err, "the envelopes before the refused one fold")
			require.Equal(t, before, r, "a refused envelope leaves the run as it was")
			applied = le.Index
		}
		_ = r.Final()
		for i, l := range r.Lanes {
			require.True(t, l.State.Valid(), "lane %d state %q", i, l.State)
			var own []events.Envelope
			for _, env := range envs[:applied] {
				if env.Lane == i {
					own = append(own, env)
				}
			}
			s, err := machines.RebuildLane(own)
			require.NoError(t, err, "lane %d rebuilds from its own subject", i)
			require.Equal(t, l.State, s, "lane %d: FoldRun and RebuildLane agree", i)
			st, err := r.LaneState(i)
			require.NoError(t, err)
			d := policy.Next(l.Policy, st, nil)
			require.Contains(t, []policy.DecisionKind{policy.DecideLaunch, policy.DecideContinue, policy.DecideParentOperation,
				policy.DecideStop, policy.DecidePolicyDenied, policy.DecideInspect}, d.Kind)
		}
	})
}

// FuzzRebuildLane feeds arbitrary sequences of event types (one byte each,
// indexing events.Types plus unknown names) to RebuildLane and Fold. It
// proves: neither panics; RebuildLane's refusal is a *FoldError naming the
// envelope; the state reached is a valid state and equals Fold over the
// same lane events.
func FuzzRebuildLane(f *testing.F) {
	f.Add([]byte{})
	for _, envs := range seedLogs(f) {
		var seq []byte
		for _, env := range envs {
			if env.Lane == 0 {
				for i, typ := range events.Types {
					if typ == env.Type {
						seq = append(seq, byte(i))
					}
				}
			}
		}
		f.Add(seq)
	}
	f.Fuzz(func(t *testing.T, seq []byte) {
		var envs []events.Envelope
		var evs []machines.Event
		for i, b := range seq {
			typ := events.Type("unknown")
			if int(b) < len(events.Types) {
				typ = events.Types[b]
			}
			envs = append(envs, events.Envelope{Run: "R", Lane: 0, Seq: uint64(i + 1), Type: typ})
			if typ != events.TypeAudit && typ != events.TypeRecover && typ != events.TypeExclude { // no transition
				ev, ok := machines.EventOf(typ)
				if !ok {
					ev = machines.Event(typ)
				}
				evs = append(evs, ev)
			}
		}
		s, err := machines.RebuildLane(envs)
		require.True(t, s.Valid(), "state %q", s)
		if err != nil {
			var fe *machines.FoldError
			require.True(t, errors.As(err, &fe), "rebuild error %T %v", err, err)
			require.Equal(t, envs[fe.Index].Seq, fe.Seq)
			return
		}
		folded, err := machines.Fold(machines.StateCreated, evs...)
		require.NoError(t, err)
		require.Equal(t, s, folded)
	})
}
