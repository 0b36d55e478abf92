package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// newStatusCmd builds `switchyard status`.
func newStatusCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run string
	var asJSON, watch bool
	c := &cobra.Command{
		Use:   "status [--run ID] [--json] [--watch]",
		Short: "Show runs and their lanes",
		Long: `Without --run, list every run in the store: its role, whether it is final,
and its lanes by state. With --run, show that run's lanes: state, current
attempt, what each waits for, and the command that answers a lane waiting
for the parent.

--watch keeps following: with --run it prints one line per lane change (the
changes already recorded first) until the run is final, then its status;
without --run it prints the run list again whenever any run changes, until
interrupted. With --json, --watch prints one JSON object per line: each lane
change (with --run, then the final status) or each new run list. --watch
follows a "switchyard serve" or a running "switchyard run"; when nothing
serves the data directory nothing can change, so it shows the status once.`,
		Example: `  switchyard status
  switchyard status --run 7f3c2a --json
  switchyard status --run 7f3c2a --watch`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			if cmd.Flags().Changed("run") {
				if err := checkRunLane(run, 0, true); err != nil {
					return err
				}
			}
			show := func(ctx context.Context, conn *engineConn, eng engineAPI) error {
				s := statusPrinter{w: stdout, json: asJSON, conn: conn.connFlags(f)}
				if watch && conn.mode == connEmbedded {
					// This process holds the data directory, so nothing can
					// change it while we watch: show it once instead.
					fmt.Fprintf(stderr, "switchyard status: nothing serves %s, so nothing changes there; --watch follows a `switchyard serve` or a running `switchyard run`\n", conn.dataDir)
					watch = false
				}
				switch {
				case run != "" && watch:
					return s.watchRun(ctx, eng, run, f, conn)
				case run != "":
					st, err := eng.Status(ctx, run)
					if err != nil {
						return engineError(err, run, events.RunLane, f, conn)
					}
					return s.run(st)
				case watch:
					return s.watchRuns(ctx, eng, conn)
				}
				runs, err := eng.Runs(ctx)
				if err != nil {
					return failf("list runs in %s: %v", conn.describe(), err)
				}
				return s.runs(runs, conn)
			}
			err := withEngine(cmd.Context(), stderr, f, show)
			var stopped *holderStoppedError
			if errors.As(err, &stopped) {
				// The serving process (a self-contained run, say) went away
				// while we watched: show how it left the data directory.
				fmt.Fprintf(stderr, "switchyard status: %s stopped; the data directory as it stands:\n", stopped.holder)
				watch = false
				return withEngine(cmd.Context(), stderr, f, show)
			}
			return err
		},
	}
	c.Flags().StringVar(&run, "run", "", "show one run's lanes")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&watch, "watch", false, "keep following changes (Ctrl-C stops)")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}

// statusPrinter renders statuses as text or JSON.
type statusPrinter struct {
	w    io.Writer
	json bool
	conn string
}

