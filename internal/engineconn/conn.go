package engineconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Mode says how a command reached the events.
type Mode int

const (
	// External: --nats, an existing server or cluster.
	External Mode = iota + 1
	// Serve: the data directory's serve (or self-contained run), over
	// loopback.
	Serve
	// Embedded: this process started the data directory's embedded
	// server and holds its lock.
	Embedded
)

// Options says where the events are and what a command needs from its
// connection.
type Options struct {
	// URLs, when set, name an existing server or cluster (--nats); else the
	// data directory's serve, or an embedded server, is used.
	URLs []string
	// Source names the servers and what gave them, for messages ("--nats
	// URLS", "NATS_URL URLS", "--context NAME (URLS)"), user info hidden.
	Source string
	// Auth is the login and TLS for URLs (resolved: events.ClientAuth).
	Auth events.ClientAuth
	// Replicas: stream replicas with URLs; 0 keeps existing streams' and
	// gives new ones 3 when URLs lists three or more servers, else 1.
	Replicas int
	// DataDir is the data directory as given ("" means the default:
	// $SWITCHYARD_DATA_DIR, $XDG_STATE_HOME/switchyard,
	// ~/.local/state/switchyard).
	DataDir string
	// Fsync is an embedded server's fsync policy ("" means always).
	Fsync events.FsyncPolicy
	// Role is the role the connection logs in as.
	Role events.Role

	// ServeKind, when set, makes an embedded owner listen on Listen and
	// write serve.json with this kind ("serve" or "run"), so other
	// processes (workers, the parent's inspect, native, cancel) can reach
	// it.
	ServeKind string
	Listen    string
	// NoEmbed refuses to start an embedded server: the command needs a
	// server that outlives it (worker).
	NoEmbed bool
	// Exclusive refuses to connect to another holder: the command must own
	// the data directory (serve).
	Exclusive bool
	// LockWait bounds waiting for a holder that does not listen (another
	// short command) to finish.
	LockWait time.Duration
	// OnWait, when set, is told once that the command waits for another
	// run to release the data directory.
	OnWait func(msg string)
	// Query: the command reads or answers stored runs, so it needs a data
	// directory that holds a store and creates nothing (no directory, no
	// store, no lock file) when there is none.
	Query bool
	// Link, when set, is told when a client connection (to a serve or to
	// --nats) is lost and when it is back.
	Link LinkEvents
	// Refused, when set, is told the peer address of a connection the
	// embedded server refused for want of valid credentials (once an hour
	// per peer host); by default it is logged to stderr.
	Refused func(peer string)
	// Workers are the deployment's provisioned worker identities, for the
	// engine (serve): the embedded server it starts then admits only
	// listed worker keys, and its JetStream's API proxy lets each worker
	// serve only its own providers (with URLs, the proxy alone). Nil: an
	// embedded server that listens reads the data directory's
	// WorkersFileName when there is one; with URLs, none.
	Workers *events.WorkerIdentities
	// WorkerSeed, for a worker, is its identity's nkey seed file: the
	// connection proves that key, and its reply subjects are the key's.
	// "": the role's secret alone (a fresh key per connection).
	WorkerSeed string
}

// Conn is an open connection to the events: the JetStream seams and
// whatever must be closed after them.
type Conn struct {
	mode    Mode
	dataDir string
	urls    []string // the server URLs other processes use (external, serve, or a listening embedded owner)
	emb     *events.Embedded
	js      *events.JetStream
	lock    *dirLock
	closeNC func()
	// holder is the serve.json of the process served (Serve).
	holder ServeInfo
	// wroteInfo: this process wrote serve.json (info) and removes it on
	// Close. infoMu orders PublishContainment's rewrite with Close.
	wroteInfo  bool
	info       ServeInfo
	infoMu     sync.Mutex
	infoClosed bool
	// wroteAuth: this process wrote the credentials file and removes it
	// on Close.
	wroteAuth bool
	// defaultDir: the data directory is the built-in default (neither
	// --data-dir nor SWITCHYARD_DATA_DIR), which any shell finds unaided.
	defaultDir bool
	// dialer finds the data directory's holder on every (re)connect
	// (Serve).
	dialer *dataDirDialer
	// watch tracks whether a client connection is up (Serve,
	// External).
	watch *linkWatch
	// opts are the options it was opened with.
	opts Options
}

