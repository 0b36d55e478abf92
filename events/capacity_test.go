package events_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// emptyCapacity purges the capacity bucket of j's deployment, so a
// conformance subtest starts with no report, and returns j's Capacity.
func emptyCapacity(t *testing.T, nc *nats.Conn, j *events.JetStream) events.Capacity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(ctx, "KV_"+events.CapacityBucket)
	require.NoError(t, err)
	require.NoError(t, s.Purge(ctx))
	return j.Capacity()
}

// TestJetStreamCapacityCorruptValues: a value in the bucket that the
// store did not write (bytes that are no report, a report of another
// provider, a null, a key that is no provider) is an error naming its key
// on every read, never a guess; a valid Put replaces a corrupt value.
func TestJetStreamCapacityCorruptValues(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	c := j.Capacity()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, events.CapacityBucket)
	require.NoError(t, err)

	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	claude, err := encodeReport(eventstest.SampleCapacityReport(policy.Claude, at))
	require.NoError(t, err)
	for name, raw := range map[string]string{
		"not JSON":                  `{"schema_version":1,`,
		"unknown key":               `{"schema_version":1,"provider":"codex","balance":4242.17}`,
		"another provider's report": claude,
		"a null":                    `{"schema_version":1,"provider":"codex","snapshot":null}`,
		"trailing data":             claude + `{}`,
	} {
		_, err := kv.Put(ctx, "codex", []byte(raw))
		require.NoError(t, err)
		_, err = c.Get(ctx, policy.Codex)
		require.ErrorIs(t, err, events.ErrInvalid, name)
		require.ErrorContains(t, err, "capacity report codex", name)
		require.NotContains(t, err.Error(), "4242.17", "no stored value leaks into the error")
		_, err = c.List(ctx)
		require.ErrorIs(t, err, events.ErrInvalid, name)
		require.ErrorContains(t, err, "codex", name)
	}

	good := eventstest.SampleCapacityReport(policy.Codex, at)
	require.NoError(t, c.Put(ctx, good), "a valid report replaces a corrupt one")
	got, err := c.Get(ctx, policy.Codex)
	require.NoError(t, err)
	require.Equal(t, good, got)

	_, err = kv.Put(ctx, "openai", []byte(claude))
	require.NoError(t, err)
	_, err = c.List(ctx)
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "openai", "a key that is no provider is named")
}

func encodeReport(r policy.CapacityReport) (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}
