// Package console serves Switchyard's web console over HTTP: the runs list,
// each run's lanes as timelines beside the lane machine's diagram, the
// event history, attempt files, live updates (server-sent events fed by a
// JetStream watch), answer forms that post through the same engine calls as
// the CLI, the JSON API (/api/v1, the objects of `status --json`),
// Prometheus metrics and health endpoints. Assets are embedded: the console
// needs no network beyond its own address.
package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/metrics"
	"github.com/switchyard-dev/switchyard/policy"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Engine answers status, report and control calls. Required.
	Engine *engine.Engine
	// Store is the event log the engine uses; the console reads histories
	// and watches it. Required.
	Store events.Store
	// DataDir is the data directory; attempt files are served only from
	// under it. Required.
	DataDir string
	// Token is the bearer token every request for run data or an answer
	// must carry as Authorization: Bearer TOKEN; the console takes no
	// other credential (no cookie, no query parameter), so nothing a
	// browser sends on its own reaches past the door. Required.
	Token string
	// SignInKey is the key sign-in codes are minted with (SignInCode):
	// POST /api/v1/signin exchanges a code, once and before it expires,
	// for Token. nil: no sign-in codes (API clients send the token).
	SignInKey []byte
	// Metrics is served on /metrics and fed every event of the log. nil:
	// no /metrics.
	Metrics *metrics.Metrics
	// MetricsOpen serves /metrics without the token (its series are
	// counts with bounded labels: no run id, prompt or path), so a local
	// scraper needs no secret while the pages and the API still do.
	MetricsOpen bool
	// RunDoc turns a run's status into the object `status --run ID --json`
	// prints (which adds eligibility and caps). nil: the status itself.
	RunDoc func(ctx context.Context, st engine.RunStatus) (any, error)
	// Ready reports whether the NATS connection and streams are usable
	// (/readyz). nil: a Store.Runs call must succeed.
	Ready func(ctx context.Context) error
	// Policy is what final runs are replayed with (as replay --verify
	// does) to count divergences in the metrics. Default
	// policy.DefaultOptions().
	Policy *policy.Options
	// Logger receives request errors. nil: discard.
	Logger *slog.Logger
}

// Server is the console's http.Handler. Run must be active for the runs
// list's live updates and for the event-derived metrics.
type Server struct {
	o        Options
	mux      *http.ServeMux
	patterns []string // every pattern routes registered, in order
	codes    *usedCodes
	hub      *hub
	lanes    *laneStates
}

