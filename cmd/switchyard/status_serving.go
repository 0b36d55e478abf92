package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// serving prints, after a status, who can move the runs shown: whether
// anything serves the data directory (and, when nothing does while runs
// are unfinished, the exact commands that resume them), which providers
// have live workers, and for each provider a lane waits for without a
// live worker, the command that starts one. detail is the one-run view.
func (s statusPrinter) serving(ctx context.Context, conn *engineConn, runs []engine.RunStatus, detail bool) {
	var open []engine.RunStatus
	for _, r := range runs {
		if !r.Final {
			open = append(open, r)
		}
	}
	waiting := waitingProviders(open)
	if conn.mode == connEmbedded {
		// This command started the data directory's server itself: no
		// serve, no self-contained run, hence no engine and no worker.
		if len(open) == 0 {
			return
		}
		what := fmt.Sprintf("%d unfinished run(s) do not move", len(open))
		if detail {
			what = fmt.Sprintf("no engine drives run %s (its `switchyard run` was interrupted or stopped) and no worker runs its attempts", open[0].Run)
		}
		fmt.Fprintf(s.w, "nothing serves %s: %s; resume with:\n", conn.dataDir, what)
		fmt.Fprintf(s.w, "  switchyard serve%s\n", s.conn)
		if len(waiting) > 0 {
			fmt.Fprintf(s.w, "  switchyard worker --provider %s%s   (in another shell)\n", strings.Join(waiting, ","), s.conn)
		}
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	live, err := conn.js.Presence().Live(pctx)
	if err != nil {
		fmt.Fprintf(s.w, "workers: unknown (%v)\n", err)
		return
	}
	byProvider := liveByProvider(live)
	if len(live) == 0 {
		fmt.Fprintln(s.w, "workers: none live")
	} else {
		var parts []string
		for _, p := range slices.Sorted(maps.Keys(byProvider)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", p, len(byProvider[p])))
		}
		fmt.Fprintf(s.w, "workers: %d live, for %s\n", len(live), strings.Join(parts, ", "))
		for _, l := range noCLILines(live) {
			fmt.Fprintln(s.w, l)
		}
	}
	if caps, err := readCaps(ctx, conn); err != nil {
		fmt.Fprintf(s.w, "caps: unknown (%v)\n", err)
	} else {
		fmt.Fprintln(s.w, capsLine(caps))
	}
	var missing []string
	for _, p := range waiting {
		if len(byProvider[p]) == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(s.w, "no live worker for %s, which a lane waits for; start one: switchyard worker --provider %s%s\n",
			strings.Join(missing, ", "), strings.Join(missing, ","), s.conn)
	}
}

// waitingProviders are the providers whose workers the lanes of runs wait
// for, sorted.
func waitingProviders(runs []engine.RunStatus) []string {
	var out []string
	for _, r := range runs {
		for _, l := range r.Lanes {
			if l.WaitingFor != engine.WaitWorker {
				continue
			}
			if p, _, ok := strings.Cut(l.Descriptor, ":"); ok && p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// liveByProvider groups live workers' ids by provider.
func liveByProvider(live []events.WorkerPresence) map[string][]string {
	out := map[string][]string{}
	for _, w := range live {
		for _, p := range w.Providers {
			out[string(p)] = append(out[string(p)], w.WorkerID)
		}
	}
	return out
}

// workerHint is run's hint when a lane waits for a worker of provider and
// none is live: "" when one is (or presence cannot be read).
func workerHint(ctx context.Context, conn *engineConn, provider, connFlags string) string {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	live, err := conn.js.Presence().Live(pctx)
	if err != nil || len(liveByProvider(live)[provider]) > 0 {
		return ""
	}
	return fmt.Sprintf("waiting for a %s worker (none running? start one: `switchyard worker --provider %s%s`)", provider, provider, connFlags)
}
