package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// newHistoryCmd builds `switchyard history`.
func newHistoryCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run, lane, types string
	var asJSON, absolute bool
	c := &cobra.Command{
		Use:   "history --run ID [--lane N|run] [--type T,...] [--json] [--absolute-times]",
		Short: "Print a run's event log",
		Long: `Print the events of a run as the store holds them, in the order they were
recorded: one line each with its stream sequence, time, lane ("run" for the
run-level subject), type and what it says. The log is the run's whole truth:
decisions with their inputs' digests, claims, finishes with their
normalized outcomes, verdicts, operations, cancels, and audits, the
deliveries that changed nothing (a duplicate or late report, a job delivered
again after its execution ended), including those recorded after run-final.

--lane keeps one lane's events (or "run" for the run-level ones) and --type
keeps the given event types. The TIME column is relative to now ("12s
ago"); --absolute-times prints each event's RFC 3339 UTC time to the
millisecond instead. --json prints each event in its stored wire form, one
JSON object per line.

Exit codes: 0 the events were printed; 64 usage error (a bad --lane or
--type, no such run or lane); 1 anything else (the store cannot be read).`,
		Example: `  switchyard history --run 7f3c2a
  switchyard history --run 7f3c2a --type audit
  switchyard history --run 7f3c2a --lane 1 --json`,
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
			keep, err := historyFilter(lane, types)
			if err != nil {
				return err
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, _ engineAPI, run string) error {
				if n, err := strconv.Atoi(lane); err == nil {
					if err := checkLaneOf(ctx, conn, f, run, n); err != nil {
						return err
					}
				}
				envs, err := conn.store().LoadRun(ctx, run)
				if err == nil && len(envs) == 0 {
					err = fmt.Errorf("run %s: %w", run, engine.ErrUnknownRun)
				}
				if err != nil {
					return engineError(err, run, events.RunLane, f, conn)
				}
				// Explained from the whole log, before filtering: a stop's full
				// reason needs the lane's policy and its exclusions.
				notes := engine.HistoryNotes(envs)
				envs = slices.DeleteFunc(envs, func(env events.Envelope) bool { return !keep(env) })
				if asJSON {
					for _, env := range envs {
						b, err := events.Encode(env)
						if err != nil {
							return failf("encode event %d: %v", env.Seq, err)
						}
						if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
							return err
						}
					}
					return nil
				}
				return printHistory(stdout, envs, notes, timeFormat{now: time.Now(), absolute: absolute})
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().StringVar(&lane, "lane", "", `only this zero-based lane's events, or "run" for the run-level ones`)
	c.Flags().StringVar(&types, "type", "", "only these event types, comma-separated (run-created, launch, claim, finish, audit, ...)")
	c.Flags().BoolVar(&asJSON, "json", false, "print each event's stored JSON, one per line")
	addAbsoluteTimesFlag(c, &absolute)
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// historyFilter turns --lane and --type into the events to keep.
func historyFilter(lane, types string) (func(events.Envelope) bool, error) {
	wantLane, anyLane := 0, lane == ""
	switch {
	case anyLane:
	case lane == "run":
		wantLane = events.RunLane
	default:
		n, err := strconv.Atoi(lane)
		if err != nil || n < 0 || n > events.MaxLanes {
			return nil, usagef(`--lane %q: want a zero-based lane index or "run"`, lane)
		}
		wantLane = n
	}
	var want []events.Type
	if types != "" {
		for t := range strings.SplitSeq(types, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(events.Types, events.Type(t)) {
				names := make([]string, len(events.Types))
				for i, k := range events.Types {
					names[i] = string(k)
				}
				return nil, usagef("--type %q is not an event type; want one of %s", t, strings.Join(names, ", "))
			}
			want = append(want, events.Type(t))
		}
	}
	return func(env events.Envelope) bool {
		return (anyLane || env.Lane == wantLane) && (want == nil || slices.Contains(want, env.Type))
	}, nil
}

// printHistory prints envs as a table; notes (engine.HistoryNotes) replace
// the detail of the events they explain; tf renders the TIME column (an
// absolute time keeps its milliseconds: events of one second are common).
func printHistory(w io.Writer, envs []events.Envelope, notes map[uint64]string, tf timeFormat) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tLANE\tTYPE\tDETAIL")
	for _, env := range envs {
		lane := "run"
		if env.Lane != events.RunLane {
			lane = strconv.Itoa(env.Lane)
		}
		detail := eventDetail(env.Payload)
		if n, ok := notes[env.Seq]; ok {
			detail = n
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", env.Seq, historyTime(env.Time, tf), lane, env.Type, detail)
	}
	return tw.Flush()
}

// eventDetail says in one line what an event records.
func eventDetail(p events.Payload) string {
	switch p := p.(type) {
	case events.RunCreated:
		return fmt.Sprintf("role %q, %s, parent %s, %s, sheet %s", p.Role, plural(len(p.Lanes), "lane"), p.Parent, p.Access, shortDigest(p.SheetDigest))
	case events.GroupExhausted:
		return fmt.Sprintf("provider %s exhausted for the run (lane %d, execution %s)", p.Provider, p.FromLane, p.ExecutionID)
	case events.RunFinal:
		return p.Summary
	case events.Launch:
		return dispatchDetail(p)
	case events.Continue:
		return "same route again: " + dispatchDetail(events.Launch(p))
	case events.Claim:
		return fmt.Sprintf("execution %s claimed by %s (lease %s)", p.ExecutionID, p.WorkerID, time.Duration(p.Lease.TTLMs)*time.Millisecond)
	case events.Finish:
		return finishDetail(p)
	case events.Inspect:
		return "the started writer waits for the parent's verdict (" + p.Decision.Reason + ")"
	case events.Verdict:
		d := fmt.Sprintf("verdict %s, evidence %s", p.State, p.EvidenceRef)
		if p.FromRef != "" {
			d += fmt.Sprintf("; the next writer starts from %s (commit %s)", p.FromRef, p.FromCommit)
		}
		return d
	case events.RequestOperation:
		if op := p.Decision.Operation; op != nil {
			return fmt.Sprintf("asks the parent for %s (task %s, checkpoint %s)", op.Kind, op.TaskID, op.CheckpointID)
		}
		return "asks the parent for an operation"
	case events.OperationDone:
		d := fmt.Sprintf("%s %s", p.Operation.Kind, p.Result)
		if p.Ref != "" {
			d += ", ref " + p.Ref
		}
		if p.Ledger != "" {
			d += fmt.Sprintf("; ledger %s, digest %s", p.Ledger, shortDigest(p.Digest))
		}
		return d
	case events.OperationStep:
		d := fmt.Sprintf("%s %s (task %s, checkpoint %s): digest %s at HEAD %s, %s, %s", p.Operation.Kind, p.Step,
			p.Operation.TaskID, p.Operation.CheckpointID, shortDigest(p.Digest), shortHead(p.Head), plural(len(p.Files), "file"), plural(len(p.Checks), "check"))
		if p.Step == events.OperationBegun {
			d += "; pending until operation done or reject"
		}
		return d
	case events.Recover:
		if p.Recovery == nil {
			return "continuation declined, evidence " + p.EvidenceRef
		}
		d := fmt.Sprintf("continuation cleared, evidence %s; blockage %s, snapshot %s", p.EvidenceRef, p.Recovery.BlockageID, p.Recovery.SnapshotRef)
		if x := p.Recovery.NextExecution; x != nil {
			d += ", next execution " + x.ID
		}
		return d
	case events.Complete:
		return "lane complete"
	case events.Stop:
		return fmt.Sprintf("lane stopped: %s %s", p.Decision.Kind, p.Decision.Reason)
	case events.Cancel:
		return fmt.Sprintf("cancelled by %s: %s", p.By, p.Reason)
	case events.Audit:
		d := string(p.Reason)
		if p.ReportSeq != 0 {
			d += fmt.Sprintf(" (report %d", p.ReportSeq)
			if r := p.Report; r != nil {
				d += fmt.Sprintf(": %s from %s", r.Kind, r.WorkerID)
			}
			d += ")"
		}
		if p.Reason == events.AuditReportAfterCancel {
			// Expected after every cancel of a running attempt: say so
			// plainly, so it does not read as an anomaly.
			d += ": the cancelled attempt's report arrived; nothing changed"
			if p.Detail != "" {
				d += " (" + p.Detail + ")"
			}
			return d
		}
		if p.Detail != "" {
			d += ": " + p.Detail
		}
		return d
	}
	return ""
}

func dispatchDetail(p events.Launch) string {
	d := fmt.Sprintf("attempt %d %s, execution %s, %s", p.AttemptIndex, p.Descriptor, p.ExecutionID, p.Route)
	if b := p.WorktreeBase; b != nil {
		if b.Source == events.BaseReviewed {
			d += fmt.Sprintf(", worktree from the reviewed state %s (commit %s)", b.Ref, b.Commit)
		} else {
			d += fmt.Sprintf(", worktree from the checkout's HEAD (commit %s)", b.Commit)
		}
	}
	return d
}

func finishDetail(p events.Finish) string {
	d := fmt.Sprintf("execution %s ended %s", p.ExecutionID, p.Event.Status)
	switch {
	case p.Event.ProcessStarted == nil:
		d += ", process start unknown"
	case *p.Event.ProcessStarted:
		d += ", process started"
	default:
		d += ", nothing started"
	}
	if p.Abandoned {
		d += ", abandoned (its worker's lease went stale)"
	}
	if p.Unsupported != "" {
		d += ", " + p.Unsupported
	}
	if p.WorkerID != "" {
		d += ", reported by " + p.WorkerID
	}
	return d
}

// shortDigest is a digest's first 12 hex digits, for reading.
func shortDigest(d string) string {
	hex := strings.TrimPrefix(d, events.DigestPrefix)
	if len(hex) > 12 {
		hex = hex[:12]
	}
	return strings.TrimSuffix(d, strings.TrimPrefix(d, events.DigestPrefix)) + hex
}

// shortHead is a commit id's first 12 digits.
func shortHead(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// historyTime is an event's TIME cell.
func historyTime(t time.Time, tf timeFormat) string {
	if tf.absolute && !t.IsZero() {
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return tf.at(t)
}
