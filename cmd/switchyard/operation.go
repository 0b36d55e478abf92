package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// newOperationCmd builds `switchyard operation` and `operation done`.
func newOperationCmd(stdout, stderr io.Writer) *cobra.Command {
	return groupCommand("operation <command>", "Answer a lane's parent-operation handoff",
		`A worker that needs something only the parent may do (commit a checkpoint,
run checks) ends with a handoff; its lane waits in "awaiting-operation" until
the parent performs the operation and reports the result with
"switchyard operation done".`,
		stderr, newOperationDoneCmd(stdout, stderr))
}

// newOperationDoneCmd builds `switchyard operation done`.
func newOperationDoneCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, result, ref string
	var lane int
	c := &cobra.Command{
		Use:   "done --run R --lane N --result succeeded|failed [--ref REF]",
		Short: "Record the result of the parent operation a lane waits for",
		Long: `Record that the parent carried out (succeeded) or could not carry out
(failed) the operation a lane's handoff asked for. --ref points at the
operation's product: a commit, a check log. The lane then continues as its
sheet's continuation policy allows.`,
		Example: `  switchyard operation done --run 7f3c2a --lane 0 --result succeeded --ref 3f9e2c1
  switchyard operation done --run 7f3c2a --lane 0 --result failed --ref logs/checks.txt`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run", "lane", "result"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := checkRunLane(run, lane, false); err != nil {
				return err
			}
			r := events.OperationResult(result)
			if r != events.OperationSucceeded && r != events.OperationFailed {
				return usagef("--result %q: want succeeded or failed", result)
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if err := checkLaneOf(ctx, conn, f, run, lane); err != nil {
					return err
				}
				if err := eng.OperationDone(ctx, run, lane, r, ref); err != nil {
					return engineError(err, run, lane, f, conn)
				}
				fmt.Fprintf(stdout, "operation %s recorded for run %s lane %d%s\n", r, run, lane, pendingNote(conn, f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().IntVar(&lane, "lane", 0, "the zero-based lane index")
	c.Flags().StringVar(&result, "result", "", "how the operation ended: succeeded or failed")
	c.Flags().StringVar(&ref, "ref", "", "reference to the operation's product (commit, check log)")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}
