package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/metrics"
	"github.com/switchyard-dev/switchyard/policy"
)

// The worker's metrics take its claim and lease failures.
var _ activities.Observer = (*metrics.Metrics)(nil)

// httpTokenEnv carries the HTTP token without putting it on the command
// line (where ps shows it to every user of the host).
const httpTokenEnv = "SWITCHYARD_HTTP_TOKEN"

// httpFlags are --http and --http-token-file of serve and worker.
type httpFlags struct {
	addr      string
	tokenFile string
	// argvToken is the refused --http-token: kept as a flag only to say
	// what to use instead.
	argvToken string
	// token is the token read from tokenFile or httpTokenEnv ("": none).
	token string
	// ln, when set, is the --http listener already bound (serve binds it
	// before anything else, so a busy port fails first and creates
	// nothing); startHTTP serves on it instead of listening again.
	ln net.Listener
}

// listenHTTP binds --http now, or says why not with the fix.
func listenHTTP(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, failf("--http %s: the address is already in use (another process listens there: an earlier serve still running? `ss -ltnp` names it); stop it, or pick another port, for example --http 127.0.0.1:0 for any free one", addr)
	}
	return nil, failf("--http %s: %v", addr, err)
}

// maxTokenBytes caps a token file.
const maxTokenBytes = 4 << 10

// addHTTPFlags declares --http and --http-token-file (and the refused
// --http-token); what names what the address serves ("the web console,
// /metrics" or "/metrics").
func addHTTPFlags(c *cobra.Command, h *httpFlags, what string) {
	c.Flags().StringVar(&h.addr, "http", "", "HOST:PORT to serve "+what+", /healthz and /readyz on (off unless given; loopback unless a token is set)")
	c.Flags().StringVar(&h.tokenFile, "http-token-file", "", "file holding the bearer token HTTP requests must carry (or set "+httpTokenEnv+"); required for a non-loopback --http")
	c.Flags().StringVar(&h.argvToken, "http-token", "", "refused: a token on the command line is visible in ps; use --http-token-file or "+httpTokenEnv)
	_ = c.Flags().MarkHidden("http-token")
}

// validate checks the flags and reads the token: --http-token is refused
// (ps shows every process's arguments to every user), the token comes from
// --http-token-file or SWITCHYARD_HTTP_TOKEN (not both), either needs
// --http, and a non-loopback --http needs a token (the console answers
// lanes).
func (h *httpFlags) validate(cmd *cobra.Command) error {
	if cmd.Flags().Changed("http-token") {
		return usagef("--http-token puts the token on the command line, where ps shows it to every user of this host: put it in a file only you can read and pass --http-token-file FILE, or set %s", httpTokenEnv)
	}
	env := os.Getenv(httpTokenEnv)
	switch {
	case h.tokenFile != "" && env != "":
		return usagef("both --http-token-file and %s are set: keep one", httpTokenEnv)
	case h.tokenFile != "":
		b, err := readTokenFile(h.tokenFile)
		if err != nil {
			return err
		}
		h.token = b
	default:
		h.token = env
	}
	if h.addr == "" {
		if cmd.Flags().Changed("http-token-file") {
			return usagef("--http-token-file applies to --http; add --http HOST:PORT (for example --http 127.0.0.1:8233) or drop --http-token-file")
		}
		return nil
	}
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil || port == "" {
		return usagef("--http %q is not HOST:PORT; for example --http 127.0.0.1:8233", h.addr)
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && h.token == "" {
		// serve's port carries the console, which answers lanes; a
		// worker's only its metrics and health.
		exposed := "anyone who reaches it could answer lanes"
		if cmd.Name() == "worker" {
			exposed = "anyone who reaches it could read the worker's /metrics"
		}
		return usagef("--http %q is not a loopback address, and %s: add --http-token-file FILE (or set %s), or listen on 127.0.0.1", h.addr, exposed, httpTokenEnv)
	}
	return nil
}

// readTokenFile reads a token file: its first line, without surrounding
// blanks; an empty or oversized file is a usage error.
func readTokenFile(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", usagef("--http-token-file %s: %v", path, unwrapPath(err))
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxTokenBytes+1))
	if err != nil {
		return "", usagef("--http-token-file %s: %v", path, unwrapPath(err))
	}
	if len(b) > maxTokenBytes {
		return "", usagef("--http-token-file %s is over %d bytes: it should hold the token alone", path, maxTokenBytes)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	token := strings.TrimSpace(line)
	if token == "" {
		return "", usagef("--http-token-file %s is empty: put the token on its first line", path)
	}
	return token, nil
}

