package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// TestAPIRuns: /api/v1/runs serves the engine's run statuses (the objects
// of `status --json`), newest first, filtered by state, role and id
// prefix; a bad filter is a 400 naming it.
func TestAPIRuns(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	alpha, err := f.eng.Status(ctx, "alpha")
	require.NoError(t, err)
	beta, err := f.eng.Status(ctx, "beta")
	require.NoError(t, err)
	wantJSON := func(sts ...engine.RunStatus) string {
		b, err := json.Marshal(sts)
		require.NoError(t, err)
		return string(b)
	}
	for _, tc := range []struct {
		name, query string
		want        []engine.RunStatus
	}{
		{"all, newest first", "", []engine.RunStatus{beta, alpha}},
		{"waiting for the parent", "?state=waiting-for-parent", []engine.RunStatus{alpha}},
		{"two states", "?state=running,waiting-for-parent", []engine.RunStatus{beta, alpha}},
		{"final: none", "?state=final", []engine.RunStatus{}},
		{"role", "?role=review", []engine.RunStatus{beta}},
		{"id prefix", "?q=al", []engine.RunStatus{alpha}},
		{"limit", "?limit=1", []engine.RunStatus{beta}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []engine.RunStatus
			f.getJSON("/api/v1/runs"+tc.query, http.StatusOK, &got)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, wantJSON(tc.want...), string(b))
		})
	}
	var e apiErr
	f.getJSON("/api/v1/runs?state=done", http.StatusBadRequest, &e)
	require.Equal(t, `state "done" is not a run state; want one of running, waiting-for-parent, final, cancelled`, e.Error.Message)
	f.getJSON("/api/v1/runs?limit=-2", http.StatusBadRequest, &e)
	require.Contains(t, e.Error.Message, `limit "-2"`)
}

// TestAPIRun: one run's status is exactly the engine's; an unknown run is a
// 404 and a malformed id a 400.
func TestAPIRun(t *testing.T) {
	f := newFixture(t, "")
	want, err := f.eng.Status(context.Background(), "alpha")
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	resp, body := f.get("/api/v1/runs/alpha")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.JSONEq(t, string(wantJSON), body)
	require.Equal(t, machines.StateInspecting, want.Lanes[0].State)
	require.Equal(t, engine.WaitVerdict, want.Lanes[0].WaitingFor)

	var e apiErr
	f.getJSON("/api/v1/runs/nosuch", http.StatusNotFound, &e)
	require.Contains(t, e.Error.Message, "run nosuch: ")
	f.getJSON("/api/v1/runs/bad%20id", http.StatusBadRequest, &e)
	require.Contains(t, e.Error.Message, `run id "bad id": want `)
}

