package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// engineFlags are the options every engine command shares: where the
// events live (--nats, or the data directory's own server) and how an
// embedded server is started.
type engineFlags struct {
	nats     string
	dataDir  string
	replicas int
	fsync    string
	// natsAuth: credentials and TLS for --nats (natsflags.go).
	natsAuth natsFlags
	// cmd is the command the flags belong to; its name decides the role
	// the command connects as (commandRole).
	cmd *cobra.Command
}

// fsyncHelp is --fsync's help: the durability trade must be stated where
// the option is chosen.
const fsyncHelp = `when an embedded server fsyncs: "always" fsyncs every write before
acknowledging it; "interval" fsyncs once a second, trading durability for
throughput: acknowledged events can be lost on an OS crash or power loss
(a process crash loses nothing)`

// addEngineFlags declares --nats, --data-dir, --replicas and, when embed is
// true (the command may start the data directory's embedded server),
// --fsync.
func addEngineFlags(c *cobra.Command, f *engineFlags, embed bool) {
	f.cmd = c
	fl := c.Flags()
	fl.StringVar(&f.nats, "nats", "", "comma-separated NATS URLs of an existing server or cluster (nats://a:4222,tls://b:4222;\ndefault $NATS_URL); without it the data directory's serve (or embedded server) is used")
	fl.StringVar(&f.dataDir, "data-dir", "", dataDirHelp)
	fl.IntVar(&f.replicas, "replicas", 0, "stream replicas with --nats: 3 for a three-node cluster. Without it, streams that exist keep\ntheirs and new ones get 3 when --nats lists three or more servers, else 1; with it, existing\nstreams are changed to it")
	if embed {
		fl.StringVar(&f.fsync, "fsync", string(events.FsyncAlways), fsyncHelp)
	}
	addNATSFlags(c, &f.natsAuth)
}

// validate checks the flags' own values, before anything connects.
func (f *engineFlags) validate(c *cobra.Command) error {
	if err := f.natsAuth.resolve(c, &f.nats); err != nil {
		return err
	}
	if c.Flags().Changed("nats") && len(events.SplitURLs(f.nats)) == 0 {
		return usagef("--nats %q lists no URL; pass nats://host:port[,nats://host:port...]", f.nats)
	}
	if f.replicas < 0 || f.replicas > 5 {
		return usagef("--replicas %d is out of range; use 1 (single server) to 5, typically 3 for a cluster", f.replicas)
	}
	if f.replicas != 0 && f.nats == "" {
		return usagef("--replicas applies only with --nats (an embedded server always has one replica); drop it or add --nats URL")
	}
	if f.nats != "" && c.Flags().Changed("fsync") {
		return usagef("--fsync applies to an embedded server; with --nats the servers' own configuration decides, so drop --fsync")
	}
	switch events.FsyncPolicy(f.fsync) {
	case "", events.FsyncAlways, events.FsyncInterval:
	default:
		return usagef("--fsync %q: want always or interval", f.fsync)
	}
	return nil
}

// connMode says how a command reached the events.
type connMode int

const (
	// connExternal: --nats, an existing server or cluster.
	connExternal connMode = iota + 1
	// connServe: the data directory's serve (or self-contained run), over
	// loopback.
	connServe
	// connEmbedded: this process started the data directory's embedded
	// server and holds its lock.
	connEmbedded
)

