package console

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// The API's writes: submit, cancel and the lane answers, each through the
// engine call the matching CLI command makes, so they are recorded the
// same way. Every write takes a JSON object (Content-Type:
// application/json, no unknown keys, one value, at most the route's byte
// limit) and, with a token, only the Authorization: Bearer header: never
// a cookie, so no page of another site can make a browser send one.

// Body limits: a submission carries the sheet and the prompt (the engine
// takes prompts up to 16 MiB; JSON escaping can grow them), an answer a
// few refs.
const (
	maxSubmitBytes = 40 << 20
	maxAnswerBytes = 64 << 10
)

// maxBeginWait bounds an operation begin's wait for the engine to record it.
const maxBeginWait = 2 * time.Minute

// bearerOnly marks a route that authenticates with the bearer header only
// (routes wraps it in apiAuth instead of auth).
type bearerOnly http.HandlerFunc

func (h bearerOnly) ServeHTTP(w http.ResponseWriter, r *http.Request) { h(w, r) }

// apiAuth requires Authorization: Bearer TOKEN when the server has a
// token; a missing or wrong one is a JSON 401 unauthorized.
func (s *Server) apiAuth(next http.Handler) http.Handler {
	if s.o.Token == "" {
		return next
	}
	want := []byte(s.o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			s.failCode(w, http.StatusUnauthorized, codeUnauthorized, "", "%s", unauthorizedMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unauthorizedMessage is the API's 401 message: it says where the token is
// and never repeats one.
const unauthorizedMessage = "unauthorized: send Authorization: Bearer <the token> (serve's --http-token-file or SWITCHYARD_HTTP_TOKEN, else <data-dir>/console.token, new at every start); in a browser, open the address `switchyard console-url` prints"

// decodeBody reads r's JSON object into v: Content-Type application/json,
// at most limit bytes, no unknown keys, nothing after the object. It
// writes the error (415, 413 or 400 naming the field) and returns false
// when the body is not usable.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		s.fail(w, http.StatusUnsupportedMediaType, "the body must be a JSON object sent as Content-Type: application/json, not %q", r.Header.Get("Content-Type"))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err == nil {
		return true
	}
	var (
		tooBig  *http.MaxBytesError
		typeErr *json.UnmarshalTypeError
		synErr  *json.SyntaxError
	)
	switch {
	case errors.As(err, &tooBig):
		s.fail(w, http.StatusRequestEntityTooLarge, "the body is over this endpoint's limit of %d bytes", limit)
	case errors.Is(err, io.EOF):
		s.fail(w, http.StatusBadRequest, "the body is empty; want a JSON object")
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			s.fail(w, http.StatusBadRequest, "the body is a JSON %s; want a JSON object", typeErr.Value)
			return false
		}
		s.failField(w, http.StatusBadRequest, field, "%s: a JSON %s where the API wants %s", field, typeErr.Value, jsonKind(typeErr.Type.Kind().String()))
	case errors.As(err, &synErr), errors.Is(err, io.ErrUnexpectedEOF):
		s.fail(w, http.StatusBadRequest, "the body is not valid JSON: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		s.failField(w, http.StatusBadRequest, name, "unknown field %q; docs/API.md lists this endpoint's fields", name)
	default:
		s.fail(w, http.StatusBadRequest, "read the body: %v", err)
	}
	return false
}

// jsonKind names a Go kind as the JSON value it decodes from.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "ptr":
		return "a value"
	}
	return "a number"
}

// laneParam reads the {lane} of the path: a zero-based lane index.
func (s *Server) laneParam(w http.ResponseWriter, r *http.Request) (int, bool) {
	lane, err := strconv.Atoi(r.PathValue("lane"))
	if err != nil || lane < 0 || lane > events.MaxLanes {
		s.failField(w, http.StatusBadRequest, "lane", "lane %q: want a zero-based lane index", r.PathValue("lane"))
		return 0, false
	}
	return lane, true
}

// runLane resolves the run (an id or a unique prefix) and the lane of the
// path.
func (s *Server) runLane(w http.ResponseWriter, r *http.Request) (string, int, bool) {
	lane, ok := s.laneParam(w, r)
	if !ok {
		return "", 0, false
	}
	id, ok := s.runID(w, r)
	return id, lane, ok
}

