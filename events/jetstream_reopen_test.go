package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestReopenDoesNotUpdateStreams: every process opens the streams, and a
// stream that already has Switchyard's configuration is only read, never
// updated (an update rewrites the store's configuration on the server
// while other clients may be creating consumers). The server's stream
// update API subject is watched while a second client opens.
func TestReopenDoesNotUpdateStreams(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	eventstest.Open(t, e, events.JetStreamConfig{})

	nc, err := e.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	updates, err := nc.SubscribeSync("$JS.API.STREAM.UPDATE.>")
	require.NoError(t, err)
	creates, err := nc.SubscribeSync("$JS.API.STREAM.CREATE.>")
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	eventstest.Open(t, e, events.JetStreamConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, nc.FlushWithContext(ctx))
	n, _, err := updates.Pending()
	require.NoError(t, err)
	require.Zero(t, n, "a second open updated a stream")
	n, _, err = creates.Pending()
	require.NoError(t, err)
	require.Zero(t, n, "a second open created a stream")

	// A changed setting is still applied.
	eventstest.Open(t, e, events.JetStreamConfig{ReportMaxAge: 3 * time.Hour})
	require.NoError(t, nc.FlushWithContext(ctx))
	n, _, err = updates.Pending()
	require.NoError(t, err)
	require.Equal(t, 1, n, "the reports stream's new max age is an update")
}
