package events_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestClusterTLSConformance: a three-node cluster whose clients and routes
// both run over TLS with a CA generated here, that requires client
// certificates and admits only the role users (RolePermissions), elects its
// meta leader over the TLS routes, and the store, claims and capacity
// suites pass over a connection as the engine user that checks the servers
// against the CA and presents its own certificate. A worker user is
// refused a control and an event (a parent's and the engine's acts), and a
// client without the CA, without a certificate or without a login is
// refused.
func TestClusterTLSConformance(t *testing.T) {
	t.Parallel()
	pki := eventstest.NewPKI(t)
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	nodes := eventstest.StartClusterWith(t, 3, eventstest.WithTLS(pki.ServerTLS(true)),
		eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	certFile, keyFile := pki.Issue(t, "switchyard-client", false)
	auth := events.ClientAuth{TLSCA: pki.CAFile, TLSCert: certFile, TLSKey: keyFile}
	opts, err := auth.Options()
	require.NoError(t, err)
	urls := tlsURLs(nodes)
	as := func(r events.Role) []nats.Option {
		return append(append([]nats.Option(nil), opts...), creds.ClientOptions(r)...)
	}
	nc, err := events.Connect(urls, as(events.RoleEngine)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	require.True(t, nc.TLSRequired(), "the servers require TLS")
	_, err = nc.TLSConnectionState()
	require.NoError(t, err, "the connection is TLS")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // only ends a hang
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 3})
	require.NoError(t, err, "the meta leader is elected over TLS routes and the R3 streams are created")

	t.Run("store", func(t *testing.T) {
		eventstest.RunStoreConformance(t, func(*testing.T) events.Store { return j.Store() })
	})
	t.Run("claims", func(t *testing.T) {
		eventstest.RunClaimsConformance(t, func(*testing.T) events.Claims { return j.Claims() })
	})
	t.Run("capacity", func(t *testing.T) {
		eventstest.RunCapacityConformance(t, func(t *testing.T) events.Capacity { return emptyCapacity(t, nc, j) })
	})
	t.Run("a worker cannot act as a parent or as the engine", func(t *testing.T) {
		run := eventstest.NewRunID()
		at := time.Now().UTC()
		seq, err := j.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, at), 0)
		require.NoError(t, err, "the engine appends")
		open := func(r events.Role) *events.JetStream {
			c, err := events.Connect(urls, as(r)...)
			require.NoError(t, err, "connect as %s over TLS", r)
			t.Cleanup(c.Close)
			js, err := events.OpenJetStream(ctx, c, events.JetStreamConfig{})
			require.NoError(t, err, "open the streams as %s", r)
			return js
		}
		// A refused publish shows when its attempt ends; allowed ones get
		// the generous ctx.
		short := func() context.Context {
			c, cancel := context.WithTimeout(ctx, 3*time.Second)
			t.Cleanup(cancel)
			return c
		}
		cancelRun := events.Control{ID: "c1", Kind: events.ControlCancel, Run: run, Lane: events.RunLane, Cancel: &events.Cancel{Reason: "forged", By: "worker"}, Time: at}
		worker := open(events.RoleWorker)
		_, err = worker.Queue().PublishControl(short(), cancelRun)
		require.True(t, events.IsPermissionDenied(err), "a worker's control on %s is refused by the server: %v", events.ControlSubject(run), err)
		_, err = worker.Store().Append(short(), eventstest.SampleEnvelope(events.TypeCancel, run, events.RunLane, at), seq)
		require.True(t, events.IsPermissionDenied(err), "a worker's event on sy.ev.* is refused by the server: %v", err)
		envs, err := worker.Store().Load(ctx, run, events.RunLane)
		require.NoError(t, err, "a worker still reads events")
		require.Len(t, envs, 1, "nothing forged reached the log")

		_, err = open(events.RoleParent).Queue().PublishControl(ctx, cancelRun)
		require.NoError(t, err, "a parent publishes the control")
		_, err = j.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeCancel, run, events.RunLane, at), seq)
		require.NoError(t, err, "the engine appends the event")
	})
	t.Run("refused without the CA, a client certificate or a login", func(t *testing.T) {
		// No login: TLS alone does not let a client in.
		_, err := events.Connect(urls[:1], append(opts, nats1s()...)...)
		require.ErrorContains(t, err, "Authorization Violation")
		// No CA: the system roots do not trust the test CA.
		noCA, err := events.ClientAuth{TLSCert: certFile, TLSKey: keyFile}.Options()
		require.NoError(t, err)
		_, err = events.Connect(urls[:1], append(noCA, nats1s()...)...)
		require.Error(t, err, "a server certificate signed by an unknown CA is refused")
		require.ErrorContains(t, err, "certificate")
		// No client certificate: the server requires one.
		noCert, err := events.ClientAuth{TLSCA: pki.CAFile}.Options()
		require.NoError(t, err)
		_, err = events.Connect(urls[:1], append(noCert, nats1s()...)...)
		require.Error(t, err, "a client without a certificate is refused")
		// No TLS at all.
		_, err = events.Connect(urls[:1], nats1s()...)
		require.Error(t, err, "a plain client is refused")
	})
}