// New checks o and returns a Server.
func New(o Options) (*Server, error) {
	switch {
	case o.Engine == nil:
		return nil, errors.New("console: Options.Engine is required")
	case o.Store == nil:
		return nil, errors.New("console: Options.Store is required")
	case o.DataDir == "":
		return nil, errors.New("console: Options.DataDir is required")
	case o.Token == "":
		// A console without a token would answer lanes for any page that
		// can post to it.
		return nil, errors.New("console: Options.Token is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Ready == nil {
		o.Ready = func(ctx context.Context) error { _, err := o.Store.Runs(ctx); return err }
	}
	s := &Server{o: o, mux: http.NewServeMux(), codes: &usedCodes{nonce: map[string]time.Time{}}, hub: newHub(), lanes: newLaneStates()}
	s.routes()
	return s, nil
}

// route is one endpoint of the console: its ServeMux pattern, its
// handler, and whether it is served without the token.
type route struct {
	pattern string
	handler http.Handler
	open    bool
}

// routes registers every endpoint from one table, recording each pattern
// (http.ServeMux cannot list its own), so a test walks exactly what is
// served. Every route that reads run data or changes anything needs the
// token; open are /healthz, /readyz, the page shells and their static
// assets (no run data), the sign-in exchange (the code is its
// credential) and, with MetricsOpen, /metrics.
func (s *Server) routes() {
	static, _ := fs.Sub(assets, "assets")
	table := []route{
		{"GET /healthz", http.HandlerFunc(s.healthz), true},
		{"GET /readyz", http.HandlerFunc(s.readyz), true},
		{"GET /{$}", s.page("index.html"), true},
		{"GET /runs/{id}", s.page("run.html"), true},
		{"GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)), true},
		{"POST /api/v1/signin", http.HandlerFunc(s.signIn), true},
		{"GET /api/v1/runs", http.HandlerFunc(s.apiRuns), false},
		{"GET /api/v1/runs/{id}", http.HandlerFunc(s.apiRun), false},
		{"GET /api/v1/runs/{id}/report", http.HandlerFunc(s.apiReport), false},
		{"GET /api/v1/runs/{id}/timeline", http.HandlerFunc(s.apiTimeline), false},
		{"GET /api/v1/runs/{id}/events", http.HandlerFunc(s.apiEvents), false},
		{"GET /api/v1/runs/{id}/stream", http.HandlerFunc(s.runStream), false},
		{"GET /api/v1/runs/{id}/lanes/{lane}/executions/{exec}/{file}", http.HandlerFunc(s.apiFile), false},
		{"GET /api/v1/stream", http.HandlerFunc(s.runsStream), false},
		{"GET /api/v1/machine.svg", http.HandlerFunc(s.machineSVG), false},
		{"POST /runs/{id}/lanes/{lane}/answer", http.HandlerFunc(s.answer), false},
		// The API's writes and its document (apiwrite.go, openapi.go):
		// bearer token only, never a cookie.
		{"GET /api/v1/openapi.json", bearerOnly(s.openAPI), false},
		{"POST /api/v1/runs", bearerOnly(s.apiSubmit), false},
		{"POST /api/v1/runs/{id}/cancel", bearerOnly(s.apiCancelRun), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/cancel", bearerOnly(s.apiCancelLane), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/verdict", bearerOnly(s.apiVerdict), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/operation/validate", bearerOnly(s.apiOperationValidate), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/operation/begin", bearerOnly(s.apiOperationBegin), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/operation/done", bearerOnly(s.apiOperationDone), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/operation/reject", bearerOnly(s.apiOperationReject), false},
		{"POST /api/v1/runs/{id}/lanes/{lane}/recover", bearerOnly(s.apiRecover), false},
		{"POST /api/v1/native/executions/{execution}/report", bearerOnly(s.apiNativeReport), false},
	}
	if s.o.Metrics != nil {
		table = append(table, route{"GET /metrics", s.o.Metrics.Handler(), s.o.MetricsOpen})
	}
	for _, r := range table {
		h := r.handler
		if _, ok := h.(bearerOnly); ok {
			h = s.apiAuth(h)
		} else if !r.open {
			h = s.auth(h)
		}
		s.mux.Handle(r.pattern, h)
		s.patterns = append(s.patterns, r.pattern)
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		// An API client gets a JSON error for a path or method no route
		// takes, as for every other API error, not the mux's plain text.
		if _, pattern := s.mux.Handler(r); pattern == "" {
			s.noRoute(w, r)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// Run watches every run's events until ctx is done: each event feeds the
// metrics (from the start of the log, so counters cover every run stored)
// and the runs list's live updates; each run-final has its run replayed,
// every decision recomputed, and a divergence counted and logged. A watch
// that ends early is resumed after the last event it delivered.
func (s *Server) Run(ctx context.Context) error {
	final := make(chan string, 1024)
	done := make(chan struct{})
	go func() { defer close(done); s.replayFinal(ctx, final) }()
	defer func() { <-done }()
	var after uint64
	for ctx.Err() == nil {
		ch, err := s.o.Store.Watch(ctx, "", after)
		if err != nil {
			s.o.Logger.Warn("console: watch the event log", "err", err)
		} else {
			for env := range ch {
				after = env.Seq
				if s.o.Metrics != nil {
					s.o.Metrics.Observe(env)
				}
				s.lanes.observe(env)
				s.hub.publish(env)
				if env.Type == events.TypeRunFinal && s.o.Metrics != nil {
					select {
					case final <- env.Run:
					case <-ctx.Done():
					}
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

// LanesByState counts the lanes of every run by state, as the events Run
// has watched so far left them (for the switchyard_lanes gauge).
func (s *Server) LanesByState() map[string]int { return s.lanes.counts() }

// replayFinal replays each run named on final until ctx is done.
func (s *Server) replayFinal(ctx context.Context, final <-chan string) {
	opt := policy.DefaultOptions()
	if s.o.Policy != nil {
		opt = *s.o.Policy
	}
	for {
		select {
		case <-ctx.Done():
			return
		case run := <-final:
			res, err := engine.Replay(ctx, s.o.Store, run, opt)
			if err != nil {
				if ctx.Err() == nil {
					s.o.Logger.Warn("console: replay a final run", "run", run, "err", err)
				}
				continue
			}
			s.o.Metrics.Replayed(res.Verified)
			if !res.Verified {
				s.o.Logger.Warn("console: replay diverged", "run", run, "result", res.Text())
			}
		}
	}
}

// auth requires the bearer token in the Authorization header: the only
// credential the console takes. No cookie, no query parameter: a browser
// attaches neither a header nor this origin's storage to another port's
// requests, so a page served elsewhere on this host has nothing to ride.
func (s *Server) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard"`)
			s.failCode(w, http.StatusUnauthorized, codeUnauthorized, "", "%s", unauthorizedMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// page serves an embedded HTML page: a shell with no run data and no
// credential, so it is served without the token; its script signs in and
// fetches everything else with the token.
func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			http.Error(w, "missing page", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	}
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 when the NATS connection and streams answer, 503
// (with the error) otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.o.Ready(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}
