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
// both run over TLS with a CA generated here, and that requires client
// certificates, elects its meta leader over the TLS routes, and the store,
// claims and capacity suites pass over a client connection that checks the
// servers against the CA and presents its own certificate. A client
// without the CA, and one without a certificate, are refused.
func TestClusterTLSConformance(t *testing.T) {
	t.Parallel()
	pki := eventstest.NewPKI(t)
	nodes := eventstest.StartClusterWith(t, 3, eventstest.WithTLS(pki.ServerTLS(true)))
	certFile, keyFile := pki.Issue(t, "switchyard-client", false)
	auth := events.ClientAuth{TLSCA: pki.CAFile, TLSCert: certFile, TLSKey: keyFile}
	opts, err := auth.Options()
	require.NoError(t, err)
	urls := tlsURLs(nodes)
	nc, err := events.Connect(urls, opts...)
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
	t.Run("refused without the CA or without a client certificate", func(t *testing.T) {
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
