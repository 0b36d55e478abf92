package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// missingCLIs returns the providers among provs whose CLI this worker
// cannot find in env (SWITCHYARD_<P>_BIN, else PATH), the way the runner
// resolves it at launch, each with the reason.
func missingCLIs(provs []policy.Provider, env map[string]string) ([]policy.Provider, map[policy.Provider]string) {
	var missing []policy.Provider
	why := map[policy.Provider]string{}
	for _, p := range provs {
		spec, err := providers.Lookup(p)
		if err != nil {
			missing, why[p] = append(missing, p), err.Error()
			continue
		}
		if _, err := providers.Discover(spec, env); err != nil {
			var nf *providers.BinaryNotFoundError
			if errors.As(err, &nf) && !nf.Override {
				why[p] = fmt.Sprintf("no %s CLI on PATH (tried %s)", p, strings.Join(nf.Tried, ", "))
			} else {
				why[p], _, _ = strings.Cut(err.Error(), "\n")
			}
			missing = append(missing, p)
		}
	}
	return missing, why
}

// reportMissingCLIs says at start which of the worker's providers have no
// CLI here: every attempt of theirs would end unavailable-cli, so a worker
// that starts silently would look healthy while it fails every job.
func reportMissingCLIs(w io.Writer, logger *slog.Logger, provs, missing []policy.Provider, why map[policy.Provider]string) {
	for _, p := range missing {
		fmt.Fprintf(w, "switchyard worker: %s: its attempts will end unavailable-cli; install it or pass --bin %s=/path\n", why[p], p)
		logger.Warn("provider CLI not found; its attempts will end unavailable-cli", "provider", string(p), "reason", why[p])
	}
	if len(missing) > 0 && len(missing) == len(provs) {
		fmt.Fprintln(w, "switchyard worker: none of this worker's providers has its CLI on this host; every attempt it takes will fail (status shows it)")
	}
}

// noCLILines are status's lines for live workers that announced providers
// without a CLI: one per such worker.
func noCLILines(live []events.WorkerPresence) []string {
	var out []string
	for _, w := range live {
		if len(w.NoCLI) == 0 {
			continue
		}
		names := make([]string, len(w.NoCLI))
		for i, p := range w.NoCLI {
			names[i] = string(p)
		}
		where := w.WorkerID
		if w.Host != "" {
			where += " on " + w.Host
		}
		out = append(out, fmt.Sprintf("  worker %s has no CLI for %s: those attempts end unavailable-cli", where, strings.Join(names, ", ")))
	}
	return out
}
