package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestOpenJetStreamStreams pins the stream settings DESIGN.md relies on.
func TestOpenJetStreamStreams(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	eventstest.Open(t, e, events.JetStreamConfig{})
	eventstest.Open(t, e, events.JetStreamConfig{}) // reopening is idempotent.
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	ctx := context.Background()
	info := func(name string) jetstream.StreamConfig {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		return s.CachedInfo().Config
	}
	ev := info(events.EventsStream)
	require.Equal(t, jetstream.LimitsPolicy, ev.Retention)
	require.Equal(t, jetstream.FileStorage, ev.Storage)
	require.Zero(t, ev.MaxAge, "events are kept forever")
	require.True(t, ev.AllowDirect)
	require.True(t, ev.DenyDelete)
	require.Equal(t, events.DefaultDuplicateWindow, ev.Duplicates)
	require.Equal(t, jetstream.WorkQueuePolicy, info(events.JobsStream).Retention)
	require.Equal(t, jetstream.LimitsPolicy, info(events.ReportsStream).Retention)
	require.EqualValues(t, 1, info("KV_"+events.ClaimsBucket).MaxMsgsPerSubject)
	capacity := info("KV_" + events.CapacityBucket)
	require.EqualValues(t, 1, capacity.MaxMsgsPerSubject, "history 1: only each provider's current report")
	require.Equal(t, jetstream.FileStorage, capacity.Storage)
	require.Zero(t, capacity.MaxAge, "a report stays until replaced; staleness is judged by its acquisition time")
	require.True(t, capacity.DenyDelete)
	require.Equal(t, []string{"$KV." + events.CapacityBucket + ".>"}, capacity.Subjects)
}

// TestOpenJetStreamFailsFast refuses an incompatible existing stream at
// once instead of retrying until SetupTimeout.
func TestOpenJetStreamFailsFast(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: events.JobsStream, Subjects: []string{"sy.job.>"}, Retention: jetstream.LimitsPolicy})
	require.NoError(t, err)
	start := time.Now()
	_, err = events.OpenJetStream(ctx, e.Conn(), events.JetStreamConfig{SetupTimeout: 2 * time.Minute})
	require.Error(t, err)
	require.ErrorContains(t, err, events.JobsStream)
	require.Less(t, time.Since(start), time.Minute, "retried until SetupTimeout instead of failing at once")
}