// runs prints the run list.
func (s statusPrinter) runs(runs []engine.RunStatus, conn *engineConn) error {
	if s.json {
		if runs == nil {
			runs = []engine.RunStatus{}
		}
		return writeJSON(s.w, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(s.w, "no runs in %s\n", conn.describe())
		return nil
	}
	tw := tabwriter.NewWriter(s.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tROLE\tSTATE\tLANES\tUPDATED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Run, r.Role, runState(r), laneCounts(r.Lanes), r.Updated.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// run prints one run's status.
func (s statusPrinter) run(st engine.RunStatus) error {
	if s.json {
		return writeJSON(s.w, st)
	}
	fmt.Fprintf(s.w, "run %s: role %q, parent %s, %s, %s\n", st.Run, st.Role, st.Parent, st.Access, runState(st))
	if st.Summary != "" {
		fmt.Fprintf(s.w, "  %s\n", st.Summary)
	}
	if len(st.Exhausted) > 0 {
		names := make([]string, len(st.Exhausted))
		for i, p := range st.Exhausted {
			names[i] = string(p)
		}
		fmt.Fprintf(s.w, "  exhausted provider groups: %s\n", strings.Join(names, ", "))
	}
	if len(st.Audits) > 0 {
		var counts []string
		for _, r := range slices.Sorted(maps.Keys(st.Audits)) {
			counts = append(counts, fmt.Sprintf("%d %s", st.Audits[r], r))
		}
		fmt.Fprintf(s.w, "  audited deliveries (changed nothing): %s\n", strings.Join(counts, ", "))
	}
	tw := tabwriter.NewWriter(s.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LANE\tID\tSTATE\tATTEMPT\tWAITING FOR\tOUTCOME")
	var waits []string
	for _, l := range st.Lanes {
		attempt := "-"
		if l.Descriptor != "" {
			attempt = l.Descriptor
			if l.Attempt != nil {
				attempt = fmt.Sprintf("%d: %s", *l.Attempt, l.Descriptor)
			}
		}
		waiting := string(l.WaitingFor)
		if waiting == "" {
			waiting = "-"
		}
		outcome := string(l.Outcome)
		if l.Reason != "" {
			outcome = l.Reason
		}
		if outcome == "" {
			outcome = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", l.Lane, l.LaneID, l.State, attempt, waiting, outcome)
		if cmd := parentCommand(l.WaitingFor, st.Run, l.Lane, st.Parent, s.conn); cmd != "" {
			waits = append(waits, fmt.Sprintf("  lane %d: %s", l.Lane, cmd))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(waits) > 0 {
		fmt.Fprintln(s.w, "waiting for the parent:")
		fmt.Fprintln(s.w, strings.Join(waits, "\n"))
	}
	return nil
}

// watchRun follows one run until it is final.
func (s statusPrinter) watchRun(ctx context.Context, eng engineAPI, run string, f engineFlags, conn *engineConn) error {
	// Fail fast on an unknown run rather than waiting for it to appear.
	st, err := eng.Status(ctx, run)
	if err != nil {
		return engineError(err, run, events.RunLane, f, conn)
	}
	onChange := func(ch engine.LaneChange) {
		if s.json {
			b, _ := json.Marshal(ch)
			fmt.Fprintf(s.w, "%s\n", b)
			return
		}
		fmt.Fprintln(s.w, laneChangeLine(ch))
		if ch.Notice != "" {
			fmt.Fprintf(s.w, "  notice: %s\n", ch.Notice)
		}
	}
	if _, err := eng.Wait(ctx, run, onChange); err != nil {
		if ctx.Err() != nil {
			return nil // interrupted: watching is over
		}
		if conn.mode == connServe && !processAlive(conn.holder.PID) {
			return &holderStoppedError{holder: conn.describe()}
		}
		return engineError(err, run, events.RunLane, f, conn)
	}
	if st, err = eng.Status(ctx, run); err != nil {
		return engineError(err, run, events.RunLane, f, conn)
	}
	if s.json {
		b, _ := json.Marshal(st)
		fmt.Fprintf(s.w, "%s\n", b)
		return nil
	}
	return s.run(st)
}

// watchRuns prints the run list, then again after every batch of changes,
// until ctx ends.
func (s statusPrinter) watchRuns(ctx context.Context, eng engineAPI, conn *engineConn) error {
	// Start the watch near the store's end: after the last run-level event
	// of every run (lane events of unfinished runs after it are replayed,
	// which only re-renders the list once).
	ids, err := conn.store().Runs(ctx)
	if err != nil {
		return failf("list runs in %s: %v", conn.describe(), err)
	}
	var after uint64
	for _, id := range ids {
		if last, err := conn.store().Last(ctx, id, events.RunLane); err == nil {
			after = max(after, last.Seq)
		}
	}
	ch, err := conn.store().Watch(ctx, "", after)
	if err != nil {
		return failf("watch %s: %v", conn.describe(), err)
	}
	var last string
	render := func() error {
		runs, err := eng.Runs(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if conn.mode == connServe && conn.holder.Kind == "serve" {
				return nil // the serve is away; the next change after it is back renders again
			}
			if conn.mode == connServe && !processAlive(conn.holder.PID) {
				return &holderStoppedError{holder: conn.describe()}
			}
			return failf("list runs in %s: %v", conn.describe(), err)
		}
		var b strings.Builder
		if s.json {
			if runs == nil {
				runs = []engine.RunStatus{}
			}
			j, _ := json.Marshal(runs)
			b.Write(j)
			b.WriteByte('\n')
		} else {
			statusPrinter{w: &b, conn: s.conn}.runs(runs, conn)
		}
		if b.String() == last {
			return nil
		}
		if last != "" && !s.json {
			fmt.Fprintf(s.w, "\n%s\n", time.Now().UTC().Format(time.RFC3339))
		}
		last = b.String()
		_, err = io.WriteString(s.w, last)
		return err
	}
	if err := render(); err != nil {
		return err
	}
	const settle = 50 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return nil
		case env, ok := <-ch:
			if ok {
				after = max(after, env.Seq)
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			if conn.mode == connServe && conn.holder.Kind == "serve" {
				// A serve that went away may come back (on any port: the
				// connection re-reads serve.json); follow it again from
				// the last event seen.
				if ch = rewatch(ctx, conn, after); ch == nil {
					return nil
				}
				break
			}
			if conn.mode == connServe {
				return &holderStoppedError{holder: conn.describe()}
			}
			return failf("the watch on %s ended; run status --watch again", conn.describe())
		}
		// Let a burst of events land before rendering once.
		timer := time.NewTimer(settle)
	drain:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case env, ok := <-ch:
				if !ok {
					break drain
				}
				after = max(after, env.Seq)
			case <-timer.C:
				break drain
			}
		}
		timer.Stop()
		if err := render(); err != nil {
			return err
		}
	}
}

// rewatch opens the store watch again after seq after, retrying while the
// connection finds the data directory's serve again; nil once ctx ends.
func rewatch(ctx context.Context, conn *engineConn, after uint64) <-chan events.Envelope {
	for {
		if ch, err := conn.store().Watch(ctx, "", after); err == nil {
			return ch
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// holderStoppedError: the process serving the data directory went away
// during status --watch.
type holderStoppedError struct{ holder string }

func (e *holderStoppedError) Error() string { return e.holder + " stopped" }

// runState is a run's one-word state.
func runState(r engine.RunStatus) string {
	switch {
	case r.Final && r.Cancelled:
		return "cancelled"
	case r.Final:
		return "final"
	}
	for _, l := range r.Lanes {
		switch l.WaitingFor {
		case engine.WaitNative, engine.WaitVerdict, engine.WaitOperation, engine.WaitRecovery:
			return "waiting-for-parent"
		}
	}
	return "running"
}

// laneCounts renders lanes by state: "2 complete, 1 running".
func laneCounts(lanes []engine.LaneStatus) string {
	counts := map[machines.State]int{}
	for _, l := range lanes {
		counts[l.State]++
	}
	var parts []string
	for _, st := range machines.States {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
			delete(counts, st)
		}
	}
	var rest []string
	for st, n := range counts {
		rest = append(rest, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), ", ")
}
