package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
)

// clearFlags are the options recover --clear needs: the recovery.
var clearFlags = []string{"correction", "blockage-id", "snapshot-ref", "snapshot-digest", "partial-work-ref", "side-effects-ref", "stopped-writers-ref"}

// newRecoverCmd builds `switchyard recover`.
func newRecoverCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run string
	var lane int
	var clear, decline bool
	var in engine.RecoverInput
	c := &cobra.Command{
		Use:   "recover --run R --lane N --evidence REF (--clear --correction TEXT --blockage-id ID --snapshot-ref REF --snapshot-digest SHA256 --partial-work-ref REF --side-effects-ref REF --stopped-writers-ref REF | --decline)",
		Short: "Answer an interrupted lane that may continue on the same route",
		Long: `A lane whose execution was interrupted (a handoff whose operation
succeeded, or a verified permission blockage) may run the same descriptor
again when the sheet's # continuation allows it. Before it does, the parent
inspects what the interrupted execution left and answers here; until then
the lane waits ("recovery" in switchyard status).

--clear continues: name what was corrected, an id for the blockage (a
repeated blockage or correction never continues again), the reviewed
snapshot to continue from (for a writer, a commit of the run's checkout:
the continuation runs in a fresh worktree of it) with its SHA-256, and refs
to the partial work, side effects and stopped writers you checked. The
engine prepares the new execution (its id, output, receipt and workspace)
and policy next decides. --decline stops the lane. --evidence names the
inspection in both cases.

Exit codes: 0 the answer was recorded; 64 usage error (neither or both of
--clear and --decline, a missing recovery option, a malformed
--snapshot-digest, no such run or lane); 1 anything else (the lane does not
wait for recovery, the run is final, the store cannot be reached).`,
		Example: `  switchyard recover --run 7f3c2a --lane 0 --evidence review/lane0.md --clear \
    --correction "checkpoint C-1 committed as 3f9e2c1" --blockage-id handoff-C-1 \
    --snapshot-ref 3f9e2c1 --snapshot-digest 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 \
    --partial-work-ref review/partial.md --side-effects-ref review/effects.md --stopped-writers-ref review/stopped.md
  switchyard recover --run 7f3c2a --lane 0 --evidence review/lane0.md --decline`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			required := []string{"run", "lane", "evidence"}
			if clear && !decline {
				required = append(required, clearFlags...)
			}
			if err := requireFlags(cmd, required...); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := checkRunLane(run, lane, false); err != nil {
				return err
			}
			if clear == decline {
				return usagef("give exactly one of --clear (continue, with the recovery) or --decline (stop the lane)")
			}
			if decline {
				for _, name := range clearFlags {
					if cmd.Flags().Changed(name) {
						return usagef("--%s describes a continuation; --decline takes only --evidence", name)
					}
				}
			}
			in.Clear = clear
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if err := checkLaneOf(ctx, conn, f, run, lane); err != nil {
					return err
				}
				if err := eng.Recover(ctx, run, lane, in); err != nil {
					return engineError(err, run, lane, f, conn)
				}
				what := "continuation requested"
				if decline {
					what = "continuation declined"
				}
				fmt.Fprintf(stdout, "%s for run %s lane %d%s\n", what, run, lane, pendingNote(conn, f))
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&run, "run", "", "the run id")
	fl.IntVar(&lane, "lane", 0, "the zero-based lane index")
	fl.StringVar(&in.EvidenceRef, "evidence", "", "what you inspected (partial work, tool effects, the interruption)")
	fl.BoolVar(&clear, "clear", false, "continue on the same route with the recovery below")
	fl.BoolVar(&decline, "decline", false, "do not continue: the lane stops")
	fl.StringVar(&in.Correction, "correction", "", "the concrete correction of what interrupted the execution")
	fl.StringVar(&in.BlockageID, "blockage-id", "", "an id of the interruption (a repeated one never continues again)")
	fl.StringVar(&in.SnapshotRef, "snapshot-ref", "", "the reviewed snapshot to continue from (a commit of the checkout for a writer)")
	fl.StringVar(&in.SnapshotDigest, "snapshot-digest", "", "the snapshot's SHA-256, 64 lowercase hex digits")
	fl.StringVar(&in.PartialWorkRef, "partial-work-ref", "", "ref to the partial work you checked")
	fl.StringVar(&in.SideEffectsRef, "side-effects-ref", "", "ref to the side effects you checked")
	fl.StringVar(&in.StoppedWritersRef, "stopped-writers-ref", "", "ref to the evidence that earlier writers stopped")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}
