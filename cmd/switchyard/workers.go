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
	var asJSON bool
	c := &cobra.Command{
		Use:   "workers [--json]",
		Short: "List the live workers: their providers, concurrency, host and pid",
		Long: `List the workers that announced themselves within the last 15 seconds (a
worker announces every 5 seconds while it runs and withdraws when it stops;
a crashed worker's record expires by itself): each one's id, the providers
whose jobs it takes, its --concurrency, its host and pid, when it started
and how long ago it was last seen.

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
				printWorkers(stdout, live, time.Now())
				return nil
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the records as a JSON array")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// printWorkers prints one line per worker under a header.
func printWorkers(w io.Writer, live []events.WorkerPresence, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tPROVIDERS\tCONCURRENCY\tHOST\tPID\tUP\tSEEN")
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
		if !p.Started.IsZero() {
			up = now.Sub(p.Started).Round(time.Second).String()
		}
		seen := "-"
		if !p.Seen.IsZero() {
			seen = max(now.Sub(p.Seen), 0).Round(time.Second).String() + " ago"
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
