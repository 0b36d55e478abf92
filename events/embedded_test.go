package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

func TestEmbeddedConfigValidate(t *testing.T) {
	ok := events.EmbeddedConfig{DataDir: "/tmp/x"}
	for _, tc := range []struct {
		name string
		mod  func(*events.EmbeddedConfig)
		err  string
	}{
		{"defaults", func(*events.EmbeddedConfig) {}, ""},
		{"interval with period", func(c *events.EmbeddedConfig) { c.Fsync, c.FsyncInterval = events.FsyncInterval, time.Second }, ""},
		{"listen on a random port", func(c *events.EmbeddedConfig) { c.Listen = "127.0.0.1:0" }, ""},
		{"no data dir", func(c *events.EmbeddedConfig) { c.DataDir = "" }, "DataDir is required"},
		{"unknown fsync", func(c *events.EmbeddedConfig) { c.Fsync = "sometimes" }, "want always or interval"},
		{"period under always", func(c *events.EmbeddedConfig) { c.FsyncInterval = time.Second }, "only to fsync policy interval"},
		{"negative store", func(c *events.EmbeddedConfig) { c.MaxStore = -1 }, "must not be negative"},
		{"bad server name", func(c *events.EmbeddedConfig) { c.ServerName = "a.b" }, "server name"},
		{"bad listen", func(c *events.EmbeddedConfig) { c.Listen = "nowhere" }, "Listen"},
		{"cluster without name", func(c *events.EmbeddedConfig) { c.Cluster = &events.ClusterConfig{Listen: "127.0.0.1:0"} }, "Cluster.Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			err := c.Validate()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
	d := ok.WithDefaults()
	require.Equal(t, events.FsyncAlways, d.Fsync, "fsync every write by default")
	require.EqualValues(t, events.DefaultMaxStore, d.MaxStore)
	require.EqualValues(t, events.DefaultMaxMemory, d.MaxMemory)
	require.Equal(t, events.DefaultFsyncInterval, events.EmbeddedConfig{Fsync: events.FsyncInterval}.WithDefaults().FsyncInterval)
}

func TestEmbeddedServerOptions(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	require.Empty(t, e.ClientURL(), "no listener unless asked")
	opts := e.Server().JetStreamConfig()
	require.NotNil(t, opts)
	require.True(t, e.Server().JetStreamEnabled())
	require.EqualValues(t, events.DefaultMaxStore, opts.MaxStore)
	require.EqualValues(t, events.DefaultMaxMemory, opts.MaxMemory)
	require.True(t, opts.SyncAlways)
}

// TestEmbeddedListenAndConnect serves the embedded server on a URL, as
// switchyard serve does, and uses it from a TCP client through Connect.
func TestEmbeddedListenAndConnect(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t, eventstest.WithListen())
	require.NotEmpty(t, e.ClientURL())
	nc, err := events.Connect(events.SplitURLs(" " + e.ClientURL() + ", ,"))
	require.NoError(t, err)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)
	run := eventstest.NewRunID()
	seq, err := j.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, eventstest.T0), 0)
	require.NoError(t, err)
	// The in-process connection sees the TCP client's write.
	local := eventstest.Open(t, e, events.JetStreamConfig{})
	last, err := local.Store().Last(ctx, run, events.RunLane)
	require.NoError(t, err)
	require.Equal(t, seq, last.Seq)

	_, err = events.Connect(nil)
	require.Error(t, err)
}

func TestJetStreamConfigValidate(t *testing.T) {
	require.NoError(t, events.JetStreamConfig{}.Validate())
	require.NoError(t, events.JetStreamConfig{Replicas: 3, ReportMaxAge: time.Hour}.Validate())
	require.ErrorContains(t, events.JetStreamConfig{Replicas: 7}.Validate(), "replicas")
	require.ErrorContains(t, events.JetStreamConfig{ReportMaxAge: time.Second}.Validate(), "duplicate window")
	require.Equal(t, 1, events.JetStreamConfig{}.WithDefaults().Replicas)
}
