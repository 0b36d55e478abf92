package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// newLogsCmd builds `switchyard logs`: what is recorded of a run's
// attempts (engine.Logs, the Go client's Run.Logs), once or following.
func newLogsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run string
	var lane int
	var follow, asJSON, absolute bool
	c := &cobra.Command{
		Use:   "logs --run ID [--lane N] [--follow] [--json] [--absolute-times]",
		Short: "Show what is recorded of a run's attempts; --follow keeps printing until the lanes are final",
		Long: `Show what the engine and the workers recorded of a run's attempts, in the
order it was recorded: per attempt its launch (descriptor, provider,
execution), the worker that claimed it, each progress snapshot its runner
wrote (phase, bytes the CLI printed on stdout and stderr, its last output),
its outcome with how long it took and the receipt's capped diagnostic, and
its output file (cut at 256 KiB); then each lane's end. --lane keeps one
lane.

Nothing else of a provider's stream is kept, so nothing else is shown: no
raw transcript, no argv, no environment value. The progress and output
files are read from the attempt's directory under the data directory, so
with --nats run it where that (shared) directory is mounted.

--follow keeps printing what is recorded later (new events, each newer
progress snapshot of a running attempt) until every shown lane is final,
then exits 0; Ctrl-C stops it (exit 130). With nothing serving the data
directory nothing can change, so --follow prints once.

Times are relative to now ("12s ago"); --absolute-times prints RFC 3339
UTC. --json prints one JSON object per line (kind launch, claim, progress,
finish, output or lane-final; the Go client's LogEntry), with RFC 3339
times.

Exit codes: 0 printed (with --follow: every shown lane became final); 64
usage error (no such run or lane); 130 interrupted while following; 1
anything else (the store cannot be read).`,
		Example: `  switchyard logs --run 7f3c2a
  switchyard logs --run 7f3c2a --lane 1 --follow
  switchyard logs --run 7f3c2a --json | jq 'select(.kind == "finish")'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if !cmd.Flags().Changed("lane") {
				lane = events.RunLane
			} else if err := checkRunLane(run, lane, true); err != nil {
				return err
			}
			if err := checkRunLane(run, 0, true); err != nil {
				return err
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if lane != events.RunLane {
					if err := checkLaneOf(ctx, conn, f, run, lane); err != nil {
						return err
					}
				}
				if follow && conn.mode == connEmbedded {
					fmt.Fprintf(stderr, "switchyard logs: nothing serves %s, so nothing changes there; --follow follows a `switchyard serve` or a running `switchyard run`\n", conn.dataDir)
					follow = false
				}
				p := logPrinter{w: stdout, json: asJSON, times: timeFormat{absolute: absolute}}
				err := eng.Logs(ctx, run, engine.LogOptions{Lane: lane, Follow: follow}, func(e engine.LogEntry) error {
					return p.print(e, time.Now())
				})
				if err != nil && ctx.Err() != nil {
					return &exitError{code: exitInterrupted}
				}
				return engineError(err, run, lane, f, conn)
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id (or a unique prefix)")
	c.Flags().IntVar(&lane, "lane", 0, "only this zero-based lane (default: every lane)")
	c.Flags().BoolVar(&follow, "follow", false, "keep printing what is recorded until every shown lane is final (Ctrl-C stops)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per line")
	addAbsoluteTimesFlag(c, &absolute)
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// logPrinter renders log entries as lines or JSON lines.
type logPrinter struct {
	w     io.Writer
	json  bool
	times timeFormat
}

// print writes e; now is the time relative times are measured from.
// One-line texts are escaped here; the multi-line evidence and output keep
// their line breaks, and the command's writer (termsafe) escapes every
// other control character.
func (p logPrinter) print(e engine.LogEntry, now time.Time) error {
	if p.json {
		return statusPrinter{w: p.w}.jsonLine(e)
	}
	tf := p.times
	tf.now = now
	var b strings.Builder
	fmt.Fprintf(&b, "%s lane %d", tf.at(e.Time), e.Lane)
	if e.Kind != engine.LogLaneFinal {
		fmt.Fprintf(&b, " attempt %d %s", e.Attempt, cell(e.Descriptor))
	}
	b.WriteString(": ")
	switch e.Kind {
	case engine.LogLaunch:
		fmt.Fprintf(&b, "launched (%s, provider %s, execution %s)", e.Route, e.Provider, e.ExecutionID)
	case engine.LogClaim:
		fmt.Fprintf(&b, "running on worker %s", cell(e.WorkerID))
	case engine.LogProgress:
		if e.Progress == nil {
			b.WriteString("progress: " + e.Note)
			break
		}
		pr := e.Progress
		fmt.Fprintf(&b, "progress #%d %s; stdout %s, stderr %s", pr.Seq, pr.Phase, humanBytes(pr.StdoutBytes), humanBytes(pr.StderrBytes))
		if pr.LastActivityAt != nil {
			b.WriteString("; last output " + tf.at(*pr.LastActivityAt))
		}
		if pr.CancelSignal != "" {
			b.WriteString("; " + pr.CancelSignal + " sent")
		}
		if !pr.ChildRunning && pr.ExitCode != nil {
			fmt.Fprintf(&b, "; the CLI exited %d", *pr.ExitCode)
		}
	case engine.LogFinish:
		fmt.Fprintf(&b, "ended %s", e.Outcome)
		if e.Cause != "" && e.Cause != string(e.Outcome) {
			b.WriteString(" (" + printable(e.Cause) + ")")
		}
		fmt.Fprintf(&b, ", took %s", span(time.Duration(e.TookMs)*time.Millisecond))
		if er := e.Error; er != nil {
			if er.Message != "" {
				b.WriteString("\n  error: " + printable(er.Message))
			}
			if er.Evidence != "" {
				b.WriteString("\n  evidence: " + indentLines(strings.TrimRight(er.Evidence, "\n"), "  | "))
			}
		}
	case engine.LogOutput:
		if e.Note != "" {
			fmt.Fprintf(&b, "output %s: %s", e.OutputPath, e.Note)
			break
		}
		fmt.Fprintf(&b, "output (%s)", humanBytes(e.OutputBytes))
		if e.OutputTruncated {
			fmt.Fprintf(&b, ", the first %s shown; the whole file is %s", humanBytes(int64(len(e.Output))), e.OutputPath)
		}
		b.WriteString(":\n  | " + indentLines(strings.TrimRight(e.Output, "\n"), "  | "))
	case engine.LogLaneFinal:
		fmt.Fprintf(&b, "%s", e.State)
		if e.Reason != "" && e.Reason != string(e.State) {
			b.WriteString(" (" + printable(e.Reason) + ")")
		}
	default:
		return fmt.Errorf("logs: unknown entry kind %q", e.Kind)
	}
	_, err := fmt.Fprintln(p.w, b.String())
	return err
}

// indentLines puts prefix before every line of s after the first.
func indentLines(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
