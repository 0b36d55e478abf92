package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/events/metrics"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestToken: every endpoint that serves run data takes the token only as
// Authorization: Bearer; the page shells, their assets and the health
// endpoints need none. The token as a cookie or a ?token= parameter opens
// nothing (no cookie is set, no redirect), so a browser holds no ambient
// credential another origin's page could ride.
func TestToken(t *testing.T) {
	f := newFixture(t, "s3cret-token")
	for _, path := range []string{"/api/v1/runs", "/api/v1/runs/alpha", "/metrics", "/api/v1/machine.svg", "/api/v1/runs/alpha/events"} {
		for _, h := range [][]string{
			{"Authorization", ""},
			{"Authorization", "Bearer wrong"},
			{"Authorization", "", "Cookie", "switchyard_token=s3cret-token"},
			{"Authorization", "s3cret-token"},
		} {
			resp, body := f.get(path, h...)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %q", path, h)
			require.Equal(t, `Bearer realm="switchyard"`, resp.Header.Get("WWW-Authenticate"))
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			require.Contains(t, body, `"code": "unauthorized"`)
			require.NotContains(t, body, "s3cret-token")
		}
		resp, _ := f.get(path+"?token=s3cret-token", "Authorization", "")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: the token in the query opens nothing", path)
		require.Empty(t, resp.Header.Values("Set-Cookie"))
		resp, _ = f.get(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Empty(t, resp.Header.Values("Set-Cookie"))
	}
	for _, path := range []string{"/healthz", "/readyz", "/", "/runs/alpha", "/assets/app.js", "/?token=s3cret-token"} {
		resp, body := f.get(path, "Authorization", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Empty(t, resp.Header.Values("Set-Cookie"), path)
		require.NotContains(t, body, "s3cret-token", path)
	}
}

// TestHealth: /healthz answers while the process is up; /readyz asks
// Options.Ready and reports its error with a 503.
func TestHealth(t *testing.T) {
	f := newFixture(t, "")
	resp, body := f.get("/healthz")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok\n", body)
	resp, body = f.get("/readyz")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ready\n", body)

	srv, err := console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: f.data, Token: f.token,
		Ready: func(context.Context) error { return errors.New("job queue: nats: connection closed") }})
	require.NoError(t, err)
	rec := newRecorder()
	srv.ServeHTTP(rec, mustRequest(t, http.MethodGet, "/readyz"))
	_, err = console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: f.data})
	require.EqualError(t, err, "console: Options.Token is required")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "not ready: job queue: nats: connection closed\n", rec.Body.String())
	rec = newRecorder()
	req := mustRequest(t, http.MethodGet, "/metrics")
	req.Header.Set("Authorization", "Bearer "+f.token)
	srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNotFound, rec.Code, "no Metrics, no /metrics")
}

// TestMetrics: /metrics counts the log's events by type, attempts by
// provider and outcome, and the sampler's gauges; no label carries a run
// or execution id.
func TestMetrics(t *testing.T) {
	f := newFixture(t, "")
	f.metrics.SetSampler(func(context.Context) metrics.Snapshot {
		return metrics.Snapshot{LanesByState: map[string]int{"inspecting": 1, "created": 1},
			JobsWaiting: map[policy.Provider]int{"codex": 2}, WorkersLive: map[policy.Provider]int{"codex": 0}, JetStreamUp: true}
	})
	wants := []string{
		`switchyard_lane_transitions_total{type="run-created"} 2`,
		`switchyard_lane_transitions_total{type="launch"} 1`,
		`switchyard_lane_transitions_total{type="claim"} 1`,
		`switchyard_lane_transitions_total{type="finish"} 1`,
		`switchyard_attempts_total{outcome="failed",provider="unknown"} 1`,
		`switchyard_attempt_duration_seconds_sum{outcome="failed",provider="unknown"} 4`,
		`switchyard_lanes{state="inspecting"} 1`,
		`switchyard_jobs_waiting{provider="codex"} 2`,
		`switchyard_workers_live{provider="codex"} 0`,
		`switchyard_jetstream_up 1`,
		`# TYPE switchyard_replay_divergences_total counter`,
	}
	// Scraping, as Prometheus does, until the watch caught up. A scrape is
	// not one snapshot: the registry collects each collector on its own
	// goroutine, so one scrape may show the inspect that followed the
	// finish and not yet the finish's duration. Hence every line is waited
	// for, not the last event's alone.
	var body string
	// Not fatal: the loop below names a line still missing.
	assert.Eventually(t, func() bool {
		_, body = f.get("/metrics")
		for _, want := range wants {
			if !strings.Contains(body, want) {
				return false
			}
		}
		return true
	}, waitTimeout, 50*time.Millisecond)
	for _, want := range wants {
		require.Contains(t, body, want)
	}
	// A new event is counted as it is appended.
	f.append(eventstest.SampleEnvelope(events.TypeCancel, "alpha", 0, eventstest.T0.Add(time.Hour)))
	require.Eventually(t, func() bool {
		_, body = f.get("/metrics")
		return strings.Contains(body, `switchyard_lane_transitions_total{type="cancel"} 1`)
	}, waitTimeout, 50*time.Millisecond)
	for _, id := range []string{"alpha", "beta", "x1"} {
		require.NotRegexp(t, regexp.MustCompile(`\{[^}]*"`+id+`"`), body, "a label carries %s", id)
	}
}

