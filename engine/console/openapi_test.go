package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

const apiToken = "api-test-token"

// testSheet is the sample runs' sheet with the access facts a submission
// needs (eventstest.SampleSheet has none: its runs are only replayed).
const testSheet = `# Switchyard model sheet
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# fallback: {"on":["usage-exhausted"]}

bug-fix: codex:gpt-5.6-sol@max -> grok:grok-4.7@xhigh
`

func init() {
	// The event streams and the diagram are text to the validator.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.PlainBodyDecoder)
}

// apiCase is one request the contract test sends.
type apiCase struct {
	name   string
	method string
	path   string
	body   string // JSON, sent as application/json unless ctype says otherwise
	ctype  string // "" with a body: application/json; "-": no Content-Type
	noAuth bool   // send no bearer token
	header []string
	status int
	code   string // the error code a 4xx/5xx answer must carry
	field  string // the field it must name ("" checks nothing)
	// invalidRequest: the document itself must refuse the request (the
	// handler refuses it too, and its answer is still checked).
	invalidRequest bool
	stream         bool // a server-sent event stream: read the head only
}

// openAPIDoc loads and validates the embedded document with kin-openapi.
func openAPIDoc(t *testing.T, serverURL string) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(console.OpenAPI)
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), "the document is OpenAPI 3.1")
	require.NoError(t, doc.Validate(context.Background()), "the document is a valid OpenAPI document")
	doc.Servers = openapi3.Servers{{URL: serverURL}}
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)
	return doc, router
}

