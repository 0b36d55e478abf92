package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
)

// The connection to the events (dialing --nats or the data directory's
// serve, starting the embedded server, serve.json and serve.lock) lives in
// internal/engineconn, which the client package shares. This file adapts
// it to the commands: their flags in, their exit codes out.

// connMode says how a command reached the events.
type connMode = engineconn.Mode

const (
	// connExternal: --nats, an existing server or cluster.
	connExternal = engineconn.External
	// connServe: the data directory's serve (or self-contained run), over
	// loopback.
	connServe = engineconn.Serve
	// connEmbedded: this process started the data directory's embedded
	// server and holds its lock.
	connEmbedded = engineconn.Embedded
)

// serveInfo is serve.json: how other processes reach the process holding
// the data directory's lock.
type serveInfo = engineconn.ServeInfo

// linkEvents reports a client connection's losses and recoveries.
type linkEvents = engineconn.LinkEvents

// Names of the data directory's files and settings, for messages.
const (
	authFileName  = engineconn.AuthFileName
	serveInfoName = engineconn.ServeInfoName
	dataDirEnv    = engineconn.DataDirEnv
	dataDirHelp   = engineconn.DataDirHelp
	storeDirName  = engineconn.StoreDirName
)

// The data directory's helpers (engineconn/datadir.go).
var (
	readServeInfo  = engineconn.ReadServeInfo
	locateDataDir  = engineconn.LocateDataDir
	resolveDataDir = engineconn.ResolveDataDir
	defaultDataDir = engineconn.DefaultDataDir
	hasStore       = engineconn.HasStore
	dataDirFlag    = engineconn.DataDirFlag
	shellQuote     = engineconn.ShellQuote
)

// storeAccessError is the error of a data directory whose store this user
// may not look into, or nil.
func storeAccessError(dir string) error { return connError(engineconn.StoreAccessError(dir)) }

// connectOptions says what a command needs from its connection (see
// engineconn.Options for each).
type connectOptions struct {
	serveKind string
	listen    string
	noEmbed   bool
	exclusive bool
	lockWait  time.Duration
	onWait    func(msg string)
	query     bool
	link      linkEvents
	refused   func(peer string)
	// workers are serve's worker identities (nil: none, or the data
	// directory's file for an embedded server); workerSeed is a worker's
	// --identity-seed.
	workers    *events.WorkerIdentities
	workerSeed string
}

// engineConn is an open connection to the events, with the parts the
// commands read copied out of it.
type engineConn struct {
	*engineconn.Conn
	mode       connMode
	dataDir    string
	urls       []string
	js         *events.JetStream
	holder     serveInfo
	defaultDir bool
}

// openEngineConn connects the way f and o say (engineconn.Open):
//
//   - with --nats: to that server or cluster (replicas per --replicas);
//   - else, when another process holds the data directory and listens
//     (serve.json): to it, over loopback;
//   - else (o.noEmbed aside): it starts the data directory's embedded
//     server in this process, holding serve.lock while it runs.
func openEngineConn(ctx context.Context, f engineFlags, o connectOptions) (*engineConn, error) {
	opts := engineconn.Options{
		DataDir: f.dataDir, Fsync: events.FsyncPolicy(f.fsync), Role: f.role(),
		ServeKind: o.serveKind, Listen: o.listen, NoEmbed: o.noEmbed, Exclusive: o.exclusive,
		LockWait: o.lockWait, OnWait: o.onWait, Query: o.query, Link: o.link, Refused: o.refused,
		Workers: o.workers, WorkerSeed: o.workerSeed,
	}
	if f.nats != "" {
		opts.URLs = events.SplitURLs(f.nats)
		opts.Source = f.natsAuth.source(f.nats)
		opts.Auth = f.natsAuth.auth
		opts.Replicas = f.replicas
	}
	c, err := engineconn.Open(ctx, opts)
	if err != nil {
		return nil, connError(err)
	}
	return &engineConn{
		Conn: c, mode: c.Mode(), dataDir: c.DataDir(), urls: c.URLs(), js: c.JetStream(),
		holder: c.Holder(), defaultDir: c.DefaultDir(),
	}, nil
}

// connError gives a connection error the command line's exit code.
func connError(err error) error {
	var ce *engineconn.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch {
	case ce.Interrupted:
		return &cliError{code: exitInterrupted, msg: ce.Error(), cause: ce}
	case ce.Usage:
		return &cliError{code: exitUsage, msg: ce.Error(), cause: ce}
	}
	return &cliError{code: exitGeneric, msg: ce.Error(), cause: ce}
}

// Close shuts down what the connection opened.
func (c *engineConn) Close() {
	if c == nil {
		return
	}
	c.Conn.Close()
}

// store, queue and claims are the three seams.
func (c *engineConn) store() events.Store   { return c.js.Store() }
func (c *engineConn) queue() events.Queue   { return c.js.Queue() }
func (c *engineConn) claims() events.Claims { return c.js.Claims() }

// capacity is the deployment's capacity store.
func (c *engineConn) capacity() events.Capacity { return c.js.Capacity() }

// describe says where the events are, for messages.
func (c *engineConn) describe() string { return c.Describe() }

// engineDataDir is the directory the engine keeps attempt files in.
func (c *engineConn) engineDataDir(engineFlags) (string, error) { return c.EngineDataDir() }

// newEngine builds an engine on the connection (engineconn.NewEngine).
func (c *engineConn) newEngine(_ engineFlags, logger *slog.Logger) (engineAPI, error) {
	e, err := c.NewEngine(logger)
	return e, connError(err)
}

// connFlags renders the options that reach the same events from another
// shell (--nats or a non-default --data-dir), for the commands run prints.
func (c *engineConn) connFlags(f engineFlags) string {
	switch {
	case f.nats != "":
		return f.natsAuth.render(f.nats)
	case !c.defaultDir && c.dataDir != "":
		return " --data-dir " + shellQuote(c.dataDir)
	}
	return ""
}

// quietLogger logs warnings and errors to stderr; commands print their own
// results.
func quietLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