// Open connects the way o says:
//
//   - with --nats: to that server or cluster (replicas per --replicas);
//   - else, when another process holds the data directory and listens
//     (serve.json): to it, over loopback;
//   - else (o.NoEmbed aside): it starts the data directory's embedded
//     server in this process, holding serve.lock while it runs.
func Open(ctx context.Context, o Options) (*Conn, error) {
	if len(o.URLs) > 0 {
		return openExternal(ctx, o)
	}
	dir, err := connDataDir(o)
	if err != nil {
		return nil, err
	}
	return dataDirConn(ctx, dir, o)
}

// openExternal connects to the server or cluster --nats names.
func openExternal(ctx context.Context, o Options) (*Conn, error) {
	urls := o.URLs
	replicas := o.Replicas
	if replicas == 0 {
		replicas = 1
		if len(urls) >= 3 {
			replicas = 3
		}
	}
	auth, err := o.Auth.Options()
	if err != nil {
		return nil, usagef("%v", err)
	}
	watch := &linkWatch{settling: 10 * time.Second}
	opts := append(linkOptions(o.Link, watch), nats.Timeout(5*time.Second))
	// The login and TLS given, and the role's reply subjects (or the
	// context's inbox_prefix).
	opts = append(opts, auth...)
	var served []nats.Option
	if o.Auth.Method() == "none" {
		// --nats naming a serve's own server: its data directory's
		// credentials, as the command's role, and this connection's own
		// reply subjects (they replace the role's, given above).
		if served, err = serveCredentials(o, urls); err != nil {
			return nil, err
		}
		opts = append(opts, served...)
	}
	if o.WorkerSeed != "" && served == nil {
		// A deployment's servers: the seed's nkey is the worker's own
		// login (beside a user and password or token, when given) and
		// names its reply subjects.
		if o.Auth.CredsFile != "" || o.Auth.NKeyFile != "" {
			return nil, seedLoginConflict(o)
		}
		seeded, err := externalSeedOptions(o.WorkerSeed)
		if err != nil {
			return nil, err
		}
		opts = append(opts, seeded...)
	}
	nc, err := events.Connect(urls, opts...)
	if errors.Is(err, nats.ErrAuthorization) {
		return nil, deniedf("%s refused this connection's credentials (%s: %v); pass the credentials of a user allowed the %s role (--creds, --nkey, --context, or NATS_USER/NATS_PASSWORD/NATS_TOKEN; see docs/DEPLOY.md), or, for a switchyard serve's own server, its --data-dir (its credentials are there)",
			o.Source, o.Auth.Method(), err, o.Role)
	}
	if err != nil {
		return nil, unavailablef("cannot reach %s: %v; check the URLs, the credentials (%s) and TLS options, and that the servers run with JetStream",
			o.Source, err, o.Auth.Method())
	}
	// Streams that exist keep their replicas unless --replicas asks
	// for a change: a command pointed at one node of a cluster must
	// not strip its replication.
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: replicas, ForceReplicas: o.Replicas != 0, Workers: o.Workers})
	if err != nil {
		defer nc.Close()
		if rerr := refused(nc, o); rerr != nil {
			return nil, rerr
		}
		return nil, failf("%s: %v; check that JetStream is enabled, that the user may use it, and --replicas %d fits the cluster", o.Source, err, replicas)
	}
	return &Conn{mode: External, urls: urls, js: js, closeNC: nc.Close, watch: watch, opts: o}, nil
}