// connectOptions says what a command needs from its connection.
type connectOptions struct {
	// serveKind, when set, makes an embedded owner listen on listen and
	// write serve.json with this kind ("serve" or "run"), so other
	// processes (workers, the parent's inspect, native, cancel) can reach
	// it.
	serveKind string
	listen    string
	// noEmbed refuses to start an embedded server: the command needs a
	// server that outlives it (worker).
	noEmbed bool
	// exclusive refuses to connect to another holder: the command must own
	// the data directory (serve).
	exclusive bool
	// lockWait bounds waiting for a holder that does not listen (another
	// short command) to finish.
	lockWait time.Duration
	// onWait, when set, is told once that the command waits for another
	// run to release the data directory.
	onWait func(msg string)
	// query: the command reads or answers stored runs, so it needs a data
	// directory that holds a store and creates nothing (no directory, no
	// store, no lock file) when there is none.
	query bool
	// link, when set, is told when a client connection (to a serve or to
	// --nats) is lost and when it is back.
	link linkEvents
	// refused, when set, is told the peer address of a connection the
	// embedded server refused for want of valid credentials (once an hour
	// per peer host); by default it is logged to stderr.
	refused func(peer string)
}

// engineConn is an open connection to the events: the JetStream seams and
// whatever must be closed after them.
type engineConn struct {
	mode    connMode
	dataDir string
	urls    []string // the server URLs other processes use (external, serve, or a listening embedded owner)
	emb     *events.Embedded
	js      *events.JetStream
	lock    *dirLock
	closeNC func()
	// holder is the serve.json of the process served (connServe).
	holder serveInfo
	// wroteInfo: this process wrote serve.json and removes it on Close.
	wroteInfo bool
	// wroteAuth: this process wrote the credentials file and removes it
	// on Close.
	wroteAuth bool
	// defaultDir: the data directory is the built-in default (neither
	// --data-dir nor SWITCHYARD_DATA_DIR), which any shell finds unaided.
	defaultDir bool
	// dialer finds the data directory's holder on every (re)connect
	// (connServe).
	dialer *dataDirDialer
	// watch tracks whether a client connection is up (connServe,
	// connExternal).
	watch *linkWatch
	// query: see connectOptions.query.
	query bool
}

// openEngineConn connects the way f and o say:
//
//   - with --nats: to that server or cluster (replicas per --replicas);
//   - else, when another process holds the data directory and listens
//     (serve.json): to it, over loopback;
//   - else (o.noEmbed aside): it starts the data directory's embedded
//     server in this process, holding serve.lock while it runs.
func openEngineConn(ctx context.Context, f engineFlags, o connectOptions) (*engineConn, error) {
	if f.nats != "" {
		return openExternal(ctx, f, o)
	}
	dir, err := connDataDir(f, o)
	if err != nil {
		return nil, err
	}
	return dataDirConn(ctx, dir, f, o)
}

// openExternal connects to the server or cluster --nats names.
func openExternal(ctx context.Context, f engineFlags, o connectOptions) (*engineConn, error) {
	urls := events.SplitURLs(f.nats)
	replicas := f.replicas
	if replicas == 0 {
		replicas = 1
		if len(urls) >= 3 {
			replicas = 3
		}
	}
	auth, err := f.natsAuth.options()
	if err != nil {
		return nil, err
	}
	watch := &linkWatch{settling: 10 * time.Second}
	opts := append(linkOptions(o.link, watch), nats.Timeout(5*time.Second))
	// The login and TLS given, and the role's reply subjects (or the
	// context's inbox_prefix).
	opts = append(opts, auth...)
	if f.natsAuth.auth.Method() == "none" {
		// --nats naming a serve's own server: its data directory's
		// credentials, as the command's role, and this connection's own
		// reply subjects (they replace the role's, given above).
		opts = append(opts, serveCredentials(f, urls)...)
	}
	nc, err := events.Connect(urls, opts...)
	if errors.Is(err, nats.ErrAuthorization) {
		return nil, failf("%s refused this connection's credentials (%s: %v); pass the credentials of a user allowed the %s role (--creds, --nkey, --context, or NATS_USER/NATS_PASSWORD/NATS_TOKEN; see docs/DEPLOY.md), or, for a switchyard serve's own server, its --data-dir (its credentials are there)",
			f.natsAuth.source(f.nats), f.natsAuth.auth.Method(), err, f.role())
	}
	if err != nil {
		return nil, failf("cannot reach %s: %v; check the URLs, the credentials (%s) and TLS options, and that the servers run with JetStream",
			f.natsAuth.source(f.nats), err, f.natsAuth.auth.Method())
	}
	// Streams that exist keep their replicas unless --replicas asks
	// for a change: a command pointed at one node of a cluster must
	// not strip its replication.
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: replicas, ForceReplicas: f.replicas != 0})
	if err != nil {
		defer nc.Close()
		if rerr := f.natsAuth.refused(nc, f.nats); rerr != nil {
			return nil, rerr
		}
		return nil, failf("%s: %v; check that JetStream is enabled, that the user may use it, and --replicas %d fits the cluster", f.natsAuth.source(f.nats), err, replicas)
	}
	return &engineConn{mode: connExternal, urls: urls, js: js, closeNC: nc.Close, watch: watch, query: o.query}, nil
}

