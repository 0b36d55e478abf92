package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// The stable error codes of the API (docs/API.md lists them). A client
// branches on the code, never on the message, which is for a person and
// may change.
const (
	codeInvalidInput     = "invalid_input"          // 400: a field, the body or a query parameter is not usable
	codeAmbiguousPrefix  = "ambiguous_prefix"       // 400: a run id prefix that starts more than one run
	codeUnauthorized     = "unauthorized"           // 401: no or a wrong bearer token
	codePermissionDenied = "permission_denied"      // 403: the server or its NATS role may not do this
	codeNotFound         = "not_found"              // 404: no such run, lane, execution, file or endpoint
	codeMethodNotAllowed = "method_not_allowed"     // 405: the path takes other methods (see Allow)
	codeExists           = "exists"                 // 409: the run id is taken by a different request
	codeConflict         = "conflict"               // 409: the lane does not wait for this answer now
	codeFinal            = "final"                  // 409: the lane or run is already final
	codeTooLarge         = "too_large"              // 413: the body is over the route's limit
	codeUnsupportedMedia = "unsupported_media_type" // 415: the body is not application/json
	codeRefused          = "refused"                // 409: the operation ledger refused the step (the CLI's exit 65)
	codeInternal         = "internal"               // 500: a fault of the server
	codeUnavailable      = "unavailable"            // 503: the store or the engine does not answer
	codeInconsistentLog  = "inconsistent_log"       // 500: the run's log does not fold
	codeBeginNotRecorded = "begin_not_recorded"     // 503: an operation begin was sent but not recorded in time
	codeOperationPending = "operation_pending"      // 409: the lane's operation is already begun
)

// errorCodes lists every code above, for the test that holds the OpenAPI
// document and docs/API.md to them.
var errorCodes = []string{codeInvalidInput, codeAmbiguousPrefix, codeUnauthorized, codePermissionDenied, codeNotFound,
	codeMethodNotAllowed, codeExists, codeConflict, codeFinal, codeTooLarge, codeUnsupportedMedia, codeRefused, codeInternal,
	codeUnavailable, codeInconsistentLog, codeBeginNotRecorded, codeOperationPending}

// statusCodes is the code of an error written with only its status.
var statusCodes = map[int]string{
	http.StatusBadRequest:            codeInvalidInput,
	http.StatusUnauthorized:          codeUnauthorized,
	http.StatusForbidden:             codePermissionDenied,
	http.StatusNotFound:              codeNotFound,
	http.StatusMethodNotAllowed:      codeMethodNotAllowed,
	http.StatusConflict:              codeConflict,
	http.StatusRequestEntityTooLarge: codeTooLarge,
	http.StatusUnsupportedMediaType:  codeUnsupportedMedia,
	http.StatusServiceUnavailable:    codeUnavailable,
	http.StatusInternalServerError:   codeInternal,
}

// apiError is the body of every API error:
// {"error":{"code":"not_found","message":"...","field":"lane"}}.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	// Code is one of the stable codes above.
	Code string `json:"code"`
	// Message is one sentence for a person; it names the run once and
	// carries no package prefix.
	Message string `json:"message"`
	// Field names the request field (a JSON key, a path or query
	// parameter) the error is about, when there is one.
	Field string `json:"field,omitempty"`
}

// fail writes a JSON error with status and its default code; the message
// is cleaned by cleanMessage, so wrapping an engine error that already
// names its run does not name it twice.
func (s *Server) fail(w http.ResponseWriter, status int, format string, a ...any) {
	code, ok := statusCodes[status]
	if !ok {
		code = codeInternal
	}
	s.failCode(w, status, code, "", format, a...)
}

// failField is fail with the field the error is about.
func (s *Server) failField(w http.ResponseWriter, status int, field, format string, a ...any) {
	code, ok := statusCodes[status]
	if !ok {
		code = codeInternal
	}
	s.failCode(w, status, code, field, format, a...)
}

// failCode writes a JSON error with an explicit code.
func (s *Server) failCode(w http.ResponseWriter, status int, code, field, format string, a ...any) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard"`)
	}
	writeJSON(w, status, apiError{Error: apiErrorBody{Code: code, Message: cleanMessage(fmt.Sprintf(format, a...)), Field: field}})
}

// failEngine writes an engine error: its status and code from what it
// wraps (engineError), its message prefixed with what (say "run x lane
// 0") unless the message already names it.
func (s *Server) failEngine(w http.ResponseWriter, err error, what string) {
	status, code, field := engineError(err)
	msg := cleanMessage(err.Error())
	if what != "" && !strings.Contains(msg, what) {
		msg = what + ": " + msg
	}
	if status == http.StatusInternalServerError {
		s.o.Logger.Warn("console: API request failed", "what", what, "err", err)
	}
	s.failCode(w, status, code, field, "%s", msg)
}

// engineError maps an engine (or policy, events, contract) error to an
// HTTP status, a stable code and, where it says, the request field.
func engineError(err error) (status int, code, field string) {
	switch {
	case errors.Is(err, engine.ErrUnknownRun), errors.Is(err, engine.ErrUnknownLane), errors.Is(err, engine.ErrUnknownExecution):
		return http.StatusNotFound, codeNotFound, ""
	case errors.Is(err, engine.ErrRunExists), errors.Is(err, events.ErrRunExists):
		return http.StatusConflict, codeExists, "runId"
	case errors.Is(err, engine.ErrFinal):
		return http.StatusConflict, codeFinal, ""
	case errors.Is(err, engine.ErrOperationPending):
		return http.StatusConflict, codeOperationPending, ""
	case errors.Is(err, engine.ErrNotWaiting):
		return http.StatusConflict, codeConflict, ""
	case contract.IsRefusal(err):
		return http.StatusConflict, codeRefused, ""
	case errors.Is(err, engine.ErrBeginNotRecorded):
		return http.StatusServiceUnavailable, codeBeginNotRecorded, ""
	case errors.Is(err, policy.ErrUnconfigured), policy.IsPolicy(err):
		// The sheet and the role together: which is wrong, the
		// message says (a role the sheet lacks reads either way).
		return http.StatusBadRequest, codeInvalidInput, ""
	case errors.Is(err, engine.ErrInvalidRequest), errors.Is(err, events.ErrInvalid), policy.IsUsage(err):
		return http.StatusBadRequest, codeInvalidInput, ""
	case events.IsPermissionDenied(err):
		return http.StatusForbidden, codePermissionDenied, ""
	case errors.Is(err, engine.ErrInconsistentLog):
		return http.StatusInternalServerError, codeInconsistentLog, ""
	case errors.Is(err, events.ErrNoEngine), errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, context.DeadlineExceeded):
		// The store or the engine does not answer now; the same request
		// may succeed later.
		return http.StatusServiceUnavailable, codeUnavailable, ""
	}
	return http.StatusInternalServerError, codeInternal, ""
}

// cleanMessage drops the "engine: " and "events: " package prefixes of
// wrapped errors and a "part: " repeated right after itself ("run x: run
// x: unknown run" reads "run x: unknown run").
func cleanMessage(msg string) string {
	msg = strings.ReplaceAll(msg, "engine: ", "")
	msg = strings.ReplaceAll(msg, "events: ", "")
	parts := strings.Split(msg, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
