package eventstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// PKI is a certificate authority generated for one test, with the PEM
// files of its certificates in Dir.
type PKI struct {
	Dir string
	// CAFile is the CA's certificate.
	CAFile string
	// CertFile and KeyFile are a certificate for 127.0.0.1, ::1 and
	// localhost, valid for server and client authentication (a cluster
	// node's, used for clients and routes).
	CertFile, KeyFile string

	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	n     int64
}

// NewPKI generates a CA and a loopback server certificate in a fresh
// temporary directory.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "switchyard test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &PKI{Dir: t.TempDir(), ca: ca, caKey: key, n: 1}
	p.CAFile = filepath.Join(p.Dir, "ca.pem")
	require.NoError(t, os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	p.CertFile, p.KeyFile = p.Issue(t, "node", true)
	return p
}

// Issue writes a certificate the CA signs, named name (its common name),
// and its key; server adds the loopback names and server authentication.
func (p *PKI) Issue(t testing.TB, name string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.n++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.n),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile = filepath.Join(p.Dir, fmt.Sprintf("%s-%d.pem", name, p.n))
	keyFile = filepath.Join(p.Dir, fmt.Sprintf("%s-%d-key.pem", name, p.n))
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile
}

// ServerTLS is the embedded server TLS configuration of p's node
// certificate; verifyClients requires client certificates.
func (p *PKI) ServerTLS(verifyClients bool) *events.TLSConfig {
	return &events.TLSConfig{CertFile: p.CertFile, KeyFile: p.KeyFile, CAFile: p.CAFile, VerifyClients: verifyClients}
}

// WithTLS makes the server require TLS (see events.EmbeddedConfig.TLS).
func WithTLS(tls *events.TLSConfig) Option {
	return func(c *events.EmbeddedConfig) { c.TLS = tls }
}

// StartClusterWith is StartCluster with opts applied to every node's
// configuration (after its ports, names and routes are set).
func StartClusterWith(t testing.TB, n int, opts ...Option) []*events.Embedded {
	t.Helper()
	cfgs := ProcessClusterConfigs(t, n, "sy-test", func(int) string { return t.TempDir() })
	nodes := make([]*events.Embedded, n)
	for i, cfg := range cfgs {
		for _, o := range opts {
			o(&cfg)
		}
		e, err := events.StartEmbedded(cfg)
		require.NoError(t, err, "start cluster node %d", i+1)
		t.Cleanup(e.Shutdown)
		nodes[i] = e
	}
	return nodes
}
