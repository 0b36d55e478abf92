package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// newInspectCmd builds `switchyard inspect`: the parent's verdict on a
// started writer.
func newInspectCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, state, evidence, from string
	var lane int
	c := &cobra.Command{
		Use:   "inspect --run R --lane N --state clear|unsafe --evidence REF [--from COMMIT|REF]",
		Short: "Record the parent's verdict on a started writer lane",
		Long: `A writer lane (--mode isolated-write) whose attempt started and did not
complete waits in "inspecting" until the parent reviews what the attempt left
behind (partial files, side effects) and records a verdict:

  clear   the partial work is safe; the lane may go on to its next decision
  unsafe  it is not; the lane stops

--evidence points at the parent's inspection record (a file, a commit, a
note id); it is stored with the verdict. The engine applies the verdict and
the lane moves on; switchyard run prints this command when a lane waits.

--from (clear only) names the reviewed state the lane's next writer starts
from: a commit or snapshot ref of the run's repository (--cwd). It must
resolve there (git rev-parse --verify <ref>^{commit}); the verdict records
the commit it resolved to, so moving the ref later changes nothing. Without
--from the next writer starts from the checkout's HEAD, and the run report
says so ("the clear verdict named no reviewed state").

inspect then says what the lane does next: the next writer (its attempt
and where it starts) only when the lane launches one; for a writer that
handed off an operation, that the operation follows and its first
command; otherwise that the lane stops, and why.

Exit codes: 0 the verdict was recorded; 64 usage error (a --state other than
clear or unsafe, --from with unsafe, a --from that does not resolve, no such
run or lane); 1 anything else (the lane does not wait for a verdict, the run
is final, the store cannot be reached).`,
		Example: `  # The partial work is safe; the fallback writer starts from the snapshot you reviewed:
  switchyard inspect --run 7f3c2a --lane 0 --state clear --evidence notes/inspect-lane0.md \
    --from refs/snapshots/lane0
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
			if cmd.Flags().Changed("from") && v != events.VerdictClear {
				return usagef("--from %q goes with --state clear only: an unsafe verdict stops the lane, so no writer starts from it", from)
			}
			if cmd.Flags().Changed("from") && strings.TrimSpace(from) == "" {
				return usagef("--from is empty; name the reviewed commit or snapshot ref, or leave --from out to start from the checkout's HEAD")
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if err := checkLaneOf(ctx, conn, f, run, lane); err != nil {
					return err
				}
				next, err := eng.RecordVerdict(ctx, run, lane, v, evidence, from)
				if err != nil {
					return engineError(err, run, lane, f, conn)
				}
				if next != "" {
					// Only a lane that launches a writer next names where it
					// starts; the commands it names carry the connection.
					next = "; " + noticeWithConn(next, conn.connFlags(f))
				}
				fmt.Fprintf(stdout, "verdict %s recorded for run %s lane %d%s%s\n", v, run, lane, next, pendingNote(conn, f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().IntVar(&lane, "lane", 0, "the zero-based lane index")
	c.Flags().StringVar(&state, "state", "", "the verdict: clear or unsafe")
	c.Flags().StringVar(&evidence, "evidence", "", "reference to the parent's inspection record")
	c.Flags().StringVar(&from, "from", "", "with clear: the reviewed commit or snapshot ref the next writer starts from (default the checkout's HEAD)")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}
