package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/policy"
)

// The kinds of failure a caller may act on. Every error the client returns
// for one of them matches it with errors.Is, and still matches the engine's
// or the events package's own sentinel it came from (engine.ErrUnknownRun,
// events.ErrNoEngine, …), so nothing is lost by the mapping.
var (
	// ErrNotFound: no such run, lane or native execution, or a data
	// directory that holds no Switchyard data.
	ErrNotFound = errors.New("switchyard: not found")
	// ErrExists: Submit was given a run id that names another run (a
	// different request under the same id).
	ErrExists = errors.New("switchyard: run already exists")
	// ErrPermissionDenied: the server refused the login, or the role's
	// permissions do not cover the request, or the data directory cannot
	// be read by this user.
	ErrPermissionDenied = errors.New("switchyard: permission denied")
	// ErrNotFinal: the request needs a final run and the run is not
	// (Report with RequireFinal, Prune).
	ErrNotFinal = errors.New("switchyard: run is not final")
	// ErrFinal: the lane or run is already final, so it takes no input.
	ErrFinal = errors.New("switchyard: final")
	// ErrNotWaiting: the lane does not wait for this input (a verdict for
	// a lane that is not inspecting, …).
	ErrNotWaiting = errors.New("switchyard: lane is not waiting for this input")
	// ErrUnavailable: nothing serves the data directory, the servers
	// cannot be reached, or no engine answered a submission in time.
	ErrUnavailable = errors.New("switchyard: unavailable")
)

// InvalidInputError is a request the client or the engine refused for one
// of its values. Field names the RunRequest or Options field (or the
// argument) at fault: "Sheet", "Role", "Parent", "Prompt", "Checkout",
// "RunID", "Mode", "Contract", "Lane", "State", …
type InvalidInputError struct {
	Field  string
	Reason string
	// Err is the underlying error (a *policy.PolicyError for a sheet or
	// role, engine.ErrInvalidRequest, …), for errors.As and errors.Is.
	Err error
}

func (e *InvalidInputError) Error() string {
	return fmt.Sprintf("switchyard: invalid %s: %s", e.Field, e.Reason)
}

func (e *InvalidInputError) Unwrap() error { return e.Err }

// kindError is an error of one of the kinds above that keeps the original
// error's chain.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }

func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// invalid is an *InvalidInputError for field.
func invalid(field string, err error) error {
	reason := err.Error()
	reason = strings.TrimPrefix(reason, engine.ErrInvalidRequest.Error()+": ")
	return &InvalidInputError{Field: field, Reason: reason, Err: err}
}

// mapError gives err (from the engine, the events or the connection) the
// client's kind. field is the request field an invalid-request error is
// about when the engine does not say ("" to guess from its text).
func mapError(err error, field string) error {
	if err == nil {
		return nil
	}
	var ie *InvalidInputError
	var ke *kindError
	if errors.As(err, &ie) || errors.As(err, &ke) {
		return err
	}
	var ce *engineconn.Error
	kind := func(k error) error { return &kindError{kind: k, err: err} }
	switch {
	case errors.As(err, &ce) && errors.Is(err, engineconn.ErrDenied):
		return kind(ErrPermissionDenied)
	case errors.As(err, &ce) && errors.Is(err, engineconn.ErrUnavailable):
		return kind(ErrUnavailable)
	case errors.As(err, &ce) && errors.Is(err, engineconn.ErrNoData):
		return kind(ErrNotFound)
	case errors.As(err, &ce) && ce.Usage:
		return invalid(cmpField(field, "Options"), err)
	case errors.Is(err, engine.ErrUnknownRun), errors.Is(err, engine.ErrUnknownLane),
		errors.Is(err, engine.ErrUnknownExecution), errors.Is(err, events.ErrNotFound):
		return kind(ErrNotFound)
	case errors.Is(err, engine.ErrRunExists), errors.Is(err, events.ErrRunExists):
		return kind(ErrExists)
	case errors.Is(err, engine.ErrNotFinal):
		return kind(ErrNotFinal)
	case errors.Is(err, engine.ErrFinal):
		return kind(ErrFinal)
	case errors.Is(err, engine.ErrNotWaiting):
		return kind(ErrNotWaiting)
	case errors.Is(err, events.ErrNoEngine), errors.Is(err, nats.ErrNoServers),
		errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrTimeout):
		return kind(ErrUnavailable)
	case errors.Is(err, events.ErrPermissionDenied), errors.Is(err, nats.ErrPermissionViolation), errors.Is(err, nats.ErrAuthorization):
		return kind(ErrPermissionDenied)
	case errors.Is(err, engine.ErrInvalidRequest), policy.IsUsage(err):
		return invalid(cmpField(field, guessField(err)), err)
	case policy.IsPolicy(err):
		return invalid(cmpField(field, "Sheet"), err)
	}
	return err
}

// guessField names the field an engine's invalid-request message is about.
func guessField(err error) string {
	msg := strings.ToLower(err.Error())
	for _, c := range []struct{ word, field string }{
		{"sheet", "Sheet"}, {"prompt", "Prompt"}, {"cwd", "Checkout"}, {"run id", "RunID"},
		{"contract", "Contract"}, {"parent", "Parent"}, {"mode", "Mode"}, {"access", "Mode"},
		{"timeout", "Timeout"}, {"verdict", "State"}, {"evidence", "EvidenceRef"},
	} {
		if strings.Contains(msg, c.word) {
			return c.field
		}
	}
	return "request"
}

func cmpField(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
