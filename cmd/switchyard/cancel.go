package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// newCancelCmd builds `switchyard cancel`.
func newCancelCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, reason string
	var lane int
	c := &cobra.Command{
		Use:   "cancel --run R [--lane N] [--reason TEXT]",
		Short: "Cancel a lane, or a whole run",
		Long: `Cancel one lane of a run (--lane N) or every non-final lane of it (no
--lane). A cancelled lane is final. If its attempt is running, the worker
signals the provider CLI, which ends with a cancelled receipt; the run
records run-final once each cancelled attempt has reported (or a grace period
passed).

Exit codes: 0 the cancel was requested; 64 usage error (a bad --run or
--lane, no such run or lane); 1 anything else (the run is already final,
the store cannot be reached).`,
		Example: `  # Cancel lane 2 of a run:
  switchyard cancel --run 7f3c2a --lane 2 --reason "superseded"

  # Cancel the whole run:
  switchyard cancel --run 7f3c2a`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			target := events.RunLane
			if cmd.Flags().Changed("lane") {
				target = lane
			}
			if err := checkRunLane(run, max(target, 0), true); err != nil {
				return err
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if target != events.RunLane {
					if err := checkLaneOf(ctx, conn, f, run, target); err != nil {
						return err
					}
				}
				if err := eng.Cancel(ctx, run, target, reason); err != nil {
					return engineError(err, run, target, f, conn)
				}
				what := fmt.Sprintf("run %s", run)
				if target != events.RunLane {
					what = fmt.Sprintf("run %s lane %d", run, target)
				}
				fmt.Fprintf(stdout, "cancel requested for %s%s\n", what, pendingNote(conn, f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().IntVar(&lane, "lane", 0, "the zero-based lane index (default: every lane of the run)")
	c.Flags().StringVar(&reason, "reason", "cancelled by switchyard cancel", "why, recorded with the cancel")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}
