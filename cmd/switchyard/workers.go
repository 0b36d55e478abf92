package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// newWorkersCmd builds `switchyard workers`: the live workers, from their
// presence records (what client.Workers returns).
func newWorkersCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var asJSON, absolute bool
	c := &cobra.Command{
		Use:   "workers [--json] [--absolute-times]",
		Short: "List the live workers: their providers, concurrency, host and pid",
		Long: `List the workers that announced themselves within the last 15 seconds (a
worker announces every 5 seconds while it runs and withdraws when it stops;
a crashed worker's record expires by itself): each one's id, the providers
whose jobs it takes, its --concurrency, its host and pid, when it started
and how long ago it was last seen. --absolute-times prints when it started
and was last seen as RFC 3339 UTC times instead.

--json prints the records as a JSON array (the Go client's Workers).

Exit codes: 0 the list was printed (empty too); 64 usage error; 1 anything
else (no serve for the data directory, the store cannot be read).`,
		Example: `  switchyard workers
  switchyard workers --json | jq '.[].providers'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			return withEngine(cmd.Context(), stderr, f, func(ctx context.Context, conn *engineConn, _ engineAPI) error {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				live, err := conn.js.Presence().Live(pctx)
				if err != nil {
					return failf("read the workers' presence from %s: %v", conn.describe(), err)
				}
				if asJSON {
					if live == nil {
						live = []events.WorkerPresence{}
					}
					return writeDoc(stdout, live)
				}
				if len(live) == 0 {
					fmt.Fprintf(stdout, "no live workers on %s; start one with `switchyard worker --provider P%s`\n", conn.describe(), conn.connFlags(f))
					return nil
				}
				printWorkers(stdout, live, timeFormat{now: time.Now(), absolute: absolute})
				return nil
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the records as a JSON array")
	addAbsoluteTimesFlag(c, &absolute)
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// printWorkers prints one line per worker under a header: UP is how long
// it has run ("1h04m"), SEEN when it last announced itself ("3s ago"); with
// tf.absolute both are the RFC 3339 times (STARTED, SEEN).
func printWorkers(w io.Writer, live []events.WorkerPresence, tf timeFormat) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	upHead := "UP"
	if tf.absolute {
		upHead = "STARTED"
	}
	fmt.Fprintf(tw, "WORKER\tPROVIDERS\tCONCURRENCY\tHOST\tPID\t%s\tSEEN\n", upHead)
	for _, p := range live {
		provs := make([]string, len(p.Providers))
		for i, pr := range p.Providers {
			provs[i] = string(pr)
		}
		conc := "-"
		if p.Concurrency > 0 {
			conc = fmt.Sprint(p.Concurrency)
		}
		up := "-"
		switch {
		case tf.absolute:
			up = tf.at(p.Started)
		case !p.Started.IsZero():
			up = span(tf.now.Sub(p.Started))
		}
		seen := "-"
		switch {
		case tf.absolute:
			seen = tf.at(p.Seen)
		case !p.Seen.IsZero():
			// A clock a little ahead of ours reads "0s ago", not "in 1s".
			seen = timeFormat{now: tf.now}.at(minTime(p.Seen, tf.now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", cell(p.WorkerID), strings.Join(provs, ","), conc,
			cmpDash(cell(p.Host)), p.PID, up, seen)
	}
	tw.Flush()
}

func cmpDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell is a record's text (written by another process) for a column:
// control characters escaped (printable), tabs too.
func cell(s string) string { return strings.ReplaceAll(printable(s), "\t", `\x09`) }

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
