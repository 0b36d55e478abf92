package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// noticed waits up to d for a notice on ch.
func noticed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestCancelNoticesAsAWorker: a worker's connection (the embedded server's
// worker role) follows a lane's cancels as the engine publishes them: a
// cancel of its lane or of the run is noticed; another lane's cancel, and
// an event of its lane that is not a cancel, are not. A reader's
// connection, which may not subscribe to the events, gets
// ErrPermissionDenied: the server's refusal, then at once.
func TestCancelNoticesAsAWorker(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	eng := eventstest.Open(t, e, events.JetStreamConfig{})
	worker := connectAs(t, e, path, events.RoleWorker)
	reader := connectAs(t, e, path, events.RoleReader)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := eventstest.NewRunID()
	notices, err := worker.Store().CancelNotices(ctx, run, 1)
	require.NoError(t, err)
	_, err = reader.Store().CancelNotices(ctx, run, 1)
	require.ErrorIs(t, err, events.ErrPermissionDenied, "the reader may not follow the events: the server's refusal")
	_, err = reader.Store().CancelNotices(ctx, run, 2)
	require.ErrorIs(t, err, events.ErrPermissionDenied, "and after that at once")

	lanes := map[int]uint64{}
	appendOn := func(typ events.Type, lane int) {
		t.Helper()
		env := eventstest.SampleEnvelope(typ, run, lane, eventstest.T0)
		seq, err := eng.Store().Append(ctx, env, lanes[env.Lane])
		require.NoError(t, err)
		lanes[env.Lane] = seq
	}
	appendOn(events.TypeLaunch, 1)
	appendOn(events.TypeCancel, 2)
	require.False(t, noticed(notices, 500*time.Millisecond), "a launch of the lane and another lane's cancel are no notice")

	appendOn(events.TypeCancel, 1)
	require.True(t, noticed(notices, 30*time.Second), "the lane's cancel is noticed")
	appendOn(events.TypeCancel, events.RunLane)
	require.True(t, noticed(notices, 30*time.Second), "the run's cancel is noticed")

}
