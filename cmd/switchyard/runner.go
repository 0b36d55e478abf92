package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities"
)

// newRunnerCmd builds `switchyard runner` and `switchyard runner status`.
// Flag parsing is left to the activities package so the command line is
// exactly the runner contract's (RUNNER.md section 1): cobra only routes.
func newRunnerCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "runner --parent P --provider P --model M --effort E --mode M --prompt F --cwd D --output F --receipt F [options]",
		Short:              "Launch one provider CLI attempt and write its schema 2 receipt",
		Long:               activities.RunnerUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runnerExit(runRunner(cmd.Context(), stdout, stderr, func(r *activities.Runner, ctx context.Context) int {
				return r.Run(ctx, args)
			}))
		},
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, activities.RunnerUsage) })
	status := &cobra.Command{
		Use:                "status --progress F --receipt F [--progress F --receipt F ...] [--json]",
		Short:              "Show runner lanes from their progress snapshots and receipts",
		Long:               activities.StatusUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runnerExit(runRunner(cmd.Context(), stdout, stderr, func(r *activities.Runner, _ context.Context) int {
				return r.Status(args)
			}))
		},
	}
	status.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, activities.StatusUsage) })
	cmd.AddCommand(status)
	return cmd
}

// runRunner builds a Runner writing to stdout and stderr and calls do.
// SIGINT and SIGTERM reach the runner on its own channel (so it knows
// which signal to forward to the child); the command context's own
// cancellation is detached because main cancels it on those same signals.
func runRunner(ctx context.Context, stdout, stderr io.Writer, do func(*activities.Runner, context.Context) int) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if ctx == nil {
		ctx = context.Background()
	}
	r, err := activities.New(activities.Config{Stdout: stdout, Stderr: stderr, Signals: sigs})
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return exitGeneric
	}
	return do(r, context.WithoutCancel(ctx))
}

// runnerExit maps the runner's exit code to run's error convention: the
// runner has already written everything it had to say.
func runnerExit(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}
