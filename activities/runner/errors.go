package runner

import (
	"errors"
	"fmt"
)

// ExitUsage is the exit code of a command-line usage error (EX_USAGE): a
// bad or missing flag, an unusable path, a rejected descriptor, or a path
// that cannot be reserved. No receipt is written for it.
const ExitUsage = 64

// ErrHelp is returned by the flag parsers when -h or --help was given.
var ErrHelp = errors.New("help requested")

// UsageError is a command-line mistake found before any path is reserved.
// Flag names the offending flag ("--timeout") or is "" for a positional
// argument or a cross-flag rule.
type UsageError struct {
	Flag string
	Msg  string
}

func (e *UsageError) Error() string { return e.Msg }

// usagef builds a UsageError for flag.
func usagef(flag, format string, args ...any) error {
	return &UsageError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}