// nats1s bounds a connection attempt expected to fail.
func nats1s() []nats.Option { return []nats.Option{nats.Timeout(10 * time.Second)} }

// tlsURLs are the nodes' client URLs with the tls:// scheme.
func tlsURLs(nodes []*events.Embedded) []string {
	out := eventstest.ClientURLs(nodes)
	for i, u := range out {
		_, hostPort, _ := strings.Cut(u, "://")
		out[i] = "tls://" + hostPort
	}
	return out
}

// TestEmbeddedTLS: an embedded server with TLS refuses a plain TCP client
// and accepts one that trusts the CA (no client certificate needed unless
// VerifyClients), while its in-process connection needs no TLS; settings
// that cannot work are refused before start.
func TestEmbeddedTLS(t *testing.T) {
	t.Parallel()
	pki := eventstest.NewPKI(t)
	e := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithTLS(pki.ServerTLS(false)))
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	require.NotNil(t, j, "the in-process connection opens the streams without TLS")
	url := tlsURLs([]*events.Embedded{e})[0]

	_, err := events.Connect([]string{strings.Replace(url, "tls://", "nats://", 1)}, nats1s()...)
	require.Error(t, err, "a plain client is refused")
	opts, err := events.ClientAuth{TLSCA: pki.CAFile}.Options()
	require.NoError(t, err)
	nc, err := events.Connect([]string{url}, append(opts, nats1s()...)...)
	require.NoError(t, err, "a client that trusts the CA connects without a certificate")
	nc.Close()

	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  events.EmbeddedConfig
		want string
	}{
		{events.EmbeddedConfig{DataDir: dir, TLS: &events.TLSConfig{CertFile: pki.CertFile}}, "TLS needs CertFile and KeyFile"},
		{events.EmbeddedConfig{DataDir: dir, TLS: &events.TLSConfig{CertFile: pki.CertFile, KeyFile: pki.KeyFile, VerifyClients: true}}, "TLS.CAFile is required"},
		{events.EmbeddedConfig{DataDir: dir, Cluster: &events.ClusterConfig{Name: "c", Listen: "127.0.0.1:0"},
			TLS: &events.TLSConfig{CertFile: pki.CertFile, KeyFile: pki.KeyFile}}, "TLS.CAFile is required"},
	} {
		require.ErrorContains(t, tc.cfg.Validate(), tc.want)
	}
	_, err = events.StartEmbedded(events.EmbeddedConfig{DataDir: dir, Listen: "127.0.0.1:0",
		TLS: &events.TLSConfig{CertFile: pki.CertFile, KeyFile: pki.CAFile}})
	require.ErrorContains(t, err, "embedded: TLS:", "a key that does not match the certificate")
}
