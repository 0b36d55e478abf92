package events

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// FsyncPolicy says when the embedded server forces writes to disk.
type FsyncPolicy string

// Fsync policies.
const (
	// FsyncAlways fsyncs every write before acknowledging it (JetStream
	// sync: always). An acknowledged event survives a process crash, an OS
	// crash and power loss. About 4-6k writes/s on a single disk.
	FsyncAlways FsyncPolicy = "always"
	// FsyncInterval fsyncs every FsyncInterval. An acknowledged event is in
	// the OS page cache: it survives a process crash (kill -9) but may be
	// lost on power loss or an OS crash. Several times faster.
	FsyncInterval FsyncPolicy = "interval"
)

// EmbeddedConfig configures an embedded NATS server with JetStream.
type EmbeddedConfig struct {
	// DataDir holds the JetStream store (JetStream adds a jetstream/
	// directory inside it). Required; reuse it to restart over the same
	// data.
	DataDir string
	// Fsync is FsyncAlways (default) or FsyncInterval.
	Fsync FsyncPolicy
	// FsyncInterval is the flush period under FsyncInterval. Default 1s;
	// must be unset under FsyncAlways.
	FsyncInterval time.Duration
	// MaxStore caps the file store in bytes. Default 8 GiB (JetStream's own
	// default, the free disk space, is not a limit an engine should take).
	MaxStore int64
	// MaxMemory caps memory-backed streams and consumers in bytes. Default
	// 256 MiB (JetStream's default is 75% of RAM).
	MaxMemory int64
	// ServerName names the server; unique within a cluster. Default
	// "switchyard".
	ServerName string
	// Listen is a host:port for client connections (port 0 picks a free
	// one), so other processes can connect (switchyard serve). Empty: no
	// listener; only in-process connections.
	Listen string
	// Cluster joins a cluster of routed servers; nil runs standalone.
	Cluster *ClusterConfig
	// TLS, when set, requires TLS on client connections (the in-process
	// ones aside) and, in a cluster, on routes, which always verify each
	// other's certificate against TLS.CAFile.
	TLS *TLSConfig
	// LogFile receives the server's log; empty disables logging.
	LogFile string
	// ReadyTimeout bounds start-up. Default 10s.
	ReadyTimeout time.Duration
	// Auth, when set, makes the server accept only connections of a
	// role's user with its secret (see Credentials), each with its role's
	// permissions; the in-process connections (Conn, Connect) are the
	// engine's. Nil: no authentication (tests of other concerns).
	Auth *Credentials `json:"-"`
	// Workers, with Auth, are the deployment's provisioned worker
	// identities (workerid.go): a worker connection must then sign with
	// a listed key, and may acknowledge only its own providers' jobs.
	// Nil: any worker connection with the role's secret serves every
	// provider.
	Workers *WorkerIdentities `json:"-"`
	// OnRefused, when set, is told the peer address of a refused
	// connection, once an hour per peer host at most.
	OnRefused func(peer string) `json:"-"`
}

// ClusterConfig makes an embedded server one node of a JetStream cluster.
type ClusterConfig struct {
	// Name is the cluster name, the same on every node.
	Name string
	// Listen is this node's host:port for routes (port 0 picks a free one).
	Listen string
	// Routes are the other nodes' route URLs (nats://host:port).
	Routes []string
}

// TLSConfig is an embedded server's TLS: PEM files, so a configuration
// stays plain data (it crosses processes as JSON).
type TLSConfig struct {
	// CertFile and KeyFile are the server's certificate and key. For a
	// cluster node the certificate serves both ways (server and client
	// authentication), since a route is dialled by either side.
	CertFile, KeyFile string
	// CAFile holds the CAs that sign client and route certificates.
	// Required for a cluster or with VerifyClients.
	CAFile string
	// VerifyClients requires every TCP client to present a certificate the
	// CA signed.
	VerifyClients bool
}

// Defaults of EmbeddedConfig.
const (
	DefaultFsyncInterval = time.Second
	DefaultMaxStore      = 8 << 30
	DefaultMaxMemory     = 256 << 20
	DefaultServerName    = "switchyard"
	DefaultReadyTimeout  = 10 * time.Second
)

