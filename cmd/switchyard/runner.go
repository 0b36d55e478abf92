package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities/runner"
)

// newRunnerCmd builds `switchyard runner` and `switchyard runner status`.
// Flag parsing is left to the runner package so the command line is
// exactly the runner contract's (RUNNER.md section 1): cobra only routes.
func newRunnerCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "runner --parent P --provider P --model M --effort E --mode M --prompt F --cwd D --output F --receipt F [options]",
		Short:              "Launch one provider CLI attempt and write its schema 2 receipt",
		Long:               runner.RunnerUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runnerExit(runRunner(cmd.Context(), stdout, stderr, func(r *runner.Runner, ctx context.Context) int {
				return r.Main(ctx, args)
			}))
		},
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, runner.RunnerUsage) })
	status := &cobra.Command{
		Use:                "status --progress F --receipt F [--progress F --receipt F ...] [--json]",
		Short:              "Show runner lanes from their progress snapshots and receipts",
		Long:               runnerStatusUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" }) {
				// The runner's parser treats -h anywhere as help; this help
				// adds the exit codes.
				_, err := io.WriteString(stdout, runnerStatusUsage)
				return err
			}
			return runnerExit(runRunner(cmd.Context(), stdout, stderr, func(r *runner.Runner, _ context.Context) int {
				return r.Status(args)
			}))
		},
	}
	status.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, runnerStatusUsage) })
	cmd.AddCommand(status)
	return cmd
}

// runnerStatusUsage is runner status's help: the runner's own, and its exit
// codes.
const runnerStatusUsage = runner.StatusUsage + `
Exit codes: 0 the lanes were printed (whatever state they are in); 64 usage
error (no --progress, unpaired --progress and --receipt, an unknown option).
`

// runRunner builds a Runner writing to stdout and stderr and calls do.
// SIGINT or SIGTERM to this process cancels do's context with a
// runner.Signalled cause (so the runner forwards that signal to the
// child); the command context's own cancellation is detached because main
// cancels it on those same signals.
func runRunner(ctx context.Context, stdout, stderr io.Writer, do func(*runner.Runner, context.Context) int) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if ctx == nil {
		ctx = context.Background()
	}
	r, err := runner.New(runner.Config{Stdout: stdout, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return exitGeneric
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case s := <-sigs:
			cancel(runner.Signalled{Signal: s})
		case <-stop:
		}
	}()
	return do(r, rctx)
}

// runnerExit maps the runner's exit code to run's error convention: the
// runner has already written everything it had to say.
func runnerExit(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}