// SubmitRequest is the body of POST /api/v1/runs: engine.RunRequest with
// the sheet and the prompt as values (never paths the server would read)
// and durations as Go duration strings ("90s", "10m").
type SubmitRequest struct {
	RunID                       string            `json:"runId,omitempty"`
	Sheet                       string            `json:"sheet"`
	Role                        string            `json:"role"`
	Parent                      string            `json:"parent"`
	Mode                        string            `json:"mode,omitempty"`
	Prompt                      string            `json:"prompt"`
	Cwd                         string            `json:"cwd"`
	Timeout                     string            `json:"timeout,omitempty"`
	Contract                    string            `json:"contract,omitempty"`
	AllowUnknownQuota           []string          `json:"allowUnknownQuota,omitempty"`
	StallTimeout                string            `json:"stallTimeout,omitempty"`
	ProviderStallTimeouts       map[string]string `json:"providerStallTimeouts,omitempty"`
	AllowUnverifiedContainment  []string          `json:"allowUnverifiedContainment,omitempty"`
	OpenCodeChatGPTSubscription bool              `json:"openCodeChatGPTSubscription,omitempty"`
}

// submitResult answers a submission: the run id, and whether this request
// created it (false: the same request was submitted before).
type submitResult struct {
	Run     string `json:"run"`
	Created bool   `json:"created"`
}

// fieldError is an invalid request field.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

func badField(field, format string, a ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, a...)}
}

// runRequest checks what the engine cannot attribute to a field and turns
// the body into an engine.RunRequest.
func (b SubmitRequest) runRequest() (engine.RunRequest, *fieldError) {
	req := engine.RunRequest{RunID: b.RunID, Sheet: []byte(b.Sheet), Role: b.Role, Parent: policy.Parent(b.Parent),
		Mode: policy.Access(b.Mode), Prompt: []byte(b.Prompt), Cwd: b.Cwd, Contract: policy.Contract(b.Contract),
		OpenCodeChatGPTSubscription: b.OpenCodeChatGPTSubscription}
	if b.RunID != "" {
		if err := events.ValidateRunID(b.RunID); err != nil {
			return req, badField("runId", "runId: %s", invalidReason(err))
		}
	}
	switch {
	case strings.TrimSpace(b.Sheet) == "":
		return req, badField("sheet", "sheet is required: the model sheet's text")
	case strings.TrimSpace(b.Role) == "":
		return req, badField("role", "role is required: a row header or leaf role of the sheet")
	case b.Prompt == "":
		return req, badField("prompt", "prompt is required: the task's text")
	case b.Cwd == "":
		return req, badField("cwd", "cwd is required: the absolute path of the checkout on the server")
	case !filepath.IsAbs(b.Cwd):
		return req, badField("cwd", "cwd %q is not absolute; it names the checkout on the server", b.Cwd)
	}
	if _, err := policy.ParseParent(b.Parent); err != nil {
		return req, badField("parent", "parent %q: want claude or codex", b.Parent)
	}
	if b.Mode != "" {
		if _, err := policy.ParseAccess(b.Mode); err != nil {
			return req, badField("mode", "mode %q: %v", b.Mode, cleanMessage(err.Error()))
		}
	}
	var err *fieldError
	if req.Timeout, err = duration("timeout", b.Timeout); err != nil {
		return req, err
	}
	if req.StallTimeout, err = duration("stallTimeout", b.StallTimeout); err != nil {
		return req, err
	}
	for p, v := range b.ProviderStallTimeouts {
		d, err := duration("providerStallTimeouts", v)
		if err != nil {
			return req, err
		}
		if req.ProviderStallTimeouts == nil {
			req.ProviderStallTimeouts = map[policy.Provider]time.Duration{}
		}
		req.ProviderStallTimeouts[policy.Provider(p)] = d
	}
	for _, p := range b.AllowUnknownQuota {
		req.AllowUnknownQuota = append(req.AllowUnknownQuota, policy.Provider(p))
	}
	for _, p := range b.AllowUnverifiedContainment {
		req.AllowUnverifiedContainment = append(req.AllowUnverifiedContainment, policy.Provider(p))
	}
	return req, nil
}

