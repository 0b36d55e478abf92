package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchyard-dev/switchyard/policy"
)

// This file holds what the engine commands (run, serve, worker, status,
// replay, inspect, cancel, native, operation) share on the command line:
// error reporting with exit codes and the cobra wiring that routes flag and
// argument errors through it.

// cliError is an error whose message names the bad input and the fix, with
// the exit code it maps to.
type cliError struct {
	code int
	msg  string
	// cause, when set, is the error it reports (errors.Is reaches a
	// connection error's class through it).
	cause error
}

func (e *cliError) Error() string { return e.msg }

func (e *cliError) Unwrap() error { return e.cause }

// usagef is a usage error (exit 64): a bad or missing option, an unreadable
// input file.
func usagef(format string, a ...any) error {
	return &cliError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

// failf is an operational failure (exit 1): the store, the server or the
// engine said no.
func failf(format string, a ...any) error {
	return &cliError{code: exitGeneric, msg: fmt.Sprintf(format, a...)}
}

// reportCLIError prints err for the command at path ("switchyard run") and
// returns the *exitError run() expects:
//
//   - a usage error: "error: <msg>" and a pointer to --help, exit 64;
//   - an invalid sheet or role: "invalid model sheet:" and one issue per
//     line, exit 65 (the policy commands' form);
//   - anything else: "error: <msg>", exit 1.
func reportCLIError(stderr io.Writer, path string, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	var pe *policy.PolicyError
	if errors.As(err, &pe) {
		fmt.Fprintf(stderr, "invalid model sheet:\n%s\n", strings.Join(pe.Issues, "\n"))
		return &exitError{code: exitPolicy}
	}
	code := exitGeneric
	var ce *cliError
	switch {
	case errors.As(err, &ce):
		code = ce.code
	case policy.IsUsage(err):
		code = exitUsage
	}
	fmt.Fprintf(stderr, "error: %s\n", err)
	if code == exitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage and examples.\n", path)
	}
	return &exitError{code: code}
}

// wireCommand makes c report its flag, argument and run errors through
// reportCLIError. c takes no positional arguments.
func wireCommand(c *cobra.Command, stderr io.Writer) *cobra.Command {
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return reportCLIError(stderr, cmd.CommandPath(), flagError(err))
	})
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return reportCLIError(stderr, cmd.CommandPath(),
				usagef("unexpected argument %q: every input is an option (for example --run ID)", args[0]))
		}
		return nil
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return reportCLIError(stderr, cmd.CommandPath(), run(cmd, args))
		}
	}
	return c
}

// flagError rewrites pflag's parse errors into the house form: the option,
// its bad value and what it wants. A bad value arrives as pflag's typed
// *InvalidValueError; every other parse error (unknown option, missing
// value) keeps pflag's own words.
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return usagef("%s", err)
	}
	fl := bad.GetFlag()
	want := "a valid value"
	switch fl.Value.Type() {
	case "duration":
		want = "a duration such as 90s, 20m or 1h30m"
	case "int":
		want = "a whole number"
	case "bool":
		want = "true or false"
	}
	return usagef("--%s %q: want %s", fl.Name, bad.GetValue(), want)
}

// groupCommand is a parent command (native, operation) that only routes:
// with no or an unknown subcommand it prints a usage error listing them.
func groupCommand(use, short, long string, stderr io.Writer, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Long: long}
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.Name()
		c.AddCommand(s)
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, " or "))
		}
		return usagef("unknown subcommand %q: expected %s", args[0], strings.Join(names, " or "))
	}
	c.Args = cobra.ArbitraryArgs
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return reportCLIError(stderr, cmd.CommandPath(), run(cmd, args))
	}
	return c
}
