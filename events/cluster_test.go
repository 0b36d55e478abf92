package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestClusterR3Conformance runs the store, claims and capacity suites on a
// three-node routed cluster with three replicas, reached over TCP by URL
// list, where conflicts may come back as 10164 instead of 10071.
func TestClusterR3Conformance(t *testing.T) {
	t.Parallel()
	nodes := eventstest.StartCluster(t, 3)
	nc, err := events.Connect(eventstest.ClientURLs(nodes))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // only ends a hang; see testCtx
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 3})
	require.NoError(t, err)

	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, name := range []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket, events.WorkersStream, "KV_" + events.CapacityBucket} {
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
	t.Run("capacity", func(t *testing.T) {
		eventstest.RunCapacityConformance(t, func(t *testing.T) events.Capacity { return emptyCapacity(t, nc, j) })
	})
	// Last: it changes the deployment.
	t.Run("replicas are kept unless forced", func(t *testing.T) {
		replicasKeptUnlessForced(t, ctx, js, eventstest.ClientURLs(nodes))
	})
}

// replicasKeptUnlessForced: on a three-node cluster whose streams have
// three replicas, a client that opens them with the default (one replica:
// a command given one node's URL) keeps all three replicas and reports
// them; only ForceReplicas changes an existing deployment.
func replicasKeptUnlessForced(t *testing.T, ctx context.Context, js jetstream.JetStream, urls []string) {
	open := func(cfg events.JetStreamConfig, urls ...string) *events.JetStream {
		nc, err := events.Connect(urls)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		j, err := events.OpenJetStream(ctx, nc, cfg)
		require.NoError(t, err)
		return j
	}
	replicas := func() []int {
		var out []int
		for _, name := range []string{events.EventsStream, events.JobsStream, events.ReportsStream, "KV_" + events.ClaimsBucket, events.WorkersStream, "KV_" + events.CapacityBucket} {
			s, err := js.Stream(ctx, name)
			require.NoError(t, err)
			out = append(out, s.CachedInfo().Config.Replicas)
		}
		return out
	}
	require.Equal(t, []int{3, 3, 3, 3, 3, 3}, replicas())

	j := open(events.JetStreamConfig{}, urls[1])
	require.Equal(t, 3, j.Replicas(), "the deployment's count, not the default")
	require.Equal(t, []int{3, 3, 3, 3, 3, 3}, replicas(), "a default open through one node keeps three replicas")
	_, err := j.Store().Append(ctx, events.NewEnvelope(eventstest.NewRunID(), 0, time.Now(), events.Audit{Reason: events.AuditLateReport}), 0)
	require.NoError(t, err, "and works")

	// A deployment from before the capacity bucket (an upgrade): a default
	// open through one node creates it with the deployment's replicas.
	require.NoError(t, js.DeleteStream(ctx, "KV_"+events.CapacityBucket))
	j = open(events.JetStreamConfig{}, urls[2])
	require.Equal(t, []int{3, 3, 3, 3, 3, 3}, replicas(), "a bucket added to a three-replica deployment gets three replicas")
	require.NoError(t, j.Capacity().Put(ctx, eventstest.SampleCapacityReport(policy.Codex, time.Now())), "and works")

	require.Equal(t, 1, open(events.JetStreamConfig{Replicas: 1, ForceReplicas: true}, urls...).Replicas())
	require.Equal(t, []int{1, 1, 1, 1, 1, 1}, replicas(), "an explicit change is applied")
}
