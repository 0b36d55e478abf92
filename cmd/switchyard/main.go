package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/internal/termsafe"
)

// version is stamped at build time with
// -ldflags "-X main.version=$(git describe --always --dirty)".
var version = "dev"

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitUsage   = 64 // bad flags, unreadable input, state or history errors.
	exitPolicy  = 65 // invalid sheet, missing or ambiguous role, rejected receipt.
	exitGeneric = 1  // an error that no command reported (a bug).
)

// exitError carries an exit code for an error whose message has already been
// written to stderr.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	// A re-exec carrying a sandbox policy applies it and execs the
	// provider CLI; it never returns (activities/sandbox).
	sandbox.Enter()
	ctx, stop := notifySignals(context.Background())
	stopProfile := startCPUProfile(os.Args[1:])
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	stopProfile()
	os.Exit(exitCode(err, termsafe.Writer(os.Stderr)))
}

// run executes the command line args and reports what went wrong as an
// *exitError once the user has been told.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// Every human-readable print goes through these writers, so control
	// characters in provider output, receipts and errors reach the
	// terminal escaped (JSON passes byte for byte: termsafe).
	stdout, stderr = termsafe.Writer(stdout), termsafe.Writer(stderr)
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	// Cobra's own errors (unknown command or flag at the root) are usage
	// errors; cobra is told not to print them, so they are reported here in
	// the same form as the policy commands'.
	fmt.Fprintf(stderr, "error: %s\n\n%s", err, root.UsageString())
	return &exitError{code: exitUsage}
}

// exitCode maps run's result to a process exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "error: %s\n", err)
	return exitGeneric
}