// duration parses a Go duration string ("" is 0).
func duration(field, v string) (time.Duration, *fieldError) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, badField(field, "%s %q: want a duration such as 90s or 10m", field, v)
	}
	return d, nil
}

// apiSubmit submits a run (POST /api/v1/runs) through engine.SubmitOnce:
// 201 with the new run's id, 200 when the same request was submitted
// under its runId before, 409 exists when that id holds a different one.
func (s *Server) apiSubmit(w http.ResponseWriter, r *http.Request) {
	var body SubmitRequest
	if !s.decodeBody(w, r, maxSubmitBytes, &body) {
		return
	}
	req, ferr := body.runRequest()
	if ferr != nil {
		s.failField(w, http.StatusBadRequest, ferr.field, "%s", ferr.msg)
		return
	}
	run, existed, err := s.o.Engine.SubmitOnce(r.Context(), req)
	if err != nil {
		what := ""
		if body.RunID != "" {
			what = "run " + body.RunID
		}
		s.failEngine(w, err, what)
		return
	}
	w.Header().Set("Location", "/api/v1/runs/"+run)
	if existed {
		writeJSON(w, http.StatusOK, submitResult{Run: run})
		return
	}
	writeJSON(w, http.StatusCreated, submitResult{Run: run, Created: true})
}

// controlResult answers a cancel or a lane answer: the engine took it and
// applies it in the run's order (the run's status shows when).
type controlResult struct {
	Run     string `json:"run,omitempty"`
	Lane    *int   `json:"lane,omitempty"`
	Message string `json:"message"`
}

func accepted(w http.ResponseWriter, run string, lane *int, format string, a ...any) {
	writeJSON(w, http.StatusAccepted, controlResult{Run: run, Lane: lane, Message: fmt.Sprintf(format, a...)})
}

// cancelRequest is the body of a cancel.
type cancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// defaultCancelReason is recorded when a cancel gives none.
const defaultCancelReason = "cancelled through the HTTP API"

// apiCancelRun cancels every lane of a run that is not final (switchyard
// cancel --run R).
func (s *Server) apiCancelRun(w http.ResponseWriter, r *http.Request) {
	var body cancelRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	s.cancel(w, r, id, events.RunLane, body.Reason)
}

// apiCancelLane cancels one lane (switchyard cancel --run R --lane N).
func (s *Server) apiCancelLane(w http.ResponseWriter, r *http.Request) {
	var body cancelRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	s.cancel(w, r, id, lane, body.Reason)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, id string, lane int, reason string) {
	if strings.TrimSpace(reason) == "" {
		reason = defaultCancelReason
	}
	what, lanePtr := "run "+id, (*int)(nil)
	if lane != events.RunLane {
		what, lanePtr = fmt.Sprintf("run %s lane %d", id, lane), &lane
	}
	if err := s.o.Engine.Cancel(r.Context(), id, lane, reason); err != nil {
		s.failEngine(w, err, what)
		return
	}
	accepted(w, id, lanePtr, "cancel requested for %s", what)
}

// verdictRequest is the parent's verdict on a started writer (switchyard
// inspect).
type verdictRequest struct {
	State       string `json:"state"`
	EvidenceRef string `json:"evidenceRef"`
	From        string `json:"from,omitempty"`
}

func (s *Server) apiVerdict(w http.ResponseWriter, r *http.Request) {
	var body verdictRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	v := events.VerdictState(body.State)
	switch {
	case v != events.VerdictClear && v != events.VerdictUnsafe:
		s.failField(w, http.StatusBadRequest, "state", "state %q: want clear or unsafe", body.State)
		return
	case strings.TrimSpace(body.EvidenceRef) == "":
		s.failField(w, http.StatusBadRequest, "evidenceRef", "evidenceRef is required: a reference to your inspection record")
		return
	case body.From != "" && v != events.VerdictClear:
		s.failField(w, http.StatusBadRequest, "from", "from goes with a clear verdict only: an unsafe verdict stops the lane, so no writer starts from it")
		return
	}
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	next, err := s.o.Engine.RecordVerdict(r.Context(), id, lane, v, body.EvidenceRef, body.From)
	if err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	if next != "" {
		// The next writer and where it starts only when one launches.
		next = "; " + strings.NewReplacer("--from", "from", "(no --from)", "(no from)").Replace(next)
	}
	accepted(w, id, &lane, "verdict %s recorded for run %s lane %d%s", v, id, lane, next)
}