// connDataDir is the data directory the command uses. A query or worker
// needs one that holds a store and creates nothing; the others create it.
func connDataDir(f engineFlags, o connectOptions) (string, error) {
	if !o.query && !o.noEmbed {
		dir, err := resolveDataDir(f.dataDir)
		if err != nil {
			return "", usagef("%v", err)
		}
		return dir, nil
	}
	// Create nothing: a typo in --data-dir must not leave a fresh,
	// empty store behind that then answers "no runs".
	dir, err := locateDataDir(f.dataDir)
	if err != nil {
		return "", usagef("%v", err)
	}
	if err := storeAccessError(dir); err != nil {
		return "", err
	}
	if err := events.CheckPrivateDir(dir, "data directory"); err != nil && !isNotExist(err) {
		return "", failf("%v", err)
	}
	if !hasStore(dir) {
		if o.noEmbed {
			return "", failf("no Switchyard data in %s and no switchyard serve for it; start `switchyard serve%s` first (it creates the store), or pass --nats URL",
				dir, dataDirFlag(dir))
		}
		return "", noStoreError(dir, f)
	}
	return dir, nil
}

// dataDirConn looks at who holds dir (serve.lock, serve.json, the holder's
// pid) and does what decideHold says, looking again every 50ms while it
// says wait; a holder that does not listen is waited for up to o.lockWait
// (30s by default), another self-contained run until it finishes.
func dataDirConn(ctx context.Context, dir string, f engineFlags, o connectOptions) (*engineConn, error) {
	wait := o.lockWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	facts := holdFacts{noEmbed: o.noEmbed, exclusive: o.exclusive, isRun: o.serveKind == "run"}
	for {
		lock, err := tryLockDataDir(dir)
		if err != nil && !errors.Is(err, errLocked) {
			return nil, failf("%v", err)
		}
		facts.lockFree, facts.info, facts.alive = err == nil, nil, false
		if !facts.lockFree {
			if info, err := readServeInfo(dir); err == nil {
				facts.info, facts.alive = &info, info.live() == nil
			}
		}
		facts.expired = time.Now().After(deadline)
		d := decideHold(facts)
		switch d.action {
		case holdEmbed:
			c, err := startEmbedded(ctx, dir, f, o, lock)
			if err != nil {
				lock.Unlock()
				return nil, err
			}
			c.defaultDir, c.query = isBuiltinDataDir(dir), o.query
			return c, nil
		case holdRefuse:
			lock.Unlock()
			return nil, holdRefusal(d.reason, dir, facts.info)
		case holdConnect:
			c, err := connectHolder(ctx, dir, *facts.info, o.link, f.role())
			if err == nil {
				c.defaultDir, c.query = isBuiltinDataDir(dir), o.query
				return c, nil
			}
			if d.lastTry {
				return nil, err
			}
		case holdWait:
			if d.announce && o.onWait != nil {
				o.onWait(fmt.Sprintf("data directory %s is in use by another switchyard run (pid %d); waiting for it to finish (a `switchyard serve%s` runs several at once)",
					dir, facts.info.PID, dataDirFlag(dir)))
			}
			facts.waitingForRun = facts.waitingForRun || d.waitForRun
		}
		if !events.Sleep(ctx, 50*time.Millisecond) {
			return nil, &cliError{code: exitInterrupted, msg: "interrupted while waiting for data directory " + dir}
		}
	}
}

