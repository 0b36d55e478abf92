package machines_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestEventOfSharesNames pins the contract with package events: every lane
// event type is the machine event of the same name, every machine event
// has one, and run-level types and audit are no lane event.
func TestEventOfSharesNames(t *testing.T) {
	t.Parallel()
	seen := map[machines.Event]bool{}
	for _, typ := range events.Types {
		ev, ok := machines.EventOf(typ)
		switch {
		case typ == events.TypeAudit || typ == events.TypeRecover || typ == events.TypeExclude || typ == events.TypeOperationStep || typ.Scope() == events.ScopeRun: // recover, exclude and operation-step are no transition
			assert.False(t, ok, typ)
		default:
			require.True(t, ok, typ)
			assert.Equal(t, string(typ), string(ev))
			seen[ev] = true
		}
	}
	for _, ev := range machines.Events {
		assert.True(t, seen[ev], "machine event %s has no events.Type", ev)
	}
	_, ok := machines.EventOf("bogus")
	assert.False(t, ok)
}

func TestRebuildLane(t *testing.T) {
	t.Parallel()
	delivered := outcome(0, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, auditP()).add(0, finishP("e1", delivered)).
		add(0, requestP(0)).add(0, opDoneP(events.OperationSucceeded)).
		add(0, continueP(0, "e2", 2)).add(0, claimP("e2")).add(0, cancelP())
	lane := l.envs[1:]

	got, err := machines.RebuildLane(lane)
	require.NoError(t, err)
	assert.Equal(t, machines.StateCancelled, got)

	// The run aggregate agrees with the lane fold.
	assert.Equal(t, got, fold(t, l).Lanes[0].State)

	empty, err := machines.RebuildLane(nil)
	require.NoError(t, err)
	assert.Equal(t, machines.StateCreated, empty)
}

func TestRebuildLaneRefuses(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1"), lanePolicy("lane#2")).
		add(0, launchP(0, "e1")).add(1, launchP(0, "e2")).add(0, launchP(0, "e3"))
	for _, tc := range []struct {
		name  string
		envs  []events.Envelope
		index int
		want  error
		msg   string
	}{
		{"another lane's envelope", l.envs[1:3], 1, machines.ErrInconsistent, "event 1 (seq 3): inconsistent run log: launch of run \"run-1\" lane 1 in the log of run \"run-1\" lane 0"},
		{"run-level envelope", l.envs[:1], 0, machines.ErrInconsistent, "lane -1"},
		{"impossible transition", []events.Envelope{l.envs[1], l.envs[3]}, 1, machines.ErrImpossible, "event 1 (seq 4): impossible transition launching → launching on launch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := machines.RebuildLane(tc.envs)
			var fe *machines.FoldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.index, fe.Index)
			assert.Equal(t, tc.envs[tc.index].Seq, fe.Seq)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.msg)
		})
	}

	// A run-level type wrongly on a lane subject is no lane event.
	bad := events.Envelope{Schema: 1, Type: events.TypeRunFinal, Run: runID, Lane: 0, Time: t0, Payload: finalP(events.FinalComplete)}
	_, err := machines.RebuildLane([]events.Envelope{bad})
	assert.ErrorIs(t, err, machines.ErrUnknownEvent)
}
