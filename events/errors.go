package events

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// Sentinels. Every error the seams return that a caller may act on wraps
// exactly one of these; match with errors.Is. Third-party errors (JetStream
// API codes, KV errors) are translated at the seam and never leak as the only
// identity of an error.
var (
	// ErrConflict: an append's expected last sequence did not match the
	// subject's actual last sequence (JetStream codes 10071 and 10164). The
	// caller reloads the lane and decides again. The error is a
	// *ConflictError.
	ErrConflict = errors.New("events: conflict: wrong last sequence")

	// ErrNotFound: no such event (Last on an empty subject) or no such claim
	// (Inspect of an unclaimed execution).
	ErrNotFound = errors.New("events: not found")

	// ErrClaimed: Claim found the execution already claimed (held, released
	// or abandoned). Inspect tells which.
	ErrClaimed = errors.New("events: execution already claimed")

	// ErrLeaseLost: Renew, Release or Abandon found that the claim's revision
	// moved since the caller's Lease was read: someone else renewed, released
	// or abandoned it. The caller must stop acting on the lease.
	ErrLeaseLost = errors.New("events: lease lost")

	// ErrTooLarge: an event, job or report exceeds its size limit. The error
	// is a *LimitError naming the limit.
	ErrTooLarge = errors.New("events: too large")

	// ErrInvalid: bytes or values that are not a valid envelope, payload, job,
	// report or claim record: strict-decoding failures (unknown type or key,
	// duplicate key, trailing data, wrong JSON type) and validation failures
	// (missing field, bad id, wrong scope). Decoding errors are *DecodeError.
	ErrInvalid = errors.New("events: invalid")

	// ErrPermissionDenied: the server refused the connection's role the
	// subject (a worker publishing a control, a reader a report). The
	// command connected with a role that cannot do this.
	ErrPermissionDenied = errors.New("events: permission denied")

	// ErrSchemaVersion: a record carries a schema version this build does not
	// read. It is also ErrInvalid.
	ErrSchemaVersion = errors.New("events: unsupported schema version")
)

// ConflictError is an append that lost optimistic concurrency on Subject.
type ConflictError struct {
	Subject  string
	Expected uint64 // the caller's expected last sequence.
	Actual   uint64 // the subject's last sequence when known, else 0.
}

func (e *ConflictError) Error() string {
	if e.Actual == 0 {
		return fmt.Sprintf("append %s: expected last sequence %d: %v", e.Subject, e.Expected, ErrConflict)
	}
	return fmt.Sprintf("append %s: expected last sequence %d, actual %d: %v", e.Subject, e.Expected, e.Actual, ErrConflict)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// LimitError is a record over a size limit. Limit names the constant.
type LimitError struct {
	What  string // "event", "job", "report".
	Size  int    // bytes.
	Max   int    // bytes.
	Limit string // the constant that sets Max, e.g. "MaxEventBytes".
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit (events.%s)", e.What, e.Size, e.Max, e.Limit)
}

// Unwrap returns ErrTooLarge.
func (e *LimitError) Unwrap() error { return ErrTooLarge }

// DecodeError is a record that failed strict decoding or validation. It
// matches ErrInvalid, and whatever Err wraps (ErrSchemaVersion, ErrTooLarge).
type DecodeError struct {
	What string // "envelope", "payload launch", "job", "report", "claim".
	Err  error
}

func (e *DecodeError) Error() string { return fmt.Sprintf("decode %s: %v", e.What, e.Err) }

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is makes every DecodeError match ErrInvalid.
func (e *DecodeError) Is(target error) bool { return target == ErrInvalid }

// invalidf builds a validation error that matches ErrInvalid.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// IsPermissionDenied reports whether err is a server's refusal of a subject
// to the connection's role.
func IsPermissionDenied(err error) bool { return errors.Is(err, ErrPermissionDenied) }

// permissionDenied reports whether nc's last error is the server's refusal
// to let it publish to subject: the server answers a denied publish with
// an error to the connection, not to the request, which would otherwise
// only time out.
func permissionDenied(nc *nats.Conn, subject string) bool {
	err := nc.LastError()
	return err != nil && errors.Is(err, nats.ErrPermissionViolation) &&
		strings.Contains(err.Error(), `Publish to "`+subject+`"`)
}

// deniedError is the error of a publish to subject the server refused. A
// request a role sends through the engine's API proxy names the subject it
// was for, not the proxy's (sy.jsapi.<inbox>.<subject>).
func deniedError(subject string) error {
	if rest, ok := strings.CutPrefix(subject, APIProxyPrefix); ok {
		if _, target, ok := strings.Cut(rest, "."); ok && target != "" {
			subject = target
		}
	}
	return fmt.Errorf("publish to %s: %w: this connection's role may not publish there", subject, ErrPermissionDenied)
}