// Limits of the embedded server, whoever connects (the deployment
// configuration docs/deploy/nats-server.conf sets the same).
const (
	// ServerMaxConnections bounds the client connections.
	ServerMaxConnections = 1024
	// ServerMaxPayload bounds a message (the largest event is
	// MaxEventBytes plus headers).
	ServerMaxPayload = 1 << 20
	// ServerMaxSubscriptions bounds one connection's subscriptions: a
	// role's connection may subscribe only under its own inbox, but
	// without a bound it could still pile up subscriptions without end.
	// The engine's connection holds one per run it drives, so this also
	// bounds the runs one engine drives at once.
	ServerMaxSubscriptions = 16384
	// ServerMaxPending bounds the bytes buffered for one slow
	// connection before the server drops it.
	ServerMaxPending = 64 << 20
)

// Validate reports the first invalid setting, before defaults apply.
func (c EmbeddedConfig) Validate() error {
	if c.DataDir == "" {
		return errors.New("embedded: DataDir is required")
	}
	switch c.Fsync {
	case "", FsyncAlways:
		if c.FsyncInterval != 0 {
			return errors.New("embedded: FsyncInterval applies only to fsync policy interval")
		}
	case FsyncInterval:
		if c.FsyncInterval < 0 {
			return errors.New("embedded: FsyncInterval must be positive")
		}
	default:
		return fmt.Errorf("embedded: fsync policy %q: want always or interval", c.Fsync)
	}
	if c.MaxStore < 0 || c.MaxMemory < 0 || c.ReadyTimeout < 0 {
		return errors.New("embedded: MaxStore, MaxMemory and ReadyTimeout must not be negative")
	}
	if c.ServerName != "" && strings.ContainsAny(c.ServerName, " \t\r\n.*>") {
		return fmt.Errorf("embedded: server name %q must not contain spaces, '.', '*' or '>'", c.ServerName)
	}
	if c.Listen != "" {
		if _, _, err := splitHostPort(c.Listen); err != nil {
			return fmt.Errorf("embedded: Listen: %w", err)
		}
	}
	if cl := c.Cluster; cl != nil {
		if cl.Name == "" {
			return errors.New("embedded: Cluster.Name is required")
		}
		if _, _, err := splitHostPort(cl.Listen); err != nil {
			return fmt.Errorf("embedded: Cluster.Listen: %w", err)
		}
	}
	if t := c.TLS; t != nil {
		if t.CertFile == "" || t.KeyFile == "" {
			return errors.New("embedded: TLS needs CertFile and KeyFile")
		}
		if t.CAFile == "" && (t.VerifyClients || c.Cluster != nil) {
			return errors.New("embedded: TLS.CAFile is required to verify clients or routes")
		}
	}
	return nil
}

// WithDefaults returns c with every unset field at its default.
func (c EmbeddedConfig) WithDefaults() EmbeddedConfig {
	c.Fsync = cmp.Or(c.Fsync, FsyncAlways)
	if c.Fsync == FsyncInterval && c.FsyncInterval == 0 {
		c.FsyncInterval = DefaultFsyncInterval
	}
	c.MaxStore = cmp.Or(c.MaxStore, DefaultMaxStore)
	c.MaxMemory = cmp.Or(c.MaxMemory, DefaultMaxMemory)
	c.ServerName = cmp.Or(c.ServerName, DefaultServerName)
	c.ReadyTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout)
	return c
}

