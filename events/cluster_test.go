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

// TestClusterR3Conformance runs the store and claims suites on a
// three-node routed cluster with three replicas, reached over TCP by URL
// list, where conflicts may come back as 10164 instead of 10071.
func TestClusterR3Conformance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := eventstest.StartCluster(t, 3)
	nc, err := events.Connect(eventstest.ClientURLs(nodes))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 3})
	require.NoError(t, err)

	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, name := range []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket} {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		require.Equal(t, 3, s.CachedInfo().Config.Replicas, name)
	}

	t.Run("store", func(t *testing.T) {
		eventstest.RunStoreConformance(t, func(*testing.T) events.Store { return j.Store() })
	})
	t.Run("claims", func(t *testing.T) {
		eventstest.RunClaimsConformance(t, func(*testing.T) events.Claims { return j.Claims() })
	})
}