// holdRefusal is the error of a refusal decideHold gave for dir (info: the
// holder's serve.json, when read).
func holdRefusal(r holdReason, dir string, info *serveInfo) error {
	switch r {
	case refuseNoServe:
		return failf("no switchyard serve is running for data directory %s; start one with `switchyard serve%s`, or pass --nats URL", dir, dataDirFlag(dir))
	case refuseServed:
		return failf("data directory %s is already served by %s (pid %d, %s); stop it first or pass another --data-dir",
			dir, info.Kind, info.PID, info.URL)
	case refuseSelfContained:
		return failf("data directory %s is held by a self-contained switchyard %s (pid %d), which stops when its run is final; start `switchyard serve%s` for workers, or pass --nats URL",
			dir, info.Kind, info.PID, dataDirFlag(dir))
	case refuseNotListening:
		return failf("no switchyard serve is running for data directory %s (pid %d holds it without listening); start `switchyard serve%s`, or pass --nats URL",
			dir, lockHolder(dir), dataDirFlag(dir))
	default:
		return failf("data directory %s stays locked by pid %d, which does not serve it; wait for it to finish or pass another --data-dir",
			dir, lockHolder(dir))
	}
}

// startEmbedded starts the data directory's embedded server in this
// process (the caller holds lock).
func startEmbedded(ctx context.Context, dir string, f engineFlags, o connectOptions, lock *dirLock) (*engineConn, error) {
	// A serve.json left by a holder that died names no one now.
	os.Remove(filepath.Join(dir, serveInfoName))
	os.Remove(filepath.Join(dir, authFileName))
	// Every start draws fresh secrets: the server admits only role users
	// holding them, and other processes read them from a file only this
	// user can read.
	creds, err := events.NewCredentials()
	if err != nil {
		return nil, failf("%v", err)
	}
	cfg := events.EmbeddedConfig{DataDir: dir, Fsync: events.FsyncPolicy(f.fsync), Auth: creds, OnRefused: o.refused}
	cfg.Fsync = cmp.Or(cfg.Fsync, events.FsyncAlways)
	if cfg.OnRefused == nil {
		cfg.OnRefused = func(peer string) {
			fmt.Fprintf(os.Stderr, "switchyard: refused a connection from %s to the server of %s: it did not present this start's credentials (%s); only processes of the user that started it can connect\n",
				peer, dir, filepath.Join(dir, authFileName))
		}
	}
	authPath := filepath.Join(dir, authFileName)
	if o.serveKind != "" {
		cfg.Listen = o.listen
		cfg.Listen = cmp.Or(cfg.Listen, "127.0.0.1:0")
		// The credentials before the server listens: a client reconnecting
		// the moment the port opens (a restart on the recorded port) reads
		// this start's secrets, not a missing file.
		if err := events.WriteCredentials(authPath, creds); err != nil {
			return nil, failf("%v", err)
		}
	}
	started := false
	defer func() {
		if !started {
			os.Remove(authPath)
		}
	}()
	recorded := ""
	if o.serveKind == "serve" {
		// A taken port would only show as a start-up timeout.
		if err := portFree(cfg.Listen); err != nil {
			return nil, failf("cannot listen on --listen %s: %v; pass a free port (127.0.0.1:0 picks one)", cfg.Listen, err)
		}
		// Asked for any port: come back on the one the last serve had,
		// when it is free, so the data directory's clients never move.
		if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && port == "0" {
			if r := recordedListen(dir, host); r != "" && portFree(r) == nil {
				recorded = r
			}
		}
	}
	var emb *events.Embedded
	if recorded != "" {
		rcfg := cfg
		rcfg.Listen = recorded
		if emb, err = events.StartEmbedded(rcfg); err == nil {
			cfg = rcfg
		}
		// Taken meanwhile: any free port, as asked.
	}
	if emb == nil {
		emb, err = events.StartEmbedded(cfg)
	}
	if err != nil {
		if o.serveKind == "serve" {
			return nil, failf("start the embedded server of %s on --listen %s: %v; if the port is taken, pass another (127.0.0.1:0 picks a free one)", dir, cfg.Listen, err)
		}
		return nil, failf("start the embedded server of %s: %v", dir, err)
	}
	js, err := events.OpenJetStream(ctx, emb.Conn(), events.JetStreamConfig{Replicas: 1})
	if err != nil {
		emb.Shutdown()
		return nil, failf("open the streams in %s: %v", dir, err)
	}
	c := &engineConn{mode: connEmbedded, dataDir: dir, emb: emb, js: js, lock: lock}
	if u := emb.ClientURL(); u != "" {
		c.urls = []string{u}
		// The credentials (written before the server started) come
		// before serve.json: a client that finds serve.json finds them.
		if o.serveKind == "" {
			if err := events.WriteCredentials(authPath, creds); err != nil {
				c.Close()
				return nil, failf("%v", err)
			}
		}
		c.wroteAuth = true
		info := serveInfo{PID: os.Getpid(), URL: u, Kind: o.serveKind, DataDir: dir, Fsync: string(cfg.Fsync), Started: time.Now().UTC(), Start: events.SelfStart()}
		if err := writeServeInfo(dir, info); err != nil {
			c.Close()
			return nil, failf("%v", err)
		}
		c.wroteInfo = true
		if o.serveKind == "serve" {
			if pu, err := url.Parse(u); err == nil && pu.Host != "" {
				recordListen(dir, pu.Host)
			}
		}
	}
	started = true
	return c, nil
}