// TestOpenAPIDocumentIsServed: GET /api/v1/openapi.json serves the
// embedded document byte for byte, behind the bearer token.
func TestOpenAPIDocumentIsServed(t *testing.T) {
	f := newFixture(t, apiToken)
	resp, body := f.get("/api/v1/openapi.json", "Authorization", "Bearer "+apiToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Equal(t, string(console.OpenAPI), body)
	resp, _ = f.get("/api/v1/openapi.json", "Authorization", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestOpenAPIMatchesRoutes: every /api/v1 pattern the server registers is
// a documented operation, and every documented operation is registered.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t, "")
	doc, _ := openAPIDoc(t, f.http.URL)
	var served, documented []string
	for _, p := range f.srv.Patterns() {
		method, path, _ := strings.Cut(p, " ")
		if strings.HasPrefix(path, "/api/") {
			served = append(served, method+" "+path)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	require.Equal(t, served, documented)
}

// TestOpenAPIValidatesHandlers drives every /api/v1 route through the real
// handlers on a real engine and JetStream, successes and error answers,
// and validates each request and response against the document with
// kin-openapi: a response that drifts from the document (a renamed field,
// an undocumented status, an error body of another shape) fails here. It
// also checks the error codes and fields, the id prefixes, the bearer-only
// writes and the idempotent submission.
func TestOpenAPIValidatesHandlers(t *testing.T) {
	f := newFixture(t, apiToken)
	doc, router := openAPIDoc(t, f.http.URL)
	require.NoError(t, os.WriteFile(filepath.Join(f.exec, "receipt.json"), []byte(`{"status":"failed"}`), 0o600))
	checkout := t.TempDir()
	// "nat": a lane whose native attempt the parent harness runs (a
	// launch on the native route), for the native report.
	t0 := eventstest.T0.Add(5 * time.Hour)
	f.append(eventstest.SampleEnvelope(events.TypeRunCreated, "nat", 0, t0))
	launch := eventstest.SamplePayload(events.TypeLaunch).(events.Launch)
	launch.Route, launch.JobSubject, launch.ExecutionID = policy.RouteNative, events.NativeJobSubject("claude"), "n1"
	f.append(events.NewEnvelope("nat", 0, t0.Add(time.Second), launch))

	submit := func(runID, prompt string) string {
		b, err := json.Marshal(map[string]any{"runId": runID, "sheet": testSheet, "role": "bug-fix",
			"parent": "claude", "prompt": prompt, "cwd": checkout, "timeout": "10m"})
		require.NoError(t, err)
		return string(b)
	}
	sheetBody := func(sheet, role string) string {
		b, _ := json.Marshal(map[string]any{"sheet": sheet, "role": role, "parent": "claude", "prompt": "p", "cwd": checkout})
		return string(b)
	}
	big := `{"sheet":"x","role":"r","parent":"claude","cwd":"/","prompt":"` + strings.Repeat("a", 41<<20) + `"}`

	signInCode, err := console.SignInCode(f.key, time.Now())
	require.NoError(t, err)
	cases := []apiCase{
		{name: "sign in", method: "POST", path: "/api/v1/signin", body: `{"code":"` + signInCode + `"}`, noAuth: true, status: 200},
		{name: "sign in again with the used code", method: "POST", path: "/api/v1/signin", body: `{"code":"` + signInCode + `"}`, noAuth: true, status: 401, code: "unauthorized"},
		{name: "sign in without a code", method: "POST", path: "/api/v1/signin", body: `{}`, noAuth: true, status: 401, code: "unauthorized", invalidRequest: true},
		{name: "document", method: "GET", path: "/api/v1/openapi.json", status: 200},
		{name: "document without token", method: "GET", path: "/api/v1/openapi.json", noAuth: true, status: 401, code: "unauthorized", invalidRequest: true},

		// Submit first, so the reads below see the runs.
		{name: "submit", method: "POST", path: "/api/v1/runs", body: submit("gamma-1", "fix it"), status: 201},
		{name: "submit again: the same run", method: "POST", path: "/api/v1/runs", body: submit("gamma-1", "fix it"), status: 200},
		{name: "submit another request under the id", method: "POST", path: "/api/v1/runs", body: submit("gamma-1", "fix something else"), status: 409, code: "exists", field: "runId"},
		{name: "submit a second run", method: "POST", path: "/api/v1/runs", body: submit("gamma-2", "fix it"), status: 201},
		{name: "submit without an id", method: "POST", path: "/api/v1/runs", body: sheetBody(testSheet, "bug-fix"), status: 201},
		{name: "submit: relative cwd", method: "POST", path: "/api/v1/runs", body: `{"sheet":"s","role":"r","parent":"claude","prompt":"p","cwd":"rel/dir"}`, status: 400, code: "invalid_input", field: "cwd"},
		{name: "submit: bad parent", method: "POST", path: "/api/v1/runs", body: `{"sheet":"s","role":"r","parent":"gemini","prompt":"p","cwd":"/"}`, status: 400, code: "invalid_input", field: "parent", invalidRequest: true},
		{name: "submit: bad duration", method: "POST", path: "/api/v1/runs", body: `{"sheet":"s","role":"r","parent":"claude","prompt":"p","cwd":"/","timeout":"soon"}`, status: 400, code: "invalid_input", field: "timeout"},
		{name: "submit: invalid sheet", method: "POST", path: "/api/v1/runs", body: sheetBody(string(eventstest.SampleSheet), "bug-fix"), status: 400, code: "invalid_input"},
		{name: "submit: unknown role", method: "POST", path: "/api/v1/runs", body: sheetBody(testSheet, "no-such-role"), status: 400, code: "invalid_input"},
		{name: "submit: missing sheet", method: "POST", path: "/api/v1/runs", body: `{"role":"r","parent":"claude","prompt":"p","cwd":"/"}`, status: 400, code: "invalid_input", field: "sheet", invalidRequest: true},
		{name: "submit: unknown key", method: "POST", path: "/api/v1/runs", body: `{"sheet":"s","role":"r","parent":"claude","prompt":"p","cwd":"/","promptPath":"/etc/passwd"}`, status: 400, code: "invalid_input", field: "promptPath", invalidRequest: true},
		{name: "submit: wrong type", method: "POST", path: "/api/v1/runs", body: `{"sheet":"s","role":"r","parent":"claude","prompt":"p","cwd":"/","openCodeChatGPTSubscription":"yes"}`, status: 400, code: "invalid_input", field: "openCodeChatGPTSubscription", invalidRequest: true},
		{name: "submit: not JSON", method: "POST", path: "/api/v1/runs", body: `{"sheet":`, status: 400, code: "invalid_input", invalidRequest: true},
		{name: "submit: two values", method: "POST", path: "/api/v1/runs", body: `{} {}`, status: 400, code: "invalid_input", invalidRequest: true},
		{name: "submit: form body", method: "POST", path: "/api/v1/runs", body: "sheet=x", ctype: "application/x-www-form-urlencoded", status: 415, code: "unsupported_media_type", invalidRequest: true},
		{name: "submit: no content type", method: "POST", path: "/api/v1/runs", body: `{}`, ctype: "-", status: 415, code: "unsupported_media_type", invalidRequest: true},
		{name: "submit: over the limit", method: "POST", path: "/api/v1/runs", body: big, status: 413, code: "too_large"},
		{name: "submit without token", method: "POST", path: "/api/v1/runs", body: submit("gamma-9", "p"), noAuth: true, status: 401, code: "unauthorized", invalidRequest: true},
		{name: "submit with the cookie only", method: "POST", path: "/api/v1/runs", body: submit("gamma-9", "p"), noAuth: true,
			header: []string{"Cookie", "switchyard_token=" + apiToken}, status: 401, code: "unauthorized", invalidRequest: true},

		{name: "list", method: "GET", path: "/api/v1/runs", status: 200},
		{name: "list filtered", method: "GET", path: "/api/v1/runs?state=running,waiting-for-parent&role=review&q=be&limit=1", status: 200},
		{name: "list: bad state", method: "GET", path: "/api/v1/runs?state=done", status: 400, code: "invalid_input"},
		{name: "list: bad limit", method: "GET", path: "/api/v1/runs?limit=-2", status: 400, code: "invalid_input", invalidRequest: true},
		{name: "list without token", method: "GET", path: "/api/v1/runs", noAuth: true, status: 401, code: "unauthorized", invalidRequest: true},
		{name: "run", method: "GET", path: "/api/v1/runs/alpha", status: 200},
		{name: "submitted run", method: "GET", path: "/api/v1/runs/gamma-1", status: 200},
		{name: "run by unique prefix", method: "GET", path: "/api/v1/runs/alp", status: 200},
		{name: "run: ambiguous prefix", method: "GET", path: "/api/v1/runs/gam", status: 400, code: "ambiguous_prefix", field: "id"},
		{name: "run: unknown", method: "GET", path: "/api/v1/runs/nosuch", status: 404, code: "not_found", field: "id"},
		{name: "run: malformed id", method: "GET", path: "/api/v1/runs/bad%20id", status: 400, code: "invalid_input", field: "id"},
		{name: "submit: malformed id", method: "POST", path: "/api/v1/runs", body: `{"runId":"bad id","sheet":"s","role":"r","parent":"claude","prompt":"p","cwd":"/"}`, status: 400, code: "invalid_input", field: "runId"},
		{name: "native report: malformed execution id", method: "POST", path: "/api/v1/native/executions/bad%20id/report", body: `{"status":"failed"}`, status: 400, code: "invalid_input", field: "execution"},
		{name: "report", method: "GET", path: "/api/v1/runs/alpha/report", status: 200},
		{name: "report of a submitted run", method: "GET", path: "/api/v1/runs/gamma-1/report", status: 200},
		{name: "report: unknown", method: "GET", path: "/api/v1/runs/nosuch/report", status: 404, code: "not_found"},
		{name: "timeline", method: "GET", path: "/api/v1/runs/alpha/timeline", status: 200},
		{name: "timeline: unknown", method: "GET", path: "/api/v1/runs/nosuch/timeline", status: 404, code: "not_found"},
		{name: "events", method: "GET", path: "/api/v1/runs/alpha/events?after=1", status: 200},
		{name: "events: bad after", method: "GET", path: "/api/v1/runs/alpha/events?after=x", status: 400, code: "invalid_input", invalidRequest: true},
		{name: "events: unknown", method: "GET", path: "/api/v1/runs/nosuch/events", status: 404, code: "not_found"},
		{name: "run stream", method: "GET", path: "/api/v1/runs/alp/stream", status: 200, stream: true},
		{name: "run stream: unknown", method: "GET", path: "/api/v1/runs/nosuch/stream", status: 404, code: "not_found"},
		{name: "runs stream", method: "GET", path: "/api/v1/stream", status: 200, stream: true},
		{name: "runs stream without token", method: "GET", path: "/api/v1/stream", noAuth: true, status: 401, code: "unauthorized", invalidRequest: true},
		{name: "diagram", method: "GET", path: "/api/v1/machine.svg", status: 200},
		{name: "diagram with a wrong token", method: "GET", path: "/api/v1/machine.svg", noAuth: true, header: []string{"Authorization", "Bearer nope"}, status: 401, code: "unauthorized", invalidRequest: true},
		{name: "receipt", method: "GET", path: "/api/v1/runs/alpha/lanes/0/executions/x1/receipt", status: 200},
		{name: "progress: none yet", method: "GET", path: "/api/v1/runs/alpha/lanes/0/executions/x1/progress", status: 404, code: "not_found"},
		{name: "file: bad lane", method: "GET", path: "/api/v1/runs/alpha/lanes/x/executions/x1/receipt", status: 400, code: "invalid_input", field: "lane"},

		{name: "verdict", method: "POST", path: "/api/v1/runs/alp/lanes/0/verdict", body: `{"state":"unsafe","evidenceRef":"notes/inspect.md"}`, status: 202},
		{name: "verdict: lane not inspecting", method: "POST", path: "/api/v1/runs/gamma-1/lanes/0/verdict", body: `{"state":"clear","evidenceRef":"n"}`, status: 409, code: "conflict"},
		{name: "verdict: unknown lane", method: "POST", path: "/api/v1/runs/alpha/lanes/7/verdict", body: `{"state":"clear","evidenceRef":"n"}`, status: 404, code: "not_found"},
		{name: "verdict: bad state", method: "POST", path: "/api/v1/runs/alpha/lanes/0/verdict", body: `{"state":"fine","evidenceRef":"n"}`, status: 400, code: "invalid_input", field: "state", invalidRequest: true},
		{name: "verdict: from with unsafe", method: "POST", path: "/api/v1/runs/alpha/lanes/0/verdict", body: `{"state":"unsafe","evidenceRef":"n","from":"HEAD"}`, status: 400, code: "invalid_input", field: "from"},
		{name: "verdict: no evidence", method: "POST", path: "/api/v1/runs/alpha/lanes/0/verdict", body: `{"state":"clear","evidenceRef":""}`, status: 400, code: "invalid_input", field: "evidenceRef", invalidRequest: true},
		{name: "verdict: GET", method: "GET", path: "/api/v1/runs/alpha/lanes/0/verdict", status: 405, code: "method_not_allowed"},

		{name: "operation validate: not awaiting", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/validate", body: `{"expectedHead":"` + strings.Repeat("a", 40) + `"}`, status: 409, code: "conflict"},
		{name: "operation validate: no head", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/validate", body: `{"files":["a"]}`, status: 400, code: "invalid_input", field: "expectedHead", invalidRequest: true},
		{name: "operation begin: not awaiting", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/begin", body: `{"digest":"d","wait":"1s"}`, status: 409, code: "conflict"},
		{name: "operation begin: long wait", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/begin", body: `{"digest":"d","wait":"1h"}`, status: 400, code: "invalid_input", field: "wait"},
		{name: "operation done: not awaiting", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/done", body: `{"result":"succeeded","ref":"abc"}`, status: 409, code: "conflict"},
		{name: "operation done: bad result", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/done", body: `{"result":"ok"}`, status: 400, code: "invalid_input", field: "result", invalidRequest: true},
		{name: "operation reject: not awaiting", method: "POST", path: "/api/v1/runs/alpha/lanes/0/operation/reject", body: `{"detail":"no"}`, status: 409, code: "conflict"},
		{name: "operation reject: unknown run", method: "POST", path: "/api/v1/runs/nosuch/lanes/0/operation/reject", body: `{}`, status: 404, code: "not_found"},

		{name: "recover: not awaiting", method: "POST", path: "/api/v1/runs/alpha/lanes/0/recover", body: `{"clear":false,"evidenceRef":"n"}`, status: 409, code: "conflict"},
		{name: "recover: no decision", method: "POST", path: "/api/v1/runs/alpha/lanes/0/recover", body: `{"evidenceRef":"n"}`, status: 400, code: "invalid_input", field: "clear", invalidRequest: true},
		{name: "recover: decline with a recovery", method: "POST", path: "/api/v1/runs/alpha/lanes/0/recover", body: `{"clear":false,"evidenceRef":"n","correction":"c"}`, status: 400, code: "invalid_input", field: "correction"},

		{name: "native report", method: "POST", path: "/api/v1/native/executions/n1/report", body: `{"status":"failed","processStarted":false,"evidenceRef":"host.log"}`, status: 202},
		{name: "native report: an external execution", method: "POST", path: "/api/v1/native/executions/x1/report", body: `{"status":"failed"}`, status: 404, code: "not_found"},
		{name: "native report: unknown execution", method: "POST", path: "/api/v1/native/executions/x9/report", body: `{"status":"complete","processStarted":true}`, status: 404, code: "not_found"},
		{name: "native report: bad status", method: "POST", path: "/api/v1/native/executions/x9/report", body: `{"status":"fine"}`, status: 400, code: "invalid_input", field: "status"},

		{name: "cancel a lane", method: "POST", path: "/api/v1/runs/gamma-2/lanes/0/cancel", body: `{"reason":"superseded"}`, status: 202},
		{name: "cancel a lane: unknown lane", method: "POST", path: "/api/v1/runs/gamma-2/lanes/5/cancel", body: `{}`, status: 404, code: "not_found"},
		{name: "cancel a lane: bad lane", method: "POST", path: "/api/v1/runs/gamma-2/lanes/-1/cancel", body: `{}`, status: 400, code: "invalid_input", field: "lane"},
		{name: "cancel a run", method: "POST", path: "/api/v1/runs/gamma-1/cancel", body: `{}`, status: 202},
		{name: "cancel a run: ambiguous", method: "POST", path: "/api/v1/runs/gam/cancel", body: `{}`, status: 400, code: "ambiguous_prefix", field: "id"},
		{name: "cancel a run: unknown", method: "POST", path: "/api/v1/runs/nosuch/cancel", body: `{"reason":"x"}`, status: 404, code: "not_found"},
		{name: "cancel a run: unknown key", method: "POST", path: "/api/v1/runs/gamma-1/cancel", body: `{"lane":0}`, status: 400, code: "invalid_input", field: "lane", invalidRequest: true},

		{name: "no such endpoint", method: "GET", path: "/api/v1/nosuch", status: 404, code: "not_found"},
		{name: "wrong method", method: "DELETE", path: "/api/v1/runs", status: 405, code: "method_not_allowed"},
	}

	c := newContract(t, doc, router, f.http.URL)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { c.check(t, tc) })
	}
	// Every documented operation must be driven to a success and to an
	// error answer (TestOpenAPIOperationAndRecover drives the successes
	// this fixture cannot).
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + path
			require.True(t, c.success[op] || uncoveredSuccess[op], "no case drives %s to a success", op)
			require.True(t, c.failure[op], "no case drives %s to an error", op)
		}
	}
}

// runNamed is a run named in a message.
var runNamed = regexp.MustCompile(`\brun [A-Za-z0-9._-]+`)

// contract sends cases to a server and validates each request and
// response against the document; it records which operations answered a
// success and which an error.
type contract struct {
	doc              *openapi3.T
	router           routers.Router
	url              string
	success, failure map[string]bool
}

func newContract(t *testing.T, doc *openapi3.T, router routers.Router, url string) *contract {
	return &contract{doc: doc, router: router, url: url, success: map[string]bool{}, failure: map[string]bool{}}
}

// check sends tc and checks its answer: the status, an error's code and
// field, and (kin-openapi) the request and the response against the
// document. It returns the response body.
func (c *contract) check(t *testing.T, tc apiCase) []byte {
	t.Helper()
	req, resp, body := send(t, c.url, tc)
	require.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.method, tc.path, clip(body))
	if tc.status >= 400 {
		var e struct {
			Error struct{ Code, Message, Field string }
		}
		require.NoError(t, json.Unmarshal(body, &e), clip(body))
		require.Equal(t, tc.code, e.Error.Code, clip(body))
		require.NotEmpty(t, e.Error.Message)
		if tc.field != "" {
			require.Equal(t, tc.field, e.Error.Field, clip(body))
		}
		require.NotContains(t, e.Error.Message, "engine:", "no package prefix")
		require.NotContains(t, e.Error.Message, "events:", "no package prefix")
		// The message names a run once (issue 28, finding 24: "run x:
		// run x: unknown run").
		seen := map[string]bool{}
		for _, m := range runNamed.FindAllString(e.Error.Message, -1) {
			require.False(t, seen[m], "%q names %s twice", e.Error.Message, m)
			seen[m] = true
		}
		require.NotContains(t, string(body), apiToken)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		// No route: the answer must still be a documented error body.
		require.GreaterOrEqual(t, tc.status, 400)
		var v any
		require.NoError(t, json.Unmarshal(body, &v))
		require.NoError(t, c.doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()), clip(body))
		return body
	}
	op := tc.method + " " + route.Path
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearerAuth, MultiError: true}}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if tc.invalidRequest {
		require.Error(t, reqErr, "the document takes a request the handler refuses")
	} else {
		require.NoError(t, reqErr, "the document refuses a request the handler takes")
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(body)
	require.NoError(t, openapi3filter.ValidateResponse(ctx, out), "%s answered %d: %s", op, resp.StatusCode, clip(body))
	if tc.status < 300 {
		c.success[op] = true
	} else {
		c.failure[op] = true
	}
	return body
}

// uncoveredSuccess are the operations whose success this fixture cannot
// produce: they need a lane that awaits a parent operation (a worktree
// with a valid handoff) or a recovery, which only a real attempt
// produces. TestOpenAPIOperationAndRecover drives exactly these to a
// success, with an engine and a worker on the simulated CLIs; their error
// answers are driven here too.
var uncoveredSuccess = map[string]bool{
	"POST /api/v1/runs/{id}/lanes/{lane}/operation/validate": true,
	"POST /api/v1/runs/{id}/lanes/{lane}/operation/begin":    true,
	"POST /api/v1/runs/{id}/lanes/{lane}/operation/done":     true,
	"POST /api/v1/runs/{id}/lanes/{lane}/operation/reject":   true,
	"POST /api/v1/runs/{id}/lanes/{lane}/recover":            true,
}

// bearerAuth is the document's security scheme as the validator checks
// it: the bearer header with the server's token.
func bearerAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecurityScheme.Type != "http" || in.SecurityScheme.Scheme != "bearer" {
		return fmt.Errorf("unexpected security scheme %s", in.SecuritySchemeName)
	}
	if in.RequestValidationInput.Request.Header.Get("Authorization") != "Bearer "+apiToken {
		return errors.New("no bearer token")
	}
	return nil
}

// send makes tc's request against the server at base and returns a copy
// of it (with its body) for the validator, the response and its body (an
// event stream's head only).
func send(t *testing.T, base string, tc apiCase) (*http.Request, *http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newReq := func(ctx context.Context) *http.Request {
		var rd io.Reader
		if tc.body != "" {
			rd = strings.NewReader(tc.body)
		}
		req, err := http.NewRequestWithContext(ctx, tc.method, base+tc.path, rd)
		require.NoError(t, err)
		switch {
		case tc.ctype == "-":
		case tc.ctype != "":
			req.Header.Set("Content-Type", tc.ctype)
		case tc.body != "":
			req.Header.Set("Content-Type", "application/json")
		}
		if !tc.noAuth {
			req.Header.Set("Authorization", "Bearer "+apiToken)
		}
		for i := 0; i+1 < len(tc.header); i += 2 {
			req.Header.Set(tc.header[i], tc.header[i+1])
		}
		return req
	}
	resp, err := http.DefaultClient.Do(newReq(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	var body []byte
	if tc.stream && resp.StatusCode == http.StatusOK {
		body = []byte{} // the stream never ends; its head is what is checked
	} else {
		body, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
	}
	return newReq(context.Background()), resp, body
}

// clip shortens a body for a failure message.
func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(bytes.TrimSpace(b))
}

// TestAPIErrorCodesAreDocumented: the Error schema lists exactly the
// server's codes, and docs/API.md's table explains each.
func TestAPIErrorCodesAreDocumented(t *testing.T) {
	doc, _ := openAPIDoc(t, "http://127.0.0.1")
	var codes []string
	for _, c := range doc.Components.Schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
		codes = append(codes, fmt.Sprint(c))
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "API.md"))
	require.NoError(t, err)
	for _, c := range codes {
		require.Contains(t, string(md), "| `"+c+"` |", "docs/API.md's error table lacks %s", c)
	}
	require.ElementsMatch(t, console.ErrorCodes(), codes, "the document's codes are the server's")
	require.True(t, slices.Contains(codes, "not_found"))
}
