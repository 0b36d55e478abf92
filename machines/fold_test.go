package machines_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
)

const (
	launch   = machines.EventLaunch
	cont     = machines.EventContinue
	claim    = machines.EventClaim
	finish   = machines.EventFinish
	inspect  = machines.EventInspect
	verdict  = machines.EventVerdict
	request  = machines.EventRequestOperation
	opDone   = machines.EventOperationDone
	complete = machines.EventComplete
	stop     = machines.EventStop
	cancel   = machines.EventCancel
)

// lifecycles are realistic lane logs and the state each folds to.
var lifecycles = []struct {
	name   string
	events []machines.Event
	want   machines.State
}{
	{"empty log is created", nil, machines.StateCreated},
	{"primary completes", []machines.Event{launch, claim, finish, complete}, machines.StateComplete},
	{"usage exhaustion falls back twice", []machines.Event{
		launch, claim, finish, launch, claim, finish, launch, claim, finish, complete,
	}, machines.StateComplete},
	{"chain exhausted stops", []machines.Event{launch, claim, finish, launch, finish, stop}, machines.StateStopped},
	{"preflight failure then fallback", []machines.Event{launch, finish, launch, claim, finish, complete}, machines.StateComplete},
	{"nothing launchable stops at once", []machines.Event{stop}, machines.StateStopped},
	{"writer inspected clear advances", []machines.Event{
		launch, claim, finish, inspect, verdict, launch, claim, finish, complete,
	}, machines.StateComplete},
	{"writer inspected unsafe stops", []machines.Event{launch, claim, finish, inspect, verdict, stop}, machines.StateStopped},
	{"writer waits for its verdict", []machines.Event{launch, claim, finish, inspect}, machines.StateInspecting},
	{"handoff continues after its operation", []machines.Event{
		launch, claim, finish, request, opDone, cont, claim, finish, complete,
	}, machines.StateComplete},
	{"handoff waits for its operation", []machines.Event{launch, claim, finish, request}, machines.StateAwaitingOperation},
	{"failed operation stops", []machines.Event{launch, claim, finish, request, opDone, stop}, machines.StateStopped},
	{"permission continuation", []machines.Event{launch, claim, finish, cont, claim, finish, complete}, machines.StateComplete},
	{"cancel mid-run", []machines.Event{launch, claim, cancel}, machines.StateCancelled},
	{"cancel while launching", []machines.Event{launch, cancel}, machines.StateCancelled},
	{"cancel while awaiting the parent", []machines.Event{launch, claim, finish, request, cancel}, machines.StateCancelled},
	{"cancel before any attempt", []machines.Event{cancel}, machines.StateCancelled},
}

func TestRebuildLifecycles(t *testing.T) {
	t.Parallel()
	for _, tc := range lifecycles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := machines.Rebuild(tc.events...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRebuildStopsAtFirstImpossibleEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		events    []machines.Event
		index     int
		at        machines.State
		sentinel  error
		errString string
	}{
		{
			"second launch while running", []machines.Event{launch, claim, launch, finish}, 2,
			machines.StateRunning, machines.ErrImpossible,
			"event 2: impossible transition running → launching on launch: launch leaves only created, terminal",
		},
		{
			"event after complete", []machines.Event{launch, claim, finish, complete, launch}, 4,
			machines.StateComplete, machines.ErrFinal,
			"event 4: impossible transition complete → launching on launch: the lane is final",
		},
		{
			"launch without a verdict", []machines.Event{launch, claim, finish, inspect, launch}, 4,
			machines.StateInspecting, machines.ErrImpossible,
			"event 4: impossible transition inspecting → launching on launch: launch leaves only created, terminal",
		},
		{
			"continue without the operation", []machines.Event{launch, claim, finish, request, cont}, 4,
			machines.StateAwaitingOperation, machines.ErrImpossible,
			"event 4: impossible transition awaiting-operation → launching on continue: continue leaves only created, terminal",
		},
		{
			"claim before launch", []machines.Event{claim}, 0,
			machines.StateCreated, machines.ErrImpossible,
			"event 0: impossible transition created → running on claim: claim leaves only launching",
		},
		{
			"unknown event", []machines.Event{launch, "audit"}, 1,
			machines.StateLaunching, machines.ErrUnknownEvent,
			`event 1: unknown lane event "audit" in state launching`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := machines.Rebuild(tc.events...)
			assert.Equal(t, tc.at, got, "the state before the refused event")
			var fe *machines.FoldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.index, fe.Index)
			var te *machines.TransitionError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tc.at, te.From)
			assert.ErrorIs(t, err, tc.sentinel)
			assert.EqualError(t, err, tc.errString)
		})
	}
}

func TestFoldFromState(t *testing.T) {
	t.Parallel()
	got, err := machines.Fold(machines.StateTerminal, inspect, verdict, launch)
	require.NoError(t, err)
	assert.Equal(t, machines.StateLaunching, got)

	_, err = machines.Fold("done", launch)
	assert.ErrorIs(t, err, machines.ErrUnknownState)
}

// lane20 is a long but legal lane: preflight failure, a writer inspected
// clear, two handoffs continued, cancelled while running.
var lane20 = []machines.Event{
	launch, finish,
	launch, claim, finish, inspect, verdict,
	launch, claim, finish, request, opDone,
	cont, claim, finish, request, opDone,
	cont, claim, cancel,
}

func TestLane20IsLegal(t *testing.T) {
	t.Parallel()
	require.Len(t, lane20, 20)
	got, err := machines.Rebuild(lane20...)
	require.NoError(t, err)
	assert.Equal(t, machines.StateCancelled, got)
}

func BenchmarkRebuild20(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := machines.Rebuild(lane20...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaneApply20 is the same log through looplab/fsm, for comparison.
func BenchmarkLaneApply20(b *testing.B) {
	b.ReportAllocs()
	ctx := b.Context()
	for b.Loop() {
		l := machines.NewLane()
		for _, ev := range lane20 {
			if err := l.Apply(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
