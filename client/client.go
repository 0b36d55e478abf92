package client

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
)

// Role is the role a client logs in as. A role allows only its own
// requests: a reader reads runs; a parent also submits runs and answers
// lanes.
type Role = events.Role

// The roles a client may connect as.
const (
	// RoleParent submits runs, cancels them and answers their lanes
	// (verdicts, operations, recoveries, native launches). The default.
	RoleParent = events.RoleParent
	// RoleReader reads runs, reports, usage and workers.
	RoleReader = events.RoleReader
)

// Options say where the events are and how to log in.
//
// Without URLs and NATSContext the client uses a data directory (DataDir,
// or the default the CLI uses: $SWITCHYARD_DATA_DIR, else
// $XDG_STATE_HOME/switchyard, else ~/.local/state/switchyard). It
// connects to the `switchyard serve` holding it, through serve.json and
// with the credentials in serve.auth, and follows that serve when it is
// restarted, even on another port. It never starts a server of its own and
// never creates anything in the directory.
//
// With URLs (or a NATSContext naming servers) it connects to that server
// or cluster, as the role's user: the login comes from CredsFile, NKeyFile,
// User/Password or Token (or the context), TLS from the TLS* files.
type Options struct {
	// DataDir is the data directory ("" means the default).
	DataDir string
	// URLs are NATS servers of a deployment (nats://host:4222,
	// tls://host:4222); they win over DataDir. With URLs, DataDir (when
	// set) is the shared directory the engine freezes prompts in.
	URLs []string
	// NATSContext names a nats CLI context ($XDG_CONFIG_HOME/nats/context/
	// NAME.json): its servers (unless URLs is set), login and TLS files.
	// The fields below override it.
	NATSContext string
	// CredsFile is a NATS credentials file (user JWT and nkey seed);
	// NKeyFile a user nkey seed file.
	CredsFile, NKeyFile string
	// User and Password, or Token, log in to servers that use them.
	User, Password, Token string
	// TLSCA is the PEM file of the CAs that sign the servers'
	// certificates (default: the system's roots); TLSCert and TLSKey the
	// client's certificate and key for servers that verify clients.
	TLSCA, TLSCert, TLSKey string
	// Replicas: stream replicas with URLs (0: existing streams keep
	// theirs; new ones get 3 with three or more URLs, else 1).
	Replicas int
	// Role is the role to connect as (default RoleParent).
	Role Role
	// Logger receives the engine's warnings (default: discarded).
	Logger *slog.Logger
}

// Client is a connection to a Switchyard deployment. It is safe for
// concurrent use; Close it when done.
type Client struct {
	conn *engineconn.Conn
	eng  *engine.Engine
	role Role
}

// Dial connects as o says. It fails with ErrNotFound for a data directory
// that holds no Switchyard data, ErrUnavailable when nothing serves it or
// the servers cannot be reached, ErrPermissionDenied when the login is
// refused, and *InvalidInputError for options that do not go together.
func Dial(ctx context.Context, o Options) (*Client, error) {
	role := o.Role
	if role == "" {
		role = RoleParent
	}
	if role != RoleParent && role != RoleReader {
		return nil, &InvalidInputError{Field: "Role", Reason: "unknown role " + string(role) + "; want parent or reader"}
	}
	opts := engineconn.Options{DataDir: o.DataDir, Role: role, Query: true, NoEmbed: true, LockWait: 5 * time.Second}
	urls, auth, source, err := natsTarget(o, role)
	if err != nil {
		return nil, err
	}
	if len(urls) > 0 {
		opts.URLs, opts.Auth, opts.Source, opts.Replicas = urls, auth, source, o.Replicas
	}
	conn, err := engineconn.Open(ctx, opts)
	if err != nil {
		return nil, mapError(err, "")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	eng, err := conn.NewEngine(logger)
	if err != nil {
		conn.Close()
		return nil, mapError(err, "DataDir")
	}
	return &Client{conn: conn, eng: eng, role: role}, nil
}

// natsTarget resolves the servers and login of o: URLs beat the context's
// servers; the fields beat the context's login.
func natsTarget(o Options, role Role) ([]string, events.ClientAuth, string, error) {
	var a events.ClientAuth
	urls := append([]string(nil), o.URLs...)
	source := "Options.URLs " + events.RedactURLs(strings.Join(urls, ","))
	if o.NATSContext != "" {
		nctx, err := events.LoadNATSContext(o.NATSContext)
		if err != nil {
			return nil, a, "", invalid("NATSContext", err)
		}
		a = nctx.Auth
		if len(urls) == 0 {
			urls = events.SplitURLs(nctx.URL)
			source = "context " + o.NATSContext + " (" + events.RedactURLs(nctx.URL) + ")"
		}
		if len(urls) == 0 {
			return nil, a, "", &InvalidInputError{Field: "NATSContext", Reason: "context " + o.NATSContext + " names no server url; set Options.URLs"}
		}
	}
	if len(urls) == 0 {
		for _, f := range []struct{ name, v string }{{"CredsFile", o.CredsFile}, {"NKeyFile", o.NKeyFile}, {"User", o.User},
			{"Token", o.Token}, {"TLSCA", o.TLSCA}, {"TLSCert", o.TLSCert}, {"TLSKey", o.TLSKey}} {
			if f.v != "" {
				return nil, a, "", &InvalidInputError{Field: f.name, Reason: "applies only to servers given by URLs or NATSContext (a data directory's serve has its own credentials)"}
			}
		}
		return nil, a, "", nil
	}
	if o.CredsFile != "" || o.NKeyFile != "" || o.User != "" || o.Token != "" {
		a.CredsFile, a.NKeyFile, a.User, a.Password, a.Token = o.CredsFile, o.NKeyFile, o.User, o.Password, o.Token
		a.Names.CredsFile, a.Names.NKeyFile, a.Names.User, a.Names.Password, a.Names.Token =
			"Options.CredsFile", "Options.NKeyFile", "Options.User", "Options.Password", "Options.Token"
	}
	for _, f := range []struct {
		v          string
		path, name *string
		field      string
	}{
		{o.TLSCA, &a.TLSCA, &a.Names.TLSCA, "Options.TLSCA"},
		{o.TLSCert, &a.TLSCert, &a.Names.TLSCert, "Options.TLSCert"},
		{o.TLSKey, &a.TLSKey, &a.Names.TLSKey, "Options.TLSKey"},
	} {
		if f.v != "" {
			*f.path, *f.name = f.v, f.field
		}
	}
	if a.InboxPrefix == "" {
		// A deployment's role users subscribe only to their own inboxes.
		a.InboxPrefix = events.InboxPrefix(role)
	}
	if err := a.Validate(); err != nil {
		return nil, a, "", invalid("Options", err)
	}
	return urls, a, source, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	if c == nil {
		return nil
	}
	c.conn.Close()
	return nil
}

// Describe says where the client is connected, for messages: "the serve of
// DIR (pid N, URL)" or "NATS URLS".
func (c *Client) Describe() string { return c.conn.Describe() }