// TestAPIRunDoc: Options.RunDoc decorates the run object (serve passes
// status --json's, with eligibility and caps).
func TestAPIRunDoc(t *testing.T) {
	f := newFixture(t, "")
	srv, err := console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: f.data, Token: f.token,
		RunDoc: func(_ context.Context, st engine.RunStatus) (any, error) {
			return map[string]any{"run": st.Run, "lanes": len(st.Lanes), "eligibility": []string{}}, nil
		}})
	require.NoError(t, err)
	rec := newRecorder()
	srv.ServeHTTP(rec, f.request(http.MethodGet, "/api/v1/runs/alpha"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"run":"alpha","lanes":1,"eligibility":[]}`, rec.Body.String())
}

// TestAPIReportEventsTimeline: the report is the engine's; events are the
// log in store order (after a sequence with ?after=); the timeline has the
// attempt bar and the open wait for the verdict.
func TestAPIReportEventsTimeline(t *testing.T) {
	f := newFixture(t, "")
	want, err := f.eng.Report(context.Background(), "alpha")
	require.NoError(t, err)
	wantJSON, _ := json.Marshal(want)
	resp, body := f.get("/api/v1/runs/alpha/report")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.JSONEq(t, string(wantJSON), body)

	var evs []json.RawMessage
	f.getJSON("/api/v1/runs/alpha/events", http.StatusOK, &evs)
	require.Len(t, evs, 5)
	var types []string
	for _, raw := range evs {
		env, err := events.Decode(raw)
		require.NoError(t, err, string(raw))
		types = append(types, string(env.Type))
	}
	require.Equal(t, []string{"run-created", "launch", "claim", "finish", "inspect"}, types)
	env, _ := events.Decode(evs[2])
	f.getJSON(fmt.Sprintf("/api/v1/runs/alpha/events?after=%d", env.Seq), http.StatusOK, &evs)
	require.Len(t, evs, 2)
	var e apiErr
	f.getJSON("/api/v1/runs/alpha/events?after=x", http.StatusBadRequest, &e)
	f.getJSON("/api/v1/runs/nosuch/events", http.StatusNotFound, &e)

	var tl console.Timeline
	f.getJSON("/api/v1/runs/alpha/timeline", http.StatusOK, &tl)
	require.Len(t, tl.Lanes, 1)
	l := tl.Lanes[0]
	require.Len(t, l.Attempts, 1)
	a := l.Attempts[0]
	require.Equal(t, "x1", a.ExecutionID)
	require.NotNil(t, a.Claimed)
	require.NotNil(t, a.Finished)
	require.Equal(t, "failed", string(a.Outcome))
	require.Equal(t, 4*time.Second, a.Finished.Sub(a.Launched)) // launched at t0+1s, finished at t0+5s
	require.Len(t, l.Waits, 1)
	require.Equal(t, "verdict", l.Waits[0].Kind)
	require.Nil(t, l.Waits[0].To, "the wait is open")
	require.Nil(t, l.Ended)
}

// TestAPIFiles: an execution's receipt, progress and output are served from
// the paths its launch recorded, output cut at MaxFileBytes; a missing
// file is a 404, a path outside the data directory a 403, a symlink is
// never followed.
func TestAPIFiles(t *testing.T) {
	f := newFixture(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.exec, "receipt.json"), []byte(`{"status":"failed"}`), 0o600))
	big := strings.Repeat("x", console.MaxFileBytes+100)
	require.NoError(t, os.WriteFile(filepath.Join(f.exec, "output.md"), []byte(big), 0o600))
	base := "/api/v1/runs/alpha/lanes/0/executions/x1/"

	resp, body := f.get(base + "receipt")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, `{"status":"failed"}`, body)
	resp, body = f.get(base + "output")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, body, console.MaxFileBytes)
	require.Equal(t, fmt.Sprint(console.MaxFileBytes), resp.Header.Get("X-Switchyard-Truncated"))
	resp, body = f.get(base + "progress")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	require.Contains(t, body, "execution x1 has no progress yet")
	resp, body = f.get(base + "prompt")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	resp, body = f.get("/api/v1/runs/alpha/lanes/0/executions/x9/receipt")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	require.Contains(t, body, "has no execution x9")

	// A symlink in place of the progress file is refused.
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(f.exec, "progress.json")))
	resp, body = f.get(base + "progress")
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, "secret\"")

	// A console whose data directory does not hold the paths: 403.
	srv, err := console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: t.TempDir(), Token: f.token})
	require.NoError(t, err)
	rec := newRecorder()
	srv.ServeHTTP(rec, f.request(http.MethodGet, base+"receipt"))
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "lies outside the data directory")
}

// TestMachineSVG: the diagram has one state box per machine state and one
// arrow per (from, to) pair of the lane table.
func TestMachineSVG(t *testing.T) {
	f := newFixture(t, "")
	resp, body := f.get("/api/v1/machine.svg")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "image/svg+xml", resp.Header.Get("Content-Type"))
	for _, s := range machines.States {
		require.Equal(t, 1, strings.Count(body, fmt.Sprintf(`data-state="%s"`, s)), "state %s", s)
	}
	pairs := map[string]bool{}
	for _, tr := range machines.Transitions() {
		for _, from := range tr.From {
			pairs[fmt.Sprintf(`data-from="%s" data-to="%s"`, from, tr.To)] = true
		}
	}
	require.Equal(t, len(pairs), strings.Count(body, `class="edge`))
	for p := range pairs {
		require.Contains(t, body, p)
	}
	require.Contains(t, body, ">launch, continue</text>")
}

// TestPagesAndAssets: the pages are shells served without the token
// that carry no run data and set no cookie, the assets are embedded, and
// every response forbids framing and inline script.
func TestPagesAndAssets(t *testing.T) {
	f := newFixture(t, "")
	for _, path := range []string{"/", "/runs/alpha"} {
		resp, body := f.get(path, "Authorization", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, body, `<script src="/assets/app.js" defer></script>`)
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		require.Empty(t, resp.Cookies(), path)
		require.NotContains(t, body, "x1", "%s: the shell carries no run data", path)
		require.NotContains(t, body, f.token)
	}
	for _, a := range []string{"/assets/app.js", "/assets/style.css"} {
		resp, body := f.get(a, "Authorization", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, a)
		require.NotEmpty(t, body)
	}
	resp, _ := f.get("/nosuch")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