// consoleTokenName is the file, in the data directory, of the console
// token a serve draws at start when --http-token is not given.
const consoleTokenName = "console.token"

// httpServer is a started --http listener.
type httpServer struct {
	srv  *http.Server
	addr string
	// cleanup, when set, runs after the server stopped (the console
	// token file goes).
	cleanup func()
	done    chan struct{}
	// bg, when set, is closed when the server's background loop (the
	// console's watch) has returned; cancelBg stops it.
	bg       chan struct{}
	cancelBg context.CancelFunc
}

// startHTTP listens on h.addr and serves handler until ctx ends or stop.
func startHTTP(ctx context.Context, stdout, stderr io.Writer, name string, h httpFlags, handler http.Handler, logger *slog.Logger) (*httpServer, error) {
	ln := h.ln
	if ln == nil {
		var err error
		if ln, err = listenHTTP(h.addr); err != nil {
			return nil, err
		}
	}
	// Connections, header and body reads, writes and idle keep-alives are
	// bounded; the event streams stay open while their client reads.
	srv, served := console.DefaultLimits.Serve(ln, handler, ctx)
	s := &httpServer{srv: srv, done: make(chan struct{}), addr: ln.Addr().String()}
	go func() {
		defer close(s.done)
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server stopped", "err", err)
		}
	}()
	if h.token != "" { // before the address line, which scripts wait for
		fmt.Fprintf(stderr, "switchyard %s: warning: an HTTP token is set: every request but /healthz and /readyz must carry it as Authorization: Bearer; the traffic is plain HTTP, so put TLS in front of it beyond this host\n", name)
	}
	fmt.Fprintf(stdout, "switchyard %s: http on http://%s/\n", name, ln.Addr())
	return s, nil
}

// stop closes the listener and every connection (event streams included),
// then stops the background loop and waits for it.
func (s *httpServer) stop() {
	if s == nil {
		return
	}
	_ = s.srv.Close()
	<-s.done
	if s.bg != nil {
		s.cancelBg()
		<-s.bg
	}
	if s.cleanup != nil {
		s.cleanup()
	}
}

// serveHTTP starts serve's console and metrics when --http is set; nil
// (nothing to stop) otherwise. The console's Run feeds the metrics from
// the event log until ctx ends.
func serveHTTP(ctx context.Context, stdout, stderr io.Writer, h httpFlags, f engineFlags, conn *engineConn, eng *engine.Engine, logger *slog.Logger) (*httpServer, error) {
	if h.addr == "" {
		return nil, nil
	}
	dir, err := conn.engineDataDir(f) // the engine's, also with --nats
	if err != nil {
		return nil, usagef("%v", err)
	}
	// Without --http-token the console still admits only this user: a
	// fresh token per start, in a file only the owner can read (other
	// users of a shared host reach loopback too). /metrics stays open:
	// counts with bounded labels.
	token, tokenFile, metricsOpen := h.token, "", false
	if token == "" {
		if token, err = newConsoleToken(); err == nil {
			tokenFile = filepath.Join(dir, consoleTokenName)
			err = events.WritePrivateFile(tokenFile, []byte(token+"\n"))
		}
		if err != nil {
			return nil, failf("console token: %v", err)
		}
		metricsOpen = true
	}
	key, err := console.NewSignInKey()
	if err != nil {
		return nil, failf("console sign-in key: %v", err)
	}
	m := metrics.New()
	var cs *console.Server
	m.SetSampler(func(ctx context.Context) metrics.Snapshot { return sampleServe(ctx, conn, cs) })
	cs, err = console.New(console.Options{
		Engine: eng, Store: conn.store(), DataDir: dir, Token: token, SignInKey: key, MetricsOpen: metricsOpen, Metrics: m, Logger: logger,
		RunDoc: func(ctx context.Context, st engine.RunStatus) (any, error) {
			el, err := runEligibility(ctx, conn, st.Run)
			if err != nil {
				return nil, err
			}
			doc, err := withCaps(ctx, conn, runStatusJSON{RunStatus: st, Eligibility: el})
			if err != nil {
				return nil, err
			}
			// The same document status --run --json prints, schemaVersion too.
			b, err := versionedJSON(doc)
			return json.RawMessage(b), err
		},
		Ready: func(ctx context.Context) error { return readyCheck(ctx, conn) },
	})
	if err != nil {
		return nil, failf("start the console: %v", err)
	}
	web, err := startHTTP(ctx, stdout, stderr, "serve", h, cs, logger)
	if err != nil {
		if tokenFile != "" {
			os.Remove(tokenFile)
		}
		return nil, err
	}
	// The sign-in file lets this user (and nobody else: mode 0600) mint
	// one-time codes with console-url; the printed address carries one.
	si := consoleSignIn{URL: "http://" + web.addr + "/", Key: key}
	signInFile, err := writeConsoleSignIn(dir, si)
	var signIn string
	if err == nil {
		signIn, err = si.signInURL(time.Now())
	}
	if err != nil {
		web.stop()
		if tokenFile != "" {
			os.Remove(tokenFile)
		}
		os.Remove(signInFile)
		return nil, failf("console sign-in: %v", err)
	}
	web.cleanup = func() {
		os.Remove(signInFile)
		if tokenFile != "" {
			os.Remove(tokenFile)
		}
	}
	fmt.Fprintf(stdout, "switchyard serve: console sign-in (%s; switchyard console-url%s prints another): %s\n", signInValidity(), dataDirFlag(dir), signIn)
	if tokenFile != "" {
		fmt.Fprintf(stdout, "switchyard serve: API token (new every start, readable only by you): Authorization: Bearer $(cat %s); /metrics, /healthz and /readyz need none\n", shellQuote(tokenFile))
	}
	bctx, cancel := context.WithCancel(ctx)
	web.bg, web.cancelBg = make(chan struct{}), cancel
	go func() { defer close(web.bg); _ = cs.Run(bctx) }()
	return web, nil
}