func (c EmbeddedConfig) serverOptions() (*server.Options, error) {
	o := &server.Options{
		ServerName:         c.ServerName,
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		DontListen:         c.Listen == "",
		JetStream:          true,
		StoreDir:           c.DataDir,
		JetStreamMaxStore:  c.MaxStore,
		JetStreamMaxMemory: c.MaxMemory,
		SyncAlways:         c.Fsync == FsyncAlways,
		SyncInterval:       c.FsyncInterval,
		NoSigs:             true,
		NoLog:              c.LogFile == "",
		LogFile:            c.LogFile,
		// Bounds no connection may push the server past (issue 25).
		MaxConn:    ServerMaxConnections,
		MaxPayload: ServerMaxPayload,
		MaxPending: ServerMaxPending,
		MaxSubs:    ServerMaxSubscriptions,
	}
	if c.Auth != nil {
		a, err := newAuthenticator(c.Auth, c.OnRefused)
		a.workers = c.Workers
		if err != nil {
			return nil, err
		}
		o.CustomClientAuthentication = a
		// Each connection signs the nonce with its own nkey.
		o.AlwaysEnableNonce = true
	}
	if c.Listen != "" {
		host, port, err := splitHostPort(c.Listen)
		if err != nil {
			return nil, err
		}
		o.Host, o.Port = host, port
	}
	if cl := c.Cluster; cl != nil {
		host, port, err := splitHostPort(cl.Listen)
		if err != nil {
			return nil, err
		}
		o.Cluster = server.ClusterOpts{Name: cl.Name, Host: host, Port: port}
		o.Routes = server.RoutesFromStr(strings.Join(cl.Routes, ","))
	}
	if t := c.TLS; t != nil {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.CertFile, KeyFile: t.KeyFile, CaFile: t.CAFile, Verify: t.VerifyClients})
		if err != nil {
			return nil, fmt.Errorf("embedded: TLS: %w", err)
		}
		o.TLS, o.TLSConfig, o.TLSVerify, o.TLSTimeout = true, tc, t.VerifyClients, 5
		if c.Cluster != nil {
			rc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.CertFile, KeyFile: t.KeyFile, CaFile: t.CAFile, Verify: true})
			if err != nil {
				return nil, fmt.Errorf("embedded: route TLS: %w", err)
			}
			// A node dials routes too: it checks the others against the
			// same CA (as nats-server's own cluster tls block does).
			rc.RootCAs = rc.ClientCAs
			o.Cluster.TLSConfig, o.Cluster.TLSTimeout = rc, 5
		}
	}
	return o, nil
}

// splitHostPort parses host:port; port 0 becomes NATS's random port.
func splitHostPort(hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q: want 0-65535", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// Embedded is a running in-process NATS server with JetStream and an
// in-process client connection to it.
type Embedded struct {
	cfg  EmbeddedConfig
	srv  *server.Server
	nc   *nats.Conn
	once sync.Once
}

// StartEmbedded validates cfg, starts the server, waits until it is ready
// and opens an in-process connection (Conn). Call Shutdown when done.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	opts, err := cfg.serverOptions()
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	if cfg.LogFile != "" {
		srv.ConfigureLogger()
	}
	srv.Start()
	if !srv.ReadyForConnections(cfg.ReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("embedded: server not ready within %v", cfg.ReadyTimeout)
	}
	e := &Embedded{cfg: cfg, srv: srv}
	if e.nc, err = e.Connect(); err != nil {
		e.Shutdown()
		return nil, err
	}
	return e, nil
}

// Conn is the in-process client connection opened at start; Shutdown closes
// it. Use it for the engine's own reads and writes (in-process publishing is
// about 2.5x faster than TCP loopback).
func (e *Embedded) Conn() *nats.Conn { return e.nc }

// Connect opens another in-process connection, as the engine when the
// server authenticates; the caller closes it.
func (e *Embedded) Connect(opts ...nats.Option) (*nats.Conn, error) {
	return e.ConnectAs(RoleEngine, opts...)
}

// ConnectAs opens another in-process connection as role r (the role
// matters only when the server authenticates); the caller closes it.
func (e *Embedded) ConnectAs(r Role, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{nats.InProcessServer(e.srv), nats.Name("switchyard-embedded"), nats.MaxReconnects(-1)}
	if e.cfg.Auth != nil {
		base = append(base, e.cfg.Auth.ClientOptions(r)...)
	}
	nc, err := nats.Connect("", append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("embedded: connect in-process: %w", err)
	}
	return nc, nil
}

// ClientURL is the nats:// URL other processes connect to, or "" when the
// server does not listen (EmbeddedConfig.Listen unset).
func (e *Embedded) ClientURL() string {
	if e.cfg.Listen == "" {
		return ""
	}
	return e.srv.ClientURL()
}

// ClusterURL is this node's route URL, or "" when not clustered.
func (e *Embedded) ClusterURL() string {
	if e.cfg.Cluster == nil {
		return ""
	}
	if a := e.srv.ClusterAddr(); a != nil {
		return "nats://" + a.String()
	}
	return ""
}

// Config is the configuration the server runs with, defaults applied.
func (e *Embedded) Config() EmbeddedConfig { return e.cfg }

// Server is the underlying server, for tests and diagnostics.
func (e *Embedded) Server() *server.Server { return e.srv }

// Shutdown closes the in-process connection, shuts the server down (stepping
// down any Raft leadership it holds) and waits until it has stopped. It is
// safe to call more than once.
func (e *Embedded) Shutdown() {
	e.once.Do(func() {
		if e.nc != nil {
			e.nc.Close()
		}
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
	})
}