// TestRunStream: /api/v1/runs/{id}/stream sends the run's events after
// ?after= as they are appended, each with its sequence as the event id.
func TestRunStream(t *testing.T) {
	f := newFixture(t, "")
	last := f.last[events.EventSubject("alpha", 0)]
	s := f.stream(fmt.Sprintf("/api/v1/runs/alpha/stream?after=%d", last))
	seq := f.append(eventstest.SampleEnvelope(events.TypeCancel, "alpha", 0, eventstest.T0.Add(time.Hour)))
	name, id, data := s.next(t)
	require.Equal(t, "event", name)
	require.Equal(t, fmt.Sprint(seq), id)
	env, err := events.Decode([]byte(data))
	require.NoError(t, err)
	require.Equal(t, events.TypeCancel, env.Type)
	require.Equal(t, "alpha", env.Run)

	// Resuming with Last-Event-ID replays what came after it.
	resp, body := f.get("/api/v1/runs/alpha/stream?after=x")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
}

// TestRunsStream: /api/v1/stream tells the runs list about every event of
// any run appended while it listens.
func TestRunsStream(t *testing.T) {
	f := newFixture(t, "")
	s := f.stream("/api/v1/stream")
	// The fixture's own events may arrive first (the shared watch starts
	// with the log); wait for the new one.
	seq := f.append(eventstest.SampleEnvelope(events.TypeCancel, "beta", 0, eventstest.T0.Add(time.Hour)))
	for {
		name, _, data := s.next(t)
		require.Equal(t, "change", name)
		var c struct {
			Run  string      `json:"run"`
			Lane int         `json:"lane"`
			Type events.Type `json:"type"`
			Seq  uint64      `json:"seq"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &c))
		if c.Seq == seq {
			require.Equal(t, "beta", c.Run)
			require.Equal(t, events.TypeCancel, c.Type)
			return
		}
	}
}

// TestReplayDivergence: when a run's run-final arrives, the console
// replays the run; a log whose decision does not recompute (a complete
// recorded from a policy input the run never had) is counted as a
// divergence.
func TestReplayDivergence(t *testing.T) {
	f := newFixture(t, "")
	t0 := eventstest.T0.Add(2 * time.Hour)
	f.append(eventstest.SampleEnvelope(events.TypeRunCreated, "gamma", 0, t0))
	f.append(eventstest.SampleEnvelope(events.TypeComplete, "gamma", 0, t0.Add(time.Second)))
	f.append(eventstest.SampleEnvelope(events.TypeRunFinal, "gamma", 0, t0.Add(2*time.Second)))
	var body string
	require.Eventually(t, func() bool {
		_, body = f.get("/metrics")
		return strings.Contains(body, "switchyard_replays_total 1")
	}, waitTimeout, 50*time.Millisecond, "no replay counted:\n%s", body)
	require.Contains(t, body, "switchyard_replay_divergences_total 1")
}

// TestLanesByState: the lanes-by-state gauge follows the log through the
// lane machine and agrees with the engine's fold.
func TestLanesByState(t *testing.T) {
	f := newFixture(t, "")
	fromEngine := func() map[string]int {
		runs, err := f.eng.Runs(context.Background())
		require.NoError(t, err)
		out := map[string]int{}
		for _, r := range runs {
			for _, l := range r.Lanes {
				out[string(l.State)]++
			}
		}
		return out
	}
	want := fromEngine()
	require.Equal(t, map[string]int{"inspecting": 1, "created": 1}, want)
	require.Eventually(t, func() bool { return fmt.Sprint(f.srv.LanesByState()) == fmt.Sprint(want) }, waitTimeout, 20*time.Millisecond,
		"got %v", f.srv.LanesByState())
	f.append(eventstest.SampleEnvelope(events.TypeCancel, "alpha", 0, eventstest.T0.Add(time.Hour)))
	want = fromEngine()
	require.Equal(t, map[string]int{"cancelled": 1, "created": 1}, want)
	require.Eventually(t, func() bool { return fmt.Sprint(f.srv.LanesByState()) == fmt.Sprint(want) }, waitTimeout, 20*time.Millisecond,
		"got %v", f.srv.LanesByState())
}

// TestTokenGuardsEveryRoute walks every route the server registered (its
// own list, not one kept here) and requires the token on each but the
// open ones: /healthz, /readyz, the page shells and their assets (no run
// data), the sign-in exchange (its code is the credential) and /metrics
// only when MetricsOpen. A request that reaches a guarded route without
// the token, with a wrong one, or with the token as a cookie or a query
// parameter is 401 with the bearer challenge; no open route but sign-in
// takes anything but GET, so every route that changes state needs the
// header. No response of any route sets a cookie.
func TestTokenGuardsEveryRoute(t *testing.T) {
	f := newFixture(t, "s3cret-token")
	openMetrics, err := console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: f.data, Token: "s3cret-token",
		Metrics: f.metrics, MetricsOpen: true})
	require.NoError(t, err)
	open := map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /{$}": true, "GET /runs/{id}": true,
		"GET /assets/": true, "POST /api/v1/signin": true}
	withMetrics := map[string]bool{"GET /metrics": true}
	for p := range open {
		withMetrics[p] = true
	}
	for _, c := range []struct {
		name string
		srv  *console.Server
		open map[string]bool
	}{
		{"metrics guarded", f.srv, open},
		{"metrics open", openMetrics, withMetrics},
	} {
		patterns := c.srv.Patterns()
		require.Contains(t, patterns, "GET /metrics", c.name)
		guarded := 0
		for _, pattern := range patterns {
			req := requestFor(t, pattern)
			require.Equal(t, pattern, c.srv.RoutedTo(req), "%s: the walk's request for %s reaches it", c.name, pattern)
			if c.open[pattern] {
				if pattern == "POST /api/v1/signin" {
					continue // TestSignIn: it takes a code, not the token
				}
				require.True(t, strings.HasPrefix(pattern, "GET "), "%s: %s changes state without the token", c.name, pattern)
				rec := newRecorder()
				c.srv.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code, "%s: %s is served without the token", c.name, pattern)
				require.Empty(t, rec.Header().Values("Set-Cookie"), "%s: %s sets a cookie", c.name, pattern)
				continue
			}
			guarded++
			// A cancelled request: the token is checked before anything
			// else, and a route served without it (a stream) returns at
			// once instead of holding the test.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for _, h := range [][]string{{}, {"Authorization", "Bearer wrong"}, {"Authorization", "Bearer "},
				{"Authorization", "s3cret-token"}, {"Cookie", "switchyard_token=s3cret-token"}} {
				r := req.Clone(ctx)
				if len(h) == 2 {
					r.Header.Set(h[0], h[1])
				}
				rec := newRecorder()
				c.srv.ServeHTTP(rec, r)
				require.Equal(t, http.StatusUnauthorized, rec.Code, "%s: %s with %q", c.name, pattern, h)
				require.Equal(t, `Bearer realm="switchyard"`, rec.Header().Get("WWW-Authenticate"), "%s: %s", c.name, pattern)
				require.NotContains(t, rec.Body.String(), "s3cret-token")
				require.Empty(t, rec.Header().Values("Set-Cookie"), "%s: %s sets a cookie", c.name, pattern)
			}
			r := req.Clone(ctx)
			r.URL.RawQuery = "token=s3cret-token"
			rec := newRecorder()
			c.srv.ServeHTTP(rec, r)
			require.Equal(t, http.StatusUnauthorized, rec.Code, "%s: %s with ?token=", c.name, pattern)
		}
		require.Equal(t, len(patterns)-len(c.open), guarded, "%s: every route but the open ones is guarded", c.name)
	}
}

// requestFor is a request that reaches pattern: its method, and its path
// with each wildcard filled with a value of the fixture's run.
func requestFor(t *testing.T, pattern string) *http.Request {
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	require.True(t, ok, "pattern %q has a method", pattern)
	fill := map[string]string{"{$}": "", "{id}": "alpha", "{lane}": "0", "{exec}": "x1", "{execution}": "x1", "{file}": "output.md"}
	path = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllStringFunc(path, func(w string) string {
		v, ok := fill[w]
		require.True(t, ok, "pattern %q: no value for wildcard %s", pattern, w)
		return v
	})
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "app.js" // a subtree pattern: a file under it
	}
	return mustRequest(t, method, path)
}