// workerHTTP starts a worker's /metrics, /healthz and /readyz when --http
// is set.
func workerHTTP(ctx context.Context, stdout, stderr io.Writer, h httpFlags, conn *engineConn, m *metrics.Metrics, logger *slog.Logger) (*httpServer, error) {
	if h.addr == "" {
		return nil, nil
	}
	m.SetSampler(func(ctx context.Context) metrics.Snapshot {
		snap := metrics.Snapshot{WorkersLive: map[policy.Provider]int{}}
		live, err := conn.js.Presence().Live(ctx)
		if err == nil {
			for p, ws := range liveByProvider(live) {
				snap.WorkersLive[policy.Provider(p)] = len(ws)
			}
		}
		snap.JetStreamUp = err == nil && readyCheck(ctx, conn) == nil
		return snap
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := readyCheck(r.Context(), conn); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", requireToken(h.token, m.Handler()))
	return startHTTP(ctx, stdout, stderr, "worker", h, mux, logger)
}

// requireToken wraps next with the bearer token check (none when token is
// "").
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <the --http-token value>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readyCheck asks the event stream and the job queue's consumers.
func readyCheck(ctx context.Context, conn *engineConn) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := conn.store().Runs(ctx); err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	if _, err := conn.js.ProviderCaps(ctx); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	return nil
}

// sampleServe reads serve's gauges: lanes by state (as the console's watch
// of the log has them), jobs queued per provider, live workers per
// provider, and whether JetStream answered.
func sampleServe(ctx context.Context, conn *engineConn, cs *console.Server) metrics.Snapshot {
	snap := metrics.Snapshot{LanesByState: cs.LanesByState(), JobsWaiting: map[policy.Provider]int{}, WorkersLive: map[policy.Provider]int{}}
	up := true
	if caps, err := conn.js.ProviderCaps(ctx); err == nil {
		for _, c := range caps {
			snap.JobsWaiting[c.Provider] = c.Queued
		}
	} else {
		up = false
	}
	if live, err := conn.js.Presence().Live(ctx); err == nil {
		for _, p := range policy.Providers {
			snap.WorkersLive[p] = 0
		}
		for p, ws := range liveByProvider(live) {
			snap.WorkersLive[policy.Provider(p)] = len(ws)
		}
	} else {
		up = false
	}
	snap.JetStreamUp = up
	return snap
}

// newConsoleToken draws a 256-bit console token.
func newConsoleToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
