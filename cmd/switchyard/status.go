package main

import (
	"context"
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
	var run, state string
	var asJSON, watch, absolute bool
	var limit int
	c := &cobra.Command{
		Use:   "status [--run ID] [--limit N] [--state S] [--json] [--watch] [--absolute-times]",
		Short: "Show runs and their lanes",
		Long: `Without --run, list the runs in the store, newest first: role, state, lanes
by state, last change. --limit caps the list (default 20; 0 lists every
run; a cut list says how many more there are, with --json on stderr) and --state keeps the runs in one state: running, waiting-for-parent,
final or cancelled (comma-separate several). With --run, show that run's
lanes: state, current attempt, what each waits for, and the command that
answers a lane waiting for the parent. With --run --json the status also
carries "eligibility": for each provider the run's lanes may launch, the
verdict the eligibility gate would give it now (the same verdict object
"switchyard usage --json" prints and an exclude event records).

Times in the list and the run view are relative to now ("12s ago", "in
3h"); --absolute-times prints them as RFC 3339 UTC instead. --watch's
change lines start with the RFC 3339 time of the change, and --json always
prints RFC 3339.

Both views say which providers have live workers (workers announce
themselves while they run), each provider's concurrency cap across all
workers and how many of its sessions run now ("caps" in --run --json), and whether anything serves the data
directory: an unfinished run nothing drives (its self-contained "switchyard
run" was interrupted, say) shows the exact command that resumes it.

--watch keeps following: with --run it prints one line per lane change (the
changes already recorded first) until the run is final, then its status;
without --run it prints the list once, then one line per run that appears
or changes (state or lane counts), until interrupted. With --json, --watch
prints one JSON object per line: each lane change (with --run, then the
final status), or each new or changed run's status. Each JSON object
status prints (the --run status, each run of the list, each --watch line)
starts with "schemaVersion": 2 (docs/OPERATIONS.md, "JSON output").
--watch follows a "switchyard serve" or a running "switchyard run"; when
nothing serves the data directory nothing can change, so it shows the
status once.

Exit codes: 0 the status was printed (whatever state the runs are in); 64
usage error (an unknown --state, a negative --limit) or no such run; 1
anything else.`,
		Example: `  switchyard status
  switchyard status --state running,waiting-for-parent --limit 0
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
				for _, name := range []string{"limit", "state"} {
					if cmd.Flags().Changed(name) {
						return usagef("--%s applies to the run list; drop it, or drop --run", name)
					}
				}
			}
			if limit < 0 {
				return usagef("--limit %d: want a number of runs, or 0 for every run", limit)
			}
			states, err := parseRunStates(state)
			if err != nil {
				return err
			}
			show := func(ctx context.Context, conn *engineConn, eng engineAPI) error {
				s := statusPrinter{w: stdout, errW: stderr, json: asJSON, conn: conn.connFlags(f), limit: limit, states: states,
					times: timeFormat{now: time.Now(), absolute: absolute}}
				if watch && conn.mode == connEmbedded {
					// This process holds the data directory, so nothing can
					// change it while we watch: show it once instead.
					fmt.Fprintf(stderr, "switchyard status: nothing serves %s, so nothing changes there; --watch follows a `switchyard serve` or a running `switchyard run`\n", conn.dataDir)
					watch = false
				}
				if run != "" {
					id, err := resolveRunID(ctx, conn, f, run)
					if err != nil {
						return err
					}
					run = id
				}
				switch {
				case run != "" && watch:
					return s.watchRun(ctx, eng, run, f, conn)
				case run != "":
					st, err := eng.Status(ctx, run)
					if err != nil {
						return engineError(err, run, events.RunLane, f, conn)
					}
					el, err := runEligibility(ctx, conn, run)
					if err != nil {
						return err
					}
					if s.json {
						doc, err := withCaps(ctx, conn, runStatusJSON{RunStatus: st, Eligibility: el})
						if err != nil {
							return err
						}
						return writeDoc(s.w, doc)
					}
					if err := s.run(st); err != nil {
						return err
					}
					if line := eligibilityLine(el); line != "" && !st.Final {
						fmt.Fprintln(s.w, line)
					}
					s.serving(ctx, conn, []engine.RunStatus{st}, true)
					return nil
				case watch:
					return s.watchRuns(ctx, eng, conn)
				}
				list, err := eng.ListRuns(ctx, s.match, s.limit)
				if err != nil {
					return failf("list runs in %s: %v", conn.describe(), err)
				}
				if err := s.list(list, conn); err != nil {
					return err
				}
				if !s.json {
					s.serving(ctx, conn, list.Open, false)
				}
				return nil
			}
			err = withEngine(cmd.Context(), stderr, f, show)
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
	c.Flags().IntVar(&limit, "limit", defaultStatusLimit, "list at most N runs, newest first (0: every run)")
	c.Flags().StringVar(&state, "state", "", "list only runs in these states: "+strings.Join(runStates, ", ")+" (comma-separated)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&watch, "watch", false, "keep following changes (Ctrl-C stops)")
	addAbsoluteTimesFlag(c, &absolute)
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// defaultStatusLimit is how many runs status lists by default.
const defaultStatusLimit = 20

// runStates are the states runState returns, in lifecycle order.
var runStates = []string{"running", "waiting-for-parent", "final", "cancelled"}

// parseRunStates parses --state: "" (every state) or a comma-separated
// list of runStates.
func parseRunStates(s string) (map[string]bool, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(runStates, name) {
			return nil, usagef("--state %q: unknown run state %q; want one or more of %s", s, name, strings.Join(runStates, ", "))
		}
		out[name] = true
	}
	return out, nil
}

// selectRuns orders runs newest first (by creation, then id) and keeps
// those in states (nil: all); it returns them and how many matched before
// limit (0: no limit) cut the list.
func selectRuns(runs []engine.RunStatus, states map[string]bool, limit int) ([]engine.RunStatus, int) {
	out := make([]engine.RunStatus, 0, len(runs))
	for _, r := range runs {
		if states == nil || states[runState(r)] {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.After(out[b].Created)
		}
		return out[a].Run > out[b].Run
	})
	matched := len(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, matched
}

// statusPrinter renders statuses as text or JSON.
type statusPrinter struct {
	w io.Writer
	// errW, when set, is told that --json's list was cut by --limit (the
	// JSON array on w stays the runs alone).
	errW io.Writer
	json bool
	conn string
	// limit and states select the run list (see selectRuns).
	limit  int
	states map[string]bool
	// times renders the text output's times (relative to now unless
	// --absolute-times).
	times timeFormat
}

// match says whether r is in the states --state selects (every run
// without --state). It looks only at Final and Cancelled for a final run,
// as engine.ListRuns requires.
func (s statusPrinter) match(r engine.RunStatus) bool {
	return s.states == nil || s.states[runState(r)]
}

// runs prints the run list: newest first, selected by --state and
// --limit.
func (s statusPrinter) runs(all []engine.RunStatus, conn *engineConn) error {
	runs, matched := selectRuns(all, s.states, s.limit)
	return s.list(engine.RunList{Runs: runs, Matched: matched, Total: len(all)}, conn)
}

// list prints a selected run list (engine.ListRuns, or runs).
func (s statusPrinter) list(l engine.RunList, conn *engineConn) error {
	runs, matched := l.Runs, l.Matched
	if s.json {
		if runs == nil {
			runs = []engine.RunStatus{}
		}
		if matched > len(runs) && s.errW != nil {
			fmt.Fprintf(s.errW, "switchyard status: listed the newest %d of %d runs (--limit %d); --limit 0 lists every run\n", len(runs), matched, s.limit)
		}
		return writeDoc(s.w, runs)
	}
	if len(runs) == 0 {
		if l.Total > 0 {
			fmt.Fprintf(s.w, "no %s runs in %s (%d in other states)\n", strings.Join(slices.Sorted(maps.Keys(s.states)), " or "), conn.describe(), l.Total)
			return nil
		}
		fmt.Fprintf(s.w, "no runs in %s\n", conn.describe())
		return nil
	}
	defer func() {
		if matched > len(runs) {
			fmt.Fprintf(s.w, "(%d more; --limit 0 lists every run)\n", matched-len(runs))
		}
	}()
	tw := tabwriter.NewWriter(s.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tROLE\tSTATE\tLANES\tUPDATED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Run, r.Role, runState(r), laneCounts(r.Lanes), s.times.at(r.Updated))
	}
	return tw.Flush()
}

// run prints one run's status.
func (s statusPrinter) run(st engine.RunStatus) error {
	if s.json {
		return writeDoc(s.w, st)
	}
	fmt.Fprintf(s.w, "run %s: role %q, parent %s, %s, %s\n", st.Run, st.Role, st.Parent, st.Access, runState(st))
	if !st.Created.IsZero() {
		fmt.Fprintf(s.w, "  created %s, last event %s\n", s.times.at(st.Created), s.times.at(st.Updated))
	}
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
	if len(st.Unhealthy) > 0 {
		names := make([]string, len(st.Unhealthy))
		for i, p := range st.Unhealthy {
			names[i] = string(p)
		}
		fmt.Fprintf(s.w, "  unhealthy providers (a stall's health probe found them unavailable; excluded for the rest of the run): %s\n", strings.Join(names, ", "))
	}
	if st.StaleSheet != "" {
		fmt.Fprintf(s.w, "  notice: %s\n", st.StaleSheet)
	}
	var counts []string
	for _, r := range slices.Sorted(maps.Keys(st.Audits)) {
		if r != events.AuditReportAfterCancel {
			counts = append(counts, fmt.Sprintf("%d %s", st.Audits[r], r))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(s.w, "  audited deliveries (changed nothing): %s\n", strings.Join(counts, ", "))
	}
	// The report a cancel leads to is expected, not an anomaly.
	switch n := st.Audits[events.AuditReportAfterCancel]; {
	case n == 1:
		fmt.Fprintf(s.w, "  the cancelled attempt's report arrived; nothing changed\n")
	case n > 1:
		fmt.Fprintf(s.w, "  %d reports of cancelled attempts arrived; nothing changed\n", n)
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
		state := string(l.State)
		if engine.HandedOff(l) {
			state, outcome = engine.HandedOffState, "commit "+l.Handoffs[len(l.Handoffs)-1].Short()+", then "+l.Reason
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", l.Lane, l.LaneID, state, attempt, waiting, outcome)
		if cmd := parentCommand(l.WaitingFor, st.Run, l.Lane, st.Parent, s.conn); cmd != "" {
			waits = append(waits, fmt.Sprintf("  lane %d: %s", l.Lane, cmd))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range st.Lanes {
		if p := l.Pending; p != nil {
			fmt.Fprintf(s.w, "  lane %d: operation %s PENDING since it was begun: digest %s at HEAD %s in %s; it may or may not have happened: inspect the worktree, then settle it with switchyard operation done --run %s --lane %d --result succeeded|failed [--ref COMMIT] or operation reject\n",
				l.Lane, p.Operation.Kind, p.Digest, p.Head, p.Repo, st.Run, l.Lane)
		} else if v := l.Validated; v != nil {
			fmt.Fprintf(s.w, "  lane %d: operation %s validated: digest %s at HEAD %s; next: switchyard operation begin --run %s --lane %d --digest %s\n",
				l.Lane, v.Operation.Kind, v.Digest, v.Head, st.Run, l.Lane, v.Digest)
		}
		if l.Stall != nil {
			fmt.Fprintf(s.w, "  lane %d: %s stalled: %s\n", l.Lane, l.Descriptor, engine.StallCause(*l.Stall))
		}
		for _, h := range l.Handoffs {
			fmt.Fprintf(s.w, "  lane %d: %s\n", l.Lane, h.Text())
		}
		for _, x := range l.Exclusions {
			line := fmt.Sprintf("  lane %d: %s excluded before launch: %s", l.Lane, x.Descriptor, x.Code)
			if x.Detail != "" {
				line += ": " + x.Detail
			}
			if x.Until != nil {
				line += " (until " + s.times.at(*x.Until) + ")"
			}
			fmt.Fprintln(s.w, line)
		}
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
			_ = s.jsonLine(ch)
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
		if conn.mode == connServe && conn.holder.Live() != nil {
			return &holderStoppedError{holder: conn.describe()}
		}
		return engineError(err, run, events.RunLane, f, conn)
	}
	if st, err = eng.Status(ctx, run); err != nil {
		return engineError(err, run, events.RunLane, f, conn)
	}
	if s.json {
		el, err := runEligibility(ctx, conn, run)
		if err != nil {
			return err
		}
		doc, err := withCaps(ctx, conn, runStatusJSON{RunStatus: st, Eligibility: el})
		if err != nil {
			return err
		}
		return s.jsonLine(doc)
	}
	return s.run(st)
}

// watchRuns prints the run list once, then one line (or JSON object) per
// run that appears or changes state or lane counts, until ctx ends. After
// the first list it reads only the runs whose events arrive, so a watch
// costs the same in a store of 10,000 final runs as in one of 10.
func (s statusPrinter) watchRuns(ctx context.Context, eng engineAPI, conn *engineConn) error {
	failed := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		if conn.mode == connServe && conn.holder.Kind == "serve" {
			return nil // the serve is away; the next change after it is back compares again
		}
		if conn.mode == connServe && conn.holder.Live() != nil {
			return &holderStoppedError{holder: conn.describe()}
		}
		return failf("list runs in %s: %v", conn.describe(), err)
	}
	// Start the watch near the store's end: after the last run-level event
	// of every run (from the run index for final runs it knows; lane
	// events of unfinished runs after it are replayed, which at most
	// repeats a comparison).
	ids, err := conn.store().Runs(ctx)
	if err != nil {
		return failf("list runs in %s: %v", conn.describe(), err)
	}
	indexed := map[string]events.FinalRun{}
	if ix, ok := conn.store().(events.RunIndex); ok {
		if idx, _, err := ix.FinalRuns(ctx); err == nil {
			indexed = idx
		}
	}
	var after uint64
	existing := make(map[string]bool, len(ids))
	for _, id := range ids {
		existing[id] = true
		if f, ok := indexed[id]; ok {
			after = max(after, f.Seq)
			continue
		}
		if last, err := conn.store().Last(ctx, id, events.RunLane); err == nil {
			after = max(after, last.Seq)
		}
	}
	ch, err := conn.store().Watch(ctx, "", after)
	if err != nil {
		return failf("watch %s: %v", conn.describe(), err)
	}
	list, err := eng.ListRuns(ctx, s.match, s.limit)
	if err != nil {
		if ferr := failed(err); ferr != nil || ctx.Err() != nil {
			return ferr
		}
	}
	if s.json {
		// One object per line throughout: the selected runs, then changes.
		for _, r := range list.Runs {
			if err := s.jsonLine(r); err != nil {
				return err
			}
		}
	} else if err := s.list(list, conn); err != nil {
		return err
	}
	// seen: the rows compared so far. A run that was final when the watch
	// began and that the list did not show has no row yet; final, it
	// changes neither state nor lanes, so an event of it (an audit) only
	// records its row.
	seen := map[string]runRow{}
	for _, r := range append(list.Runs, list.Open...) {
		seen[r.Run] = rowOf(r)
	}
	const settle = 50 * time.Millisecond
	for {
		touched := map[string]bool{}
		select {
		case <-ctx.Done():
			return nil
		case env, ok := <-ch:
			if ok {
				after = max(after, env.Seq)
				touched[env.Run] = true
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
		// Let a burst of events land before comparing once.
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
				touched[env.Run] = true
			case <-timer.C:
				break drain
			}
		}
		timer.Stop()
		var runs []engine.RunStatus
		for run := range touched {
			st, err := eng.Status(ctx, run)
			if errors.Is(err, engine.ErrInconsistentLog) || errors.Is(err, engine.ErrUnknownRun) {
				continue
			}
			if err != nil {
				if ferr := failed(err); ferr != nil || ctx.Err() != nil {
					return ferr
				}
				continue
			}
			runs = append(runs, st)
		}
		sort.SliceStable(runs, func(a, b int) bool {
			if !runs[a].Created.Equal(runs[b].Created) {
				return runs[a].Created.Before(runs[b].Created)
			}
			return runs[a].Run < runs[b].Run
		})
		for _, r := range runs {
			now := rowOf(r)
			before, known := seen[r.Run]
			if existing[r.Run] && !known && r.Final {
				seen[r.Run] = now // final before the watch began: nothing to say
				continue
			}
			if known && before == now {
				continue
			}
			seen[r.Run] = now
			if s.states != nil && !s.states[now.state] && (!known || !s.states[before.state]) {
				continue
			}
			if s.json {
				if err := s.jsonLine(r); err != nil {
					return err
				}
				continue
			}
			if _, err := fmt.Fprintln(s.w, changeLine(r, before, now, known)); err != nil {
				return err
			}
		}
	}
}

// runRow is what a run-list watch compares: a run's state and lane counts.
type runRow struct{ state, lanes string }

func rowOf(r engine.RunStatus) runRow { return runRow{state: runState(r), lanes: laneCounts(r.Lanes)} }

// changeLine is one run-list watch line: when, which run, and what
// changed.
func changeLine(r engine.RunStatus, before, now runRow, known bool) string {
	head := fmt.Sprintf("%s run %s (%s): ", r.Updated.UTC().Format(time.RFC3339), r.Run, r.Role)
	switch {
	case !known:
		return head + "new, " + now.state + "; " + now.lanes
	case before.state != now.state:
		return head + before.state + " -> " + now.state + "; " + now.lanes
	}
	return head + now.state + "; " + now.lanes
}

// jsonLine prints v as one JSON line with its schemaVersion.
func (s statusPrinter) jsonLine(v any) error { return writeDocLine(s.w, v) }

// rewatch opens the store watch again after seq after, retrying while the
// connection finds the data directory's serve again; nil once ctx ends.
func rewatch(ctx context.Context, conn *engineConn, after uint64) <-chan events.Envelope {
	retry := events.Backoff{Min: 50 * time.Millisecond, Max: 250 * time.Millisecond}
	for {
		if ch, err := conn.store().Watch(ctx, "", after); err == nil {
			return ch
		}
		if !retry.Wait(ctx) {
			return nil
		}
	}
}

// holderStoppedError: the process serving the data directory went away
// during status --watch.
type holderStoppedError struct{ holder string }

func (e *holderStoppedError) Error() string { return e.holder + " stopped" }

// runState is a run's one-word state.
func runState(r engine.RunStatus) string { return string(r.State()) }

// laneCounts renders lanes by state: "2 complete, 1 running".
func laneCounts(lanes []engine.LaneStatus) string {
	counts := map[machines.State]int{}
	for _, l := range lanes {
		if engine.HandedOff(l) {
			counts[engine.HandedOffState]++
			continue
		}
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