// portFree reports an error when addr (host:port, port not 0) cannot be
// listened on right now.
func portFree(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return oe.Err
		}
		return err
	}
	return l.Close()
}

// connectHolder connects to the process serving dir as role, with the
// secret of the holder's credentials file (read again at every reconnect).
func connectHolder(ctx context.Context, dir string, info serveInfo, link linkEvents, role events.Role) (*engineConn, error) {
	d := &dataDirDialer{dir: dir, timeout: 2 * time.Second}
	watch := &linkWatch{settling: 10 * time.Second}
	authPath := filepath.Join(dir, authFileName)
	opts := append(linkOptions(link, watch), nats.Timeout(2*time.Second), nats.SetCustomDialer(d))
	opts = append(opts, events.FileClientOptions(authPath, role)...)
	// The URL only seeds the client's server pool; d dials whatever
	// serve.json names at each attempt.
	nc, err := events.Connect([]string{info.URL}, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) {
			if _, rerr := events.ReadCredentials(authPath); rerr != nil {
				return nil, failf("the %s of data directory %s (pid %d) refused this connection: %v; it writes its credentials there at start, readable only by the user that started it: run switchyard as that user",
					info.Kind, dir, info.PID, rerr)
			}
			return nil, failf("the %s of data directory %s (pid %d) refused the credentials in %s; if it was just restarted, try again", info.Kind, dir, info.PID, authPath)
		}
		return nil, failf("cannot reach the %s of data directory %s (pid %d, %s): %v; is it still running?", info.Kind, dir, info.PID, info.URL, err)
	}
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 1, SetupTimeout: 10 * time.Second})
	if err != nil {
		nc.Close()
		return nil, failf("the %s of data directory %s (pid %d, %s): %v", info.Kind, dir, info.PID, info.URL, err)
	}
	if h := d.holder(); h.PID != 0 {
		info = h
	}
	return &engineConn{mode: connServe, dataDir: dir, urls: []string{info.URL}, js: js, closeNC: nc.Close, holder: info, dialer: d, watch: watch}, nil
}