// operationValidateRequest is the parent's own scope for a handoff
// (switchyard operation validate): engine.OperationScope.
type operationValidateRequest struct {
	ExpectedHead string   `json:"expectedHead"`
	Files        []string `json:"files,omitempty"`
	Checks       []string `json:"checks,omitempty"`
}

// apiOperationValidate validates the lane's handoff against its worktree
// on the server and records the validated digest: 200 with the
// validation, 422 refused with the reason.
func (s *Server) apiOperationValidate(w http.ResponseWriter, r *http.Request) {
	var body operationValidateRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	if strings.TrimSpace(body.ExpectedHead) == "" {
		s.failField(w, http.StatusBadRequest, "expectedHead", "expectedHead is required: the full commit id the worker was given")
		return
	}
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	v, err := s.o.Engine.OperationValidate(r.Context(), id, lane, engine.OperationScope{ExpectedHead: body.ExpectedHead, Files: body.Files, Checks: body.Checks})
	if err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// operationBeginRequest reserves the validated operation (switchyard
// operation begin).
type operationBeginRequest struct {
	Digest string `json:"digest"`
	// Wait is how long to wait for the engine to record the begin (a Go
	// duration, default 30s, at most 2m).
	Wait string `json:"wait,omitempty"`
}

// apiOperationBegin records the operation as begun and answers 200 with
// the pending step once the engine recorded it; only then may the caller
// perform the operation.
func (s *Server) apiOperationBegin(w http.ResponseWriter, r *http.Request) {
	var body operationBeginRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	if strings.TrimSpace(body.Digest) == "" {
		s.failField(w, http.StatusBadRequest, "digest", "digest is required: the digest operation validate answered")
		return
	}
	wait, ferr := duration("wait", body.Wait)
	switch {
	case ferr != nil:
		s.failField(w, http.StatusBadRequest, ferr.field, "%s", ferr.msg)
		return
	case wait < 0 || wait > maxBeginWait:
		s.failField(w, http.StatusBadRequest, "wait", "wait %s: want at most %s", body.Wait, maxBeginWait)
		return
	case body.Wait == "":
		wait = 30 * time.Second
	}
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	step, err := s.o.Engine.OperationBegin(r.Context(), id, lane, body.Digest, wait)
	if err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	writeJSON(w, http.StatusOK, step)
}

// operationDoneRequest settles the pending operation (switchyard
// operation done).
type operationDoneRequest struct {
	Result string `json:"result"`
	Ref    string `json:"ref,omitempty"`
	Detail string `json:"detail,omitempty"`
}

func (s *Server) apiOperationDone(w http.ResponseWriter, r *http.Request) {
	var body operationDoneRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	res, rejected := events.OperationResult(body.Result), false
	switch body.Result {
	case string(events.OperationSucceeded), string(events.OperationFailed):
	case "rejected":
		res, rejected = events.OperationFailed, true
	default:
		s.failField(w, http.StatusBadRequest, "result", "result %q: want succeeded, failed or rejected", body.Result)
		return
	}
	s.settle(w, r, res, rejected, body.Ref, body.Detail)
}

// operationRejectRequest settles the pending operation as rejected
// (switchyard operation reject).
type operationRejectRequest struct {
	Detail string `json:"detail,omitempty"`
}

func (s *Server) apiOperationReject(w http.ResponseWriter, r *http.Request) {
	var body operationRejectRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	s.settle(w, r, events.OperationFailed, true, "", body.Detail)
}

func (s *Server) settle(w http.ResponseWriter, r *http.Request, res events.OperationResult, rejected bool, ref, detail string) {
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	if err := s.o.Engine.OperationSettle(r.Context(), id, lane, res, rejected, ref, detail); err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	what := string(res)
	if rejected {
		what = "rejected"
	}
	accepted(w, id, &lane, "operation %s recorded for run %s lane %d", what, id, lane)
}

// recoverRequest is the parent's answer to an interrupted execution
// (switchyard recover): engine.RecoverInput.
type recoverRequest struct {
	Clear             *bool  `json:"clear"`
	EvidenceRef       string `json:"evidenceRef"`
	Correction        string `json:"correction,omitempty"`
	BlockageID        string `json:"blockageId,omitempty"`
	SnapshotRef       string `json:"snapshotRef,omitempty"`
	SnapshotDigest    string `json:"snapshotDigest,omitempty"`
	PartialWorkRef    string `json:"partialWorkRef,omitempty"`
	SideEffectsRef    string `json:"sideEffectsRef,omitempty"`
	StoppedWritersRef string `json:"stoppedWritersRef,omitempty"`
}

func (s *Server) apiRecover(w http.ResponseWriter, r *http.Request) {
	var body recoverRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	if body.Clear == nil {
		s.failField(w, http.StatusBadRequest, "clear", "clear is required: true continues with the recovery, false declines and stops the lane")
		return
	}
	if strings.TrimSpace(body.EvidenceRef) == "" {
		s.failField(w, http.StatusBadRequest, "evidenceRef", "evidenceRef is required: what you inspected")
		return
	}
	in := engine.RecoverInput{Clear: *body.Clear, EvidenceRef: body.EvidenceRef, Correction: body.Correction, BlockageID: body.BlockageID,
		SnapshotRef: body.SnapshotRef, SnapshotDigest: body.SnapshotDigest, PartialWorkRef: body.PartialWorkRef,
		SideEffectsRef: body.SideEffectsRef, StoppedWritersRef: body.StoppedWritersRef}
	if !in.Clear {
		for _, f := range []struct{ name, v string }{{"correction", in.Correction}, {"blockageId", in.BlockageID}, {"snapshotRef", in.SnapshotRef},
			{"snapshotDigest", in.SnapshotDigest}, {"partialWorkRef", in.PartialWorkRef}, {"sideEffectsRef", in.SideEffectsRef}, {"stoppedWritersRef", in.StoppedWritersRef}} {
			if f.v != "" {
				s.failField(w, http.StatusBadRequest, f.name, "%s describes a continuation; a decline (clear false) takes only evidenceRef", f.name)
				return
			}
		}
	}
	id, lane, ok := s.runLane(w, r)
	if !ok {
		return
	}
	if err := s.o.Engine.Recover(r.Context(), id, lane, in); err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	if in.Clear {
		accepted(w, id, &lane, "continuation requested for run %s lane %d", id, lane)
		return
	}
	accepted(w, id, &lane, "continuation declined for run %s lane %d", id, lane)
}

// nativeReportRequest is the parent's host terminal metadata for a native
// execution (switchyard native report).
type nativeReportRequest struct {
	Status         string `json:"status"`
	ProcessStarted *bool  `json:"processStarted,omitempty"`
	EvidenceRef    string `json:"evidenceRef,omitempty"`
}

// apiNativeReport records the end of a native execution.
func (s *Server) apiNativeReport(w http.ResponseWriter, r *http.Request) {
	var body nativeReportRequest
	if !s.decodeBody(w, r, maxAnswerBytes, &body) {
		return
	}
	exec := r.PathValue("execution")
	if err := events.ValidateExecutionID(exec); err != nil {
		s.failField(w, http.StatusBadRequest, "execution", "%s", invalidReason(err))
		return
	}
	status := policy.Outcome(body.Status)
	if !status.Valid() {
		s.failField(w, http.StatusBadRequest, "status", "status %q is not a policy outcome", body.Status)
		return
	}
	if err := s.o.Engine.NativeReport(r.Context(), exec, status, body.ProcessStarted, body.EvidenceRef); err != nil {
		s.failEngine(w, err, "execution "+exec)
		return
	}
	writeJSON(w, http.StatusAccepted, controlResult{Message: fmt.Sprintf("native execution %s reported %s", exec, status)})
}

// noRoute answers a path under /api/ that no route takes: 405 with Allow
// when the path takes other methods, else 404, both as JSON errors.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, http.StatusMethodNotAllowed, "%s %s: this endpoint takes %s", r.Method, r.URL.Path, strings.Join(allow, " or "))
		return
	}
	s.fail(w, http.StatusNotFound, "no API endpoint %s %s; the API is under /api/v1 (see /api/v1/openapi.json and docs/API.md)", r.Method, r.URL.Path)
}
