package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// pruneOutput is prune's JSON.
type pruneOutput struct {
	DryRun bool                 `json:"dryRun"`
	Pruned []engine.PruneResult `json:"pruned"`
	// Unfinished counts the runs left alone because they are not final.
	Unfinished int   `json:"unfinished"`
	Bytes      int64 `json:"bytes"`
}

// newPruneCmd builds `switchyard prune`.
func newPruneCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, olderThan string
	var dryRun, force, asJSON bool
	c := &cobra.Command{
		Use:   "prune [--run ID] [--older-than D] [--dry-run] [--force] [--json]",
		Short: "Remove final runs' worktrees and attempt files",
		Long: `Remove what final runs keep in the data directory: each writer attempt's git
worktree (git worktree remove --force, then git worktree prune in the run's
checkout) and the attempt files under runs/<run>/ (prompt copies, outputs,
receipts, progress snapshots). The event log stays, so status, report,
history and replay keep working (the report then names no output).

A run that is not final is never touched, and nothing outside the data
directory's runs/<run> and worktrees/<run> is removed: never your checkout.

Without --run it prunes every final run; --older-than keeps runs whose last
change is more recent than the given age (90m, 36h, 7d). --dry-run lists
what would go and removes nothing. Take a writer's result out of its
worktree before pruning (see docs/OPERATIONS.md, "prune").

A worktree that holds a commit a lane handed off (operation done
--result succeeded) is kept while no branch or tag of the run's checkout
holds that commit: it is the only copy. prune says so and names the
commit; keep it with git -C CHECKOUT branch NAME COMMIT (or merge it) and
prune again, or pass --force to remove it anyway.

Exit codes: 0 done (or nothing to do); 64 usage error or no such run; 1 the
run is not final, or a removal failed.`,
		Example: `  # What would go, for runs untouched for a week:
  switchyard prune --older-than 7d --dry-run

  # One run's files:
  switchyard prune --run 7f3c2a`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			if cmd.Flags().Changed("run") {
				if err := checkRunLane(run, 0, true); err != nil {
					return err
				}
			}
			var age time.Duration
			if olderThan != "" {
				var err error
				if age, err = parseAge(olderThan); err != nil {
					return err
				}
			}
			return withEngine(cmd.Context(), stderr, f, func(ctx context.Context, conn *engineConn, eng engineAPI) error {
				if run != "" {
					var err error
					if run, err = resolveRunID(ctx, conn, f, run); err != nil {
						return err
					}
				}
				out, err := prune(ctx, eng, run, age, engine.PruneOptions{DryRun: dryRun, Force: force})
				if err != nil {
					return engineError(err, run, events.RunLane, f, conn)
				}
				if asJSON {
					return writeDoc(stdout, out)
				}
				printPrune(stdout, out)
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "prune this run only (its id or a unique prefix; it must be final)")
	c.Flags().StringVar(&olderThan, "older-than", "", "prune only runs whose last change is older than this (90m, 36h, 7d)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed; remove nothing")
	c.Flags().BoolVar(&force, "force", false, "also remove worktrees holding an unmerged handed-off commit (that commit is lost)")
	c.Flags().BoolVar(&asJSON, "json", false, "print what was removed as JSON")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// parseAge parses --older-than: a Go duration, or a whole number of days
// ("7d").
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		days, err = strconv.Atoi(n)
		d = time.Duration(days) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, usagef("--older-than %q: want a positive age such as 90m, 36h or 7d", s)
	}
	return d, nil
}

// prune prunes run, or every final run older than age (0: any age).
func prune(ctx context.Context, eng engineAPI, run string, age time.Duration, opt engine.PruneOptions) (pruneOutput, error) {
	out := pruneOutput{DryRun: opt.DryRun, Pruned: []engine.PruneResult{}}
	var runs []engine.RunStatus
	if run != "" {
		st, err := eng.Status(ctx, run)
		if err != nil {
			return out, err
		}
		if !st.Final {
			return out, failf("run %s is not final (%s); prune never touches a live run's files (cancel it first: switchyard cancel --run %s)", run, runState(st), run)
		}
		runs = []engine.RunStatus{st}
	} else {
		var err error
		if runs, err = eng.Runs(ctx); err != nil {
			return out, err
		}
	}
	cutoff := time.Now().Add(-age)
	var errs []error
	for _, st := range runs {
		if !st.Final {
			out.Unfinished++
			continue
		}
		if age > 0 && st.Updated.After(cutoff) {
			continue
		}
		res, err := eng.Prune(ctx, st.Run, opt)
		if errors.Is(err, engine.ErrNotFinal) {
			out.Unfinished++
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
		if len(res.Worktrees) > 0 || res.Files != "" || len(res.Kept) > 0 {
			out.Pruned = append(out.Pruned, res)
			out.Bytes += res.Bytes
		}
	}
	if len(errs) > 0 {
		return out, failf("%v", errors.Join(errs...))
	}
	return out, nil
}

// printPrune prints what prune removed (or would).
func printPrune(w io.Writer, out pruneOutput) {
	verb := "removed"
	if out.DryRun {
		verb = "would remove"
	}
	for _, r := range out.Pruned {
		fmt.Fprintf(w, "run %s: %s %d worktree(s)", r.Run, verb, len(r.Worktrees))
		if r.Files != "" {
			fmt.Fprintf(w, " and its attempt files (%s)", r.Files)
		}
		fmt.Fprintf(w, ", %s\n", humanBytes(r.Bytes))
		for _, t := range r.Worktrees {
			fmt.Fprintf(w, "  worktree %s\n", t)
		}
		for _, k := range r.Kept {
			fmt.Fprintf(w, "  kept worktree %s: %s; keep it with git -C %s branch NAME %s (or merge it) and prune again, or pass --force to remove it\n",
				k.Worktree, k.Why, k.Handoff.Checkout, k.Handoff.Commit)
		}
	}
	switch {
	case len(out.Pruned) == 0:
		fmt.Fprint(w, "nothing to prune")
	case out.DryRun:
		fmt.Fprintf(w, "%d run(s) would be pruned, %s; nothing was removed (drop --dry-run)", len(out.Pruned), humanBytes(out.Bytes))
	default:
		fmt.Fprintf(w, "%d run(s) pruned, %s freed", len(out.Pruned), humanBytes(out.Bytes))
	}
	if out.Unfinished > 0 {
		fmt.Fprintf(w, "; %d unfinished run(s) left alone", out.Unfinished)
	}
	fmt.Fprintln(w)
}

// humanBytes renders n bytes for people.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
