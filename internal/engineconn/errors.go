package engineconn

import (
	"errors"
	"fmt"
)

// Error is a connection failure whose message names the bad input and the
// fix. Usage marks bad input (an option, a data directory given that
// holds no store), Interrupted a wait the context ended; the command
// line turns them into its exit codes. Class, when set, is one of the
// sentinels below, for callers that branch on the kind of failure (the
// client package's typed errors).
type Error struct {
	Usage       bool
	Interrupted bool
	Class       error
	msg         string
	// credentialsGone: the holder's credentials file is missing.
	credentialsGone bool
}

func (e *Error) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrDenied) and the like work.
func (e *Error) Unwrap() error { return e.Class }

// The classes of connection failures.
var (
	// ErrDenied: the server refused the login, or the data directory
	// cannot be read by this user.
	ErrDenied = errors.New("permission denied")
	// ErrUnavailable: nothing serves the data directory, or the servers
	// cannot be reached.
	ErrUnavailable = errors.New("unavailable")
	// ErrNoData: the data directory holds no store.
	ErrNoData = errors.New("no switchyard data")
)

func usagef(format string, a ...any) error {
	return &Error{Usage: true, msg: fmt.Sprintf(format, a...)}
}

func failf(format string, a ...any) error {
	return &Error{msg: fmt.Sprintf(format, a...)}
}

func deniedf(format string, a ...any) error {
	return &Error{Class: ErrDenied, msg: fmt.Sprintf(format, a...)}
}

func unavailablef(format string, a ...any) error {
	return &Error{Class: ErrUnavailable, msg: fmt.Sprintf(format, a...)}
}

func noDataf(format string, a ...any) error {
	return &Error{Class: ErrNoData, msg: fmt.Sprintf(format, a...)}
}

func noDataUsagef(format string, a ...any) error {
	return &Error{Usage: true, Class: ErrNoData, msg: fmt.Sprintf(format, a...)}
}
