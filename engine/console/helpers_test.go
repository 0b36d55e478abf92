package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/events/metrics"
)

// waitTimeout bounds every wait; generous for -race on two shared cores.
const waitTimeout = 30 * time.Second

// fixture is a console over a real embedded JetStream holding two runs:
// "alpha" (lane 0 launched x1, claimed, finished failed-after-start and
// inspecting: it waits for the parent's verdict) and "beta" (created
// later, role review, its lane not launched yet).
type fixture struct {
	t       testing.TB
	emb     *events.Embedded
	js      *events.JetStream
	store   events.Store
	eng     *engine.Engine
	data    string
	metrics *metrics.Metrics
	srv     *console.Server
	token   string // the console's bearer token
	key     []byte // its sign-in key
	http    *httptest.Server
	last    map[string]uint64 // subject → last sequence
	exec    string            // alpha's execution dir
}

// fixtureToken is the token of a fixture made with token "".
const fixtureToken = "fixture-token"

// newFixture starts the console with token ("": fixtureToken); get, post
// and stream send it unless told otherwise.
func newFixture(t testing.TB, token string) *fixture {
	t.Helper()
	if token == "" {
		token = fixtureToken
	}
	emb := eventstest.StartServer(t)
	js := eventstest.Open(t, emb, events.JetStreamConfig{})
	f := &fixture{t: t, emb: emb, js: js, store: js.Store(), data: t.TempDir(), last: map[string]uint64{}, metrics: metrics.New()}
	eng, err := engine.New(engine.Config{Store: f.store, Queue: js.Queue(), Claims: js.Claims(), Capacity: js.Capacity(), DataDir: f.data,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	f.eng = eng
	f.exec = filepath.Join(f.data, "runs", "alpha", "L0", "x1")
	require.NoError(t, os.MkdirAll(f.exec, 0o700))

	t0 := eventstest.T0
	f.append(eventstest.SampleEnvelope(events.TypeRunCreated, "alpha", 0, t0))
	launch := eventstest.SamplePayload(events.TypeLaunch).(events.Launch)
	launch.Paths = events.Paths{Prompt: filepath.Join(f.exec, "prompt.md"), Output: filepath.Join(f.exec, "output.md"),
		Receipt: filepath.Join(f.exec, "receipt.json"), Progress: filepath.Join(f.exec, "progress.json"), Cwd: "/srv/checkout"}
	f.append(events.NewEnvelope("alpha", 0, t0.Add(time.Second), launch))
	// No worker reports exist in this store: the claim and finish point at
	// none, so the engine that drives the run waits for nothing.
	claim := eventstest.SamplePayload(events.TypeClaim).(events.Claim)
	claim.ReportSeq = 0
	f.append(events.NewEnvelope("alpha", 0, t0.Add(2*time.Second), claim))
	finish := eventstest.SamplePayload(events.TypeFinish).(events.Finish)
	finish.Event.Status = "failed"
	finish.Receipt = nil
	finish.ReceiptDigest = ""
	finish.Abandoned = true
	finish.ReportSeq = 0
	f.append(events.NewEnvelope("alpha", 0, t0.Add(5*time.Second), finish))
	f.append(eventstest.SampleEnvelope(events.TypeInspect, "alpha", 0, t0.Add(6*time.Second)))

	beta := eventstest.SamplePayload(events.TypeRunCreated).(events.RunCreated)
	beta.Role = "review"
	f.append(events.NewEnvelope("beta", events.RunLane, t0.Add(time.Minute), beta))

	f.token = token
	f.key, err = console.NewSignInKey()
	require.NoError(t, err)
	srv, err := console.New(console.Options{Engine: eng, Store: f.store, DataDir: f.data, Token: token, SignInKey: f.key, Metrics: f.metrics})
	require.NoError(t, err)
	f.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	f.http = httptest.NewServer(srv)
	t.Cleanup(func() {
		f.http.CloseClientConnections()
		f.http.Close()
		cancel()
		<-done
	})
	return f
}

// append stores env after the last event of its subject.
func (f *fixture) append(env events.Envelope) uint64 {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	seq, err := f.store.Append(ctx, env, f.last[env.Subject()])
	require.NoError(f.t, err)
	f.last[env.Subject()] = seq
	return seq
}

// setHeaders gives req the fixture's token, then header's name, value
// pairs (a value "" removes the header: "Authorization", "" sends none).
func (f *fixture) setHeaders(req *http.Request, header []string) {
	req.Header.Set("Authorization", "Bearer "+f.token)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
}

// get fetches path with the token (see setHeaders) and returns the
// response (body read) and its body.
func (f *fixture) get(path string, header ...string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
	require.NoError(f.t, err)
	f.setHeaders(req, header)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, string(b)
}

// getJSON fetches path, requires want, and decodes the body into v.
func (f *fixture) getJSON(path string, want int, v any) {
	f.t.Helper()
	resp, body := f.get(path)
	require.Equal(f.t, want, resp.StatusCode, body)
	require.Equal(f.t, "application/json", resp.Header.Get("Content-Type"))
	require.NoError(f.t, json.Unmarshal([]byte(body), v), body)
}

// post sends a form to path with the token (see setHeaders) and the
// Accept header.
func (f *fixture) post(path string, form url.Values, header ...string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(form.Encode()))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	f.setHeaders(req, header)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, string(b)
}

// sseReader reads server-sent events: each call returns the next event's
// name and data.
type sseReader struct {
	r    *bufio.Reader
	body io.Closer
}

func (f *fixture) stream(path string) *sseReader {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.http.URL+path, nil)
	require.NoError(f.t, err)
	f.setHeaders(req, nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	require.Equal(f.t, "text/event-stream", resp.Header.Get("Content-Type"))
	f.t.Cleanup(func() { cancel(); resp.Body.Close() })
	return &sseReader{r: bufio.NewReader(resp.Body), body: resp.Body}
}

// next returns the next event (skipping comments), failing the test after
// waitTimeout.
func (s *sseReader) next(t *testing.T) (name, id, data string) {
	t.Helper()
	type ev struct{ name, id, data string }
	got := make(chan ev, 1)
	go func() {
		var e ev
		for {
			line, err := s.r.ReadString('\n')
			if err != nil {
				close(got)
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && e.name != "":
				got <- e
				return
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	select {
	case e, ok := <-got:
		require.True(t, ok, "the stream ended")
		return e.name, e.id, e.data
	case <-time.After(waitTimeout):
		s.body.Close()
		t.Fatal("no event on the stream")
	}
	return "", "", ""
}

// request is a request for a handler called directly, with the token.
func (f *fixture) request(method, path string) *http.Request {
	r := httptest.NewRequest(method, path, nil)
	r.Header.Set("Authorization", "Bearer "+f.token)
	return r
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, path, nil)
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
