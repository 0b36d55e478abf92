package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// exitUndelivered is run's exit code under --fail-if-undelivered when the
// run ended with no complete lane.
const exitUndelivered = 3

// newReportCmd builds `switchyard report`.
func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run string
	var asJSON bool
	c := &cobra.Command{
		Use:   "report --run ID [--json]",
		Short: "Print a run's report again",
		Long: `Print the report "switchyard run" prints when a run is final, for any run in
the store, at any time (a run in progress gets its report so far): per lane
the configured primary, the descriptor that delivered or why the lane
stopped, and every attempt with its cause, how long it ran, the token usage
its receipt reports and its output file (named only when the attempt wrote
one); then the provider diversity the run achieved.

--json prints the same report as one JSON object (the object run --json
prints): "output" is present only for attempts that wrote output,
"durationMs" and "usage" only when known.

Exit codes: 0 the report was printed; 64 usage error or no such run; 1
anything else.`,
		Example: `  switchyard report --run 7f3c2a
  switchyard report --run 7f3c2a --json | jq '.lanes[].attempts[].output'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := checkRunLane(run, 0, true); err != nil {
				return err
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				rep, err := eng.Report(ctx, run)
				if err != nil {
					return engineError(err, run, events.RunLane, f, conn)
				}
				return printReport(stdout, rep, asJSON)
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id (or a unique prefix)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// printReport prints a run report as text or JSON: what run prints at the
// end and what report prints any time.
func printReport(w io.Writer, rep engine.RunReport, asJSON bool) error {
	if asJSON {
		return writeDoc(w, rep)
	}
	_, err := fmt.Fprint(w, ensureNewline(rep.Text()))
	return err
}

// undelivered reports a final run in which no lane delivered.
func undelivered(rep engine.RunReport) bool {
	return rep.Diversity.Complete == 0
}