// Close shuts down what the connection opened: the client connection, or
// the embedded server (then serve.json and the lock go).
func (c *engineConn) Close() {
	if c == nil {
		return
	}
	if c.closeNC != nil {
		c.closeNC()
	}
	if c.emb != nil {
		c.emb.Shutdown()
	}
	if c.wroteInfo {
		removeServeInfo(c.dataDir, os.Getpid())
	}
	if c.wroteAuth {
		os.Remove(filepath.Join(c.dataDir, authFileName))
	}
	c.lock.Unlock()
}

// store, queue and claims are the three seams.
func (c *engineConn) store() events.Store   { return c.js.Store() }
func (c *engineConn) queue() events.Queue   { return c.js.Queue() }
func (c *engineConn) claims() events.Claims { return c.js.Claims() }

// capacity is the deployment's capacity store: each provider's current
// capacity report, which workers put and the engine's eligibility gate,
// status and usage read.
func (c *engineConn) capacity() events.Capacity { return c.js.Capacity() }

// describe says where the events are, for messages.
func (c *engineConn) describe() string {
	switch c.mode {
	case connExternal:
		return "NATS " + events.RedactURLs(strings.Join(c.urls, ","))
	case connServe:
		h := c.holder
		if c.dialer != nil {
			if now := c.dialer.holder(); now.PID != 0 {
				h = now
			}
		}
		return fmt.Sprintf("the %s of %s (pid %d, %s)", h.Kind, c.dataDir, h.PID, h.URL)
	default:
		return "the embedded server of " + c.dataDir
	}
}

// engineDataDir is the directory the engine keeps attempt files in: the
// data directory, or for --nats the default (or given) one on this host.
func (c *engineConn) engineDataDir(f engineFlags) (string, error) {
	if c.dataDir != "" {
		return c.dataDir, nil
	}
	if c.query {
		return locateDataDir(f.dataDir)
	}
	return resolveDataDir(f.dataDir)
}

// newEngine builds an engine on the connection. Only serve and a
// self-contained run call its Run loop; every other command uses it for
// one request.
func (c *engineConn) newEngine(f engineFlags, logger *slog.Logger) (*engine.Engine, error) {
	dir, err := c.engineDataDir(f)
	if err != nil {
		return nil, usagef("%v", err)
	}
	cfg := engine.Config{
		Store: c.store(), Queue: c.queue(), Claims: c.claims(),
		DataDir: dir, Policy: policy.DefaultOptions(), Now: time.Now, Logger: logger,
		Capacity: c.capacity(), CapacityMaxAge: capacityMaxAge,
	}
	if c.mode != connEmbedded && f.role() != events.RoleEngine {
		// Only the engine writes events: a client's runs go to the
		// engine serving the store, which records them.
		cfg.SubmitVia = func(ctx context.Context, env events.Envelope) error {
			ctx, cancel := context.WithTimeout(ctx, submitWait)
			defer cancel()
			return c.js.Submit(ctx, env)
		}
	}
	e, err := engine.New(cfg)
	if err != nil {
		return nil, failf("start the engine: %v", err)
	}
	return e, nil
}

// submitWait bounds how long a client's submission waits for an engine
// to answer (a serve that is restarting answers well within it).
const submitWait = 30 * time.Second

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

// dataDirFlag is " --data-dir DIR" (quoted) for a command printed about
// dir, or "" when dir is the built-in default.
func dataDirFlag(dir string) string {
	if isBuiltinDataDir(dir) {
		return ""
	}
	return " --data-dir " + shellQuote(dir)
}

// shellQuote quotes s for a copy-pasteable command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quietLogger logs warnings and errors to stderr; commands print their own
// results.
func quietLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