// connDataDir is the data directory the command uses. A query or worker
// needs one that holds a store and creates nothing; the others create it.
func connDataDir(o Options) (string, error) {
	if !o.Query && !o.NoEmbed {
		dir, err := ResolveDataDir(o.DataDir)
		if err != nil {
			return "", usagef("%v", err)
		}
		return dir, nil
	}
	// Create nothing: a typo in --data-dir must not leave a fresh,
	// empty store behind that then answers "no runs".
	dir, err := LocateDataDir(o.DataDir)
	if err != nil {
		return "", usagef("%v", err)
	}
	if err := StoreAccessError(dir); err != nil {
		return "", err
	}
	if err := events.CheckPrivateDir(dir, "data directory"); err != nil && !isNotExist(err) {
		return "", deniedf("%v", err)
	}
	if !HasStore(dir) {
		if o.NoEmbed {
			return "", noDataf("no Switchyard data in %s and no switchyard serve for it; start `switchyard serve%s` first (it creates the store), or pass --nats URL",
				dir, DataDirFlag(dir))
		}
		return "", noStoreError(dir, o)
	}
	return dir, nil
}

// dataDirConn looks at who holds dir (serve.lock, serve.json, the holder's
// pid) and does what decideHold says, looking again every 50ms while it
// says wait; a holder that does not listen is waited for up to o.LockWait
// (30s by default), another self-contained run until it finishes.
func dataDirConn(ctx context.Context, dir string, o Options) (*Conn, error) {
	wait := o.LockWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	facts := holdFacts{noEmbed: o.NoEmbed, exclusive: o.Exclusive, isRun: o.ServeKind == "run"}
	for {
		lock, err := tryLockDataDir(dir)
		if err != nil && !errors.Is(err, errLocked) {
			return nil, failf("%v", err)
		}
		facts.lockFree, facts.info, facts.alive = err == nil, nil, false
		if !facts.lockFree {
			info, err := ReadServeInfo(dir)
			switch {
			case err == nil:
				facts.info, facts.alive = &info, info.Live() == nil
			case errors.Is(err, errCorruptServeInfo):
				// Waiting cannot help: its holder wrote it at start and
				// will not again.
				return nil, failf("data directory %s is held by pid %d, but %v, so this command cannot find where it listens; restart that process (stop pid %d, then `switchyard serve%s`), which writes serve.json again",
					dir, lockHolder(dir), err, lockHolder(dir), DataDirFlag(dir))
			}
		}
		facts.expired = time.Now().After(deadline)
		d := decideHold(facts)
		switch d.action {
		case holdEmbed:
			c, err := startEmbedded(ctx, dir, o, lock)
			if err != nil {
				lock.Unlock()
				return nil, err
			}
			c.defaultDir, c.opts = IsBuiltinDataDir(dir), o
			return c, nil
		case holdRefuse:
			lock.Unlock()
			return nil, holdRefusal(d.reason, dir, facts.info)
		case holdConnect:
			c, err := connectHolder(ctx, dir, *facts.info, o)
			if err == nil {
				c.defaultDir, c.opts = IsBuiltinDataDir(dir), o
				return c, nil
			}
			if d.lastTry || credentialsGone(dir, *facts.info, err) {
				return nil, err
			}
		case holdWait:
			if d.announce && o.OnWait != nil {
				o.OnWait(fmt.Sprintf("data directory %s is in use by another switchyard run (pid %d); waiting for it to finish (a `switchyard serve%s` runs several at once)",
					dir, facts.info.PID, DataDirFlag(dir)))
			}
			facts.waitingForRun = facts.waitingForRun || d.waitForRun
		}
		if !events.Sleep(ctx, 50*time.Millisecond) {
			return nil, &Error{Interrupted: true, msg: "interrupted while waiting for data directory " + dir}
		}
	}
}

// credentialsGone reports whether err says the holder's credentials file
// is missing while serve.json still names the same live holder: no retry
// can sign in until that holder restarts.
func credentialsGone(dir string, info ServeInfo, err error) bool {
	var ce *Error
	if !errors.As(err, &ce) || !ce.credentialsGone {
		return false
	}
	now, rerr := ReadServeInfo(dir)
	return rerr == nil && now.PID == info.PID && now.Started.Equal(info.Started)
}

