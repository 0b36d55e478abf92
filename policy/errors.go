package policy

import (
	"errors"
	"fmt"
	"strings"
)

// UsageError is a caller mistake: a bad flag, an unreadable file, a lane
// state or history that the saved policy does not allow. The CLI maps it to
// exit 64 and prints "error: <msg>" followed by the help text.
type UsageError struct {
	Msg string
}

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// PolicyError is the reference helper's ModelPolicyError: the sheet is
// invalid for the request, or a receipt fails normalization. Issues holds
// one line per problem, each naming the line, key or field at fault. The CLI
// maps it to exit 65 and prints "invalid model sheet:" and the issues.
type PolicyError struct {
	Issues []string
}

func (e *PolicyError) Error() string {
	return "invalid model sheet:\n" + strings.Join(e.Issues, "\n")
}

// Policyf builds a PolicyError with a single issue.
func Policyf(format string, args ...any) error {
	return &PolicyError{Issues: []string{fmt.Sprintf(format, args...)}}
}

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// IsPolicy reports whether err is (or wraps) a PolicyError.
func IsPolicy(err error) bool {
	var p *PolicyError
	return errors.As(err, &p)
}
