package console_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestBuildTimeline: exclusions become skip marks, a continue is a bar of
// its own, a parent operation is a wait closed by its result, a run-level
// cancel ends no lane by itself, and a lane's final event ends it (and
// closes any open wait).
func TestBuildTimeline(t *testing.T) {
	t0 := eventstest.T0
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	env := func(typ events.Type, lane, s int) events.Envelope {
		return eventstest.SampleEnvelope(typ, "R", lane, at(s))
	}
	tl := console.BuildTimeline([]events.Envelope{
		env(events.TypeRunCreated, 0, 0),
		env(events.TypeExclude, 0, 1),
		env(events.TypeLaunch, 0, 2),
		env(events.TypeClaim, 0, 3),
		env(events.TypeFinish, 0, 10),
		env(events.TypeRequestOperation, 0, 11),
		env(events.TypeOperationDone, 0, 20),
		env(events.TypeContinue, 0, 21),
		env(events.TypeCancel, events.RunLane, 25),
		env(events.TypeInspect, 0, 26),
		env(events.TypeComplete, 0, 30),
		env(events.TypeLaunch, 7, 31), // a lane the run does not have: a row of its own, no panic
	})
	require.Equal(t, "R", tl.Run)
	require.Equal(t, at(0), tl.Start)
	require.Equal(t, at(31), tl.End)
	require.Len(t, tl.Lanes, 8)
	l := tl.Lanes[0]
	require.Len(t, l.Skipped, 1)
	require.Equal(t, at(1), l.Skipped[0].At)
	require.Equal(t, "execution_policy_blocked", string(l.Skipped[0].Code))
	require.Len(t, l.Attempts, 2)
	require.Equal(t, "x1", l.Attempts[0].ExecutionID)
	require.Equal(t, at(10), *l.Attempts[0].Finished)
	require.Equal(t, "complete", string(l.Attempts[0].Outcome))
	require.Equal(t, "x2", l.Attempts[1].ExecutionID)
	require.True(t, l.Attempts[1].Continued)
	require.Nil(t, l.Attempts[1].Finished)
	require.Len(t, l.Waits, 2)
	require.Equal(t, console.WaitSpan{Kind: "operation", From: at(11), To: ptr(at(20)), Answer: "succeeded"}, l.Waits[0])
	require.Equal(t, console.WaitSpan{Kind: "verdict", From: at(26), To: ptr(at(30)), Answer: "complete"}, l.Waits[1])
	require.Equal(t, at(30), *l.Ended)
	require.Equal(t, events.TypeComplete, l.EndedBy)
	require.Len(t, tl.Lanes[7].Attempts, 1)

	empty := console.BuildTimeline(nil)
	require.NotNil(t, empty.Lanes)
	require.Empty(t, empty.Lanes)
}

func ptr[T any](v T) *T { return &v }
