package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// newInspectCmd builds `switchyard inspect`: the parent's verdict on a
// started writer.
func newInspectCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, state, evidence string
	var lane int
	c := &cobra.Command{
		Use:   "inspect --run R --lane N --state clear|unsafe --evidence REF",
		Short: "Record the parent's verdict on a started writer lane",
		Long: `A writer lane (--mode isolated-write) whose attempt started and did not
complete waits in "inspecting" until the parent reviews what the attempt left
behind (partial files, side effects) and records a verdict:

  clear   the partial work is safe; the lane may go on to its next decision
  unsafe  it is not; the lane stops

--evidence points at the parent's inspection record (a file, a commit, a
note id); it is stored with the verdict. The engine applies the verdict and
the lane moves on; switchyard run prints this command when a lane waits.`,
		Example: `  switchyard inspect --run 7f3c2a --lane 0 --state clear --evidence notes/inspect-lane0.md
  switchyard inspect --run 7f3c2a --lane 1 --state unsafe --evidence "review:touched .git/config"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run", "lane", "state", "evidence"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := checkRunLane(run, lane, false); err != nil {
				return err
			}
			v := events.VerdictState(state)
			if v != events.VerdictClear && v != events.VerdictUnsafe {
				return usagef("--state %q: want clear or unsafe", state)
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if err := checkLaneOf(ctx, conn, f, run, lane); err != nil {
					return err
				}
				if err := eng.Verdict(ctx, run, lane, v, evidence); err != nil {
					return engineError(err, run, lane, f, conn)
				}
				fmt.Fprintf(stdout, "verdict %s recorded for run %s lane %d%s\n", v, run, lane, pendingNote(conn, f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().IntVar(&lane, "lane", 0, "the zero-based lane index")
	c.Flags().StringVar(&state, "state", "", "the verdict: clear or unsafe")
	c.Flags().StringVar(&evidence, "evidence", "", "reference to the parent's inspection record")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}