// holdRefusal is the error of a refusal decideHold gave for dir (info: the
// holder's serve.json, when read).
func holdRefusal(r holdReason, dir string, info *ServeInfo) error {
	switch r {
	case refuseNoServe:
		return unavailablef("no switchyard serve is running for data directory %s; start one with `switchyard serve%s`, or pass --nats URL", dir, DataDirFlag(dir))
	case refuseServed:
		return failf("data directory %s is already served by %s (pid %d, %s); stop it first or pass another --data-dir",
			dir, info.Kind, info.PID, info.URL)
	case refuseSelfContained:
		return unavailablef("data directory %s is held by a self-contained switchyard %s (pid %d), which stops when its run is final; start `switchyard serve%s` for workers, or pass --nats URL",
			dir, info.Kind, info.PID, DataDirFlag(dir))
	case refuseNotListening:
		return unavailablef("no switchyard serve is running for data directory %s (pid %d holds it without listening); start `switchyard serve%s`, or pass --nats URL",
			dir, lockHolder(dir), DataDirFlag(dir))
	default:
		return failf("data directory %s stays locked by pid %d, which does not serve it; wait for it to finish or pass another --data-dir",
			dir, lockHolder(dir))
	}
}

// startEmbedded starts the data directory's embedded server in this
// process (the caller holds lock).
func startEmbedded(ctx context.Context, dir string, o Options, lock *dirLock) (*Conn, error) {
	// A serve.json left by a holder that died names no one now.
	os.Remove(filepath.Join(dir, ServeInfoName))
	os.Remove(filepath.Join(dir, AuthFileName))
	// Every start draws fresh secrets: the server admits only role users
	// holding them, and other processes read them from a file only this
	// user can read.
	creds, err := events.NewCredentials()
	if err != nil {
		return nil, failf("%v", err)
	}
	cfg := events.EmbeddedConfig{DataDir: dir, Fsync: o.Fsync, Auth: creds, OnRefused: o.Refused, Workers: o.Workers}
	if cfg.Workers == nil && o.ServeKind != "" {
		// A listening server of the data directory honours its worker
		// identities file, whoever starts it; a bad one stops the start.
		if cfg.Workers, err = LoadWorkerIdentities(WorkersFile(dir), false); err != nil {
			return nil, err
		}
	}
	cfg.Fsync = cmp.Or(cfg.Fsync, events.FsyncAlways)
	if cfg.OnRefused == nil {
		cfg.OnRefused = func(peer string) {
			fmt.Fprintf(os.Stderr, "switchyard: refused a connection from %s to the server of %s: it did not present this start's credentials (%s); only processes of the user that started it can connect\n",
				peer, dir, filepath.Join(dir, AuthFileName))
		}
	}
	authPath := filepath.Join(dir, AuthFileName)
	if o.ServeKind != "" {
		cfg.Listen = o.Listen
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
	if o.ServeKind == "serve" {
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
		if o.ServeKind == "serve" {
			return nil, failf("start the embedded server of %s on --listen %s: %v; if the port is taken, pass another (127.0.0.1:0 picks a free one)", dir, cfg.Listen, err)
		}
		return nil, failf("start the embedded server of %s: %v", dir, err)
	}
	js, err := events.OpenJetStream(ctx, emb.Conn(), events.JetStreamConfig{Replicas: 1, Workers: cfg.Workers})
	if err != nil {
		emb.Shutdown()
		return nil, failf("open the streams in %s: %v", dir, err)
	}
	c := &Conn{mode: Embedded, dataDir: dir, emb: emb, js: js, lock: lock}
	if u := emb.ClientURL(); u != "" {
		c.urls = []string{u}
		// The credentials (written before the server started) come
		// before serve.json: a client that finds serve.json finds them.
		if o.ServeKind == "" {
			if err := events.WriteCredentials(authPath, creds); err != nil {
				c.Close()
				return nil, failf("%v", err)
			}
		}
		c.wroteAuth = true
		info := ServeInfo{PID: os.Getpid(), URL: u, Kind: o.ServeKind, DataDir: dir, Fsync: string(cfg.Fsync), Started: time.Now().UTC(), Start: events.SelfStart()}
		removeServeInfoTemps(dir)
		if err := writeServeInfo(dir, info); err != nil {
			c.Close()
			return nil, failf("%v", err)
		}
		c.wroteInfo, c.info = true, info
		if o.ServeKind == "serve" {
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
func connectHolder(ctx context.Context, dir string, info ServeInfo, o Options) (*Conn, error) {
	d := &dataDirDialer{dir: dir, timeout: 2 * time.Second}
	watch := &linkWatch{settling: 10 * time.Second}
	authPath := filepath.Join(dir, AuthFileName)
	opts := append(linkOptions(o.Link, watch), nats.Timeout(2*time.Second), nats.SetCustomDialer(d))
	if o.WorkerSeed != "" {
		seeded, err := workerSeedOptions(authPath, o.WorkerSeed)
		if err != nil {
			return nil, err
		}
		opts = append(opts, seeded...)
	} else {
		opts = append(opts, events.FileClientOptions(authPath, o.Role)...)
	}
	// The URL only seeds the client's server pool; d dials whatever
	// serve.json names at each attempt.
	nc, err := events.Connect([]string{info.URL}, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) {
			if _, rerr := events.ReadCredentials(authPath); errors.Is(rerr, events.ErrNoCredentials) {
				return nil, &Error{Class: ErrDenied, credentialsGone: true, msg: fmt.Sprintf("the %s of data directory %s (pid %d) is running, but its credentials file %s is gone (deleted after it started), so no client can sign in to it; restart it (stop pid %d, then `switchyard serve%s`), which writes fresh credentials",
					info.Kind, dir, info.PID, authPath, info.PID, DataDirFlag(dir))}
			} else if rerr != nil {
				return nil, deniedf("the %s of data directory %s (pid %d) refused this connection: %v; it writes its credentials there at start, readable only by the user that started it: run switchyard as that user",
					info.Kind, dir, info.PID, rerr)
			}
			if why := workerRefusal(dir, o.WorkerSeed); why != "" && o.Role == events.RoleWorker {
				return nil, deniedf("the %s of data directory %s (pid %d) refused this worker: %s", info.Kind, dir, info.PID, why)
			}
			return nil, deniedf("the %s of data directory %s (pid %d) refused the credentials in %s; if it was just restarted, try again", info.Kind, dir, info.PID, authPath)
		}
		return nil, unavailablef("cannot reach the %s of data directory %s (pid %d, %s): %v; is it still running?", info.Kind, dir, info.PID, info.URL, err)
	}
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 1, SetupTimeout: 10 * time.Second})
	if err != nil {
		nc.Close()
		return nil, failf("the %s of data directory %s (pid %d, %s): %v", info.Kind, dir, info.PID, info.URL, err)
	}
	if h := d.holder(); h.PID != 0 {
		info = h
	}
	return &Conn{mode: Serve, dataDir: dir, urls: []string{info.URL}, js: js, closeNC: nc.Close, holder: info, dialer: d, watch: watch}, nil
}

// Close shuts down what the connection opened: the client connection, or
// the embedded server (then serve.json and the lock go).
func (c *Conn) Close() {
	if c == nil {
		return
	}
	if c.closeNC != nil {
		c.closeNC()
	}
	if c.emb != nil {
		c.emb.Shutdown()
	}
	c.infoMu.Lock()
	c.infoClosed = true
	c.infoMu.Unlock()
	if c.wroteInfo {
		removeServeInfo(c.dataDir, os.Getpid())
	}
	if c.wroteAuth {
		os.Remove(filepath.Join(c.dataDir, AuthFileName))
	}
	c.lock.Unlock()
}

// PublishContainment adds rep, this process's sandbox self-test, to the
// serve.json it wrote, so the commands it serves read the evidence its
// gate uses (ServeInfo.Containment). A no-op when this process wrote no
// serve.json, or after Close.
func (c *Conn) PublishContainment(rep sandbox.Report) error {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	if !c.wroteInfo || c.infoClosed {
		return nil
	}
	info := c.info
	info.Containment = &rep
	if err := writeServeInfo(c.dataDir, info); err != nil {
		return err
	}
	c.info = info
	return nil
}

// Mode says how the connection reached the events.
func (c *Conn) Mode() Mode { return c.mode }

// DataDir is the data directory served or embedded ("" with URLs).
func (c *Conn) DataDir() string { return c.dataDir }

// URLs are the server URLs other processes use (external, serve, or a
// listening embedded owner).
func (c *Conn) URLs() []string { return c.urls }

// JetStream is the connection's JetStream: the store, queue, claims and
// capacity seams.
func (c *Conn) JetStream() *events.JetStream { return c.js }

// Holder is the serve.json of the process served (Serve) when connected.
func (c *Conn) Holder() ServeInfo { return c.holder }

// DefaultDir reports whether the data directory is the built-in default
// (neither --data-dir nor SWITCHYARD_DATA_DIR), which any shell finds
// unaided.
func (c *Conn) DefaultDir() bool { return c.defaultDir }

// Offline reports a client connection that is down or just came back
// (activities.WorkerConfig.Offline).
func (c *Conn) Offline() bool { return c.watch.offline() }

// Options are the options the connection was opened with.
func (c *Conn) Options() Options { return c.opts }

// store, queue and claims are the three seams.
func (c *Conn) store() events.Store   { return c.js.Store() }
func (c *Conn) queue() events.Queue   { return c.js.Queue() }
func (c *Conn) claims() events.Claims { return c.js.Claims() }

// capacity is the deployment's capacity store: each provider's current
// capacity report, which workers put and the engine's eligibility gate,
// status and usage read.
func (c *Conn) capacity() events.Capacity { return c.js.Capacity() }

// Describe says where the events are, for messages.
func (c *Conn) Describe() string {
	switch c.mode {
	case External:
		return "NATS " + events.RedactURLs(strings.Join(c.urls, ","))
	case Serve:
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

// EngineDataDir is the directory the engine keeps attempt files in: the
// data directory, or for --nats the default (or given) one on this host.
func (c *Conn) EngineDataDir() (string, error) {
	if c.dataDir != "" {
		return c.dataDir, nil
	}
	if c.opts.Query {
		return LocateDataDir(c.opts.DataDir)
	}
	return ResolveDataDir(c.opts.DataDir)
}

// NewEngine builds an engine on the connection. Only serve and a
// self-contained run call its Run loop; every other command (and the
// client package) uses it for requests: a client's submissions go to the
// engine serving the store.
func (c *Conn) NewEngine(logger *slog.Logger) (*engine.Engine, error) {
	dir, err := c.EngineDataDir()
	if err != nil {
		return nil, usagef("%v", err)
	}
	cfg := engine.Config{
		Store: c.store(), Queue: c.queue(), Claims: c.claims(),
		DataDir: dir, Policy: policy.DefaultOptions(), Now: time.Now, Logger: logger,
		Capacity: c.capacity(), CapacityMaxAge: policy.DefaultCapacityMaxAge,
	}
	if c.mode != Embedded && c.opts.Role != events.RoleEngine {
		// Only the engine writes events: a client's runs go to the
		// engine serving the store, which records them.
		cfg.SubmitVia = func(ctx context.Context, env events.Envelope) error {
			ctx, cancel := context.WithTimeout(ctx, SubmitWait)
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

// SubmitWait bounds how long a client's submission waits for an engine
// to answer (a serve that is restarting answers well within it).
const SubmitWait = 30 * time.Second

// DataDirFlag is " --data-dir DIR" (quoted) for a command printed about
// dir, or "" when dir is the built-in default.
func DataDirFlag(dir string) string {
	if IsBuiltinDataDir(dir) {
		return ""
	}
	return " --data-dir " + ShellQuote(dir)
}

// ShellQuote quotes s for a copy-pasteable command line when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
