package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// defaultCap is a provider's deployment-wide concurrency cap when --cap
// does not name it: the provider registry RFC's 2.
const defaultCap = events.DefaultProviderCap

// capHelp is --cap's help, shared by serve and run.
const capHelp = `PROVIDER=N: at most N attempts of PROVIDER run at once across all workers
(1 to 64, default 2 each; repeatable or a comma list, e.g. --cap codex=4,grok=1)`

// addCapFlag declares --cap.
func addCapFlag(c *cobra.Command, list *[]string) {
	c.Flags().StringSliceVar(list, "cap", nil, capHelp)
}

// parseCaps reads --cap's values into every provider's cap: the named
// ones as given, every other provider a worker can execute at defaultCap.
// The caps are the deployment's whole configuration, so a provider left
// out goes back to the default.
func parseCaps(list []string) (map[policy.Provider]int, error) {
	known := providerNames()
	caps := map[policy.Provider]int{}
	for _, p := range known {
		caps[policy.Provider(p)] = defaultCap
	}
	given := map[string]bool{}
	for _, item := range list {
		item = strings.TrimSpace(item)
		name, num, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, usagef("--cap %q: want PROVIDER=N, for example --cap codex=4", item)
		}
		if !slices.Contains(known, name) {
			return nil, usagef("--cap %q: unknown provider %q; want one of %s", item, name, strings.Join(known, ", "))
		}
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || n < 1 || n > activities.MaxConcurrency {
			return nil, usagef("--cap %q: want a whole number of concurrent attempts from 1 to %d (default %d), for example --cap %s=4", item, activities.MaxConcurrency, defaultCap, name)
		}
		if given[name] {
			return nil, usagef("--cap names %s twice; give each provider one cap", name)
		}
		given[name] = true
		caps[policy.Provider(name)] = n
	}
	return caps, nil
}

// applyCaps sets the deployment's caps (events.Caps: the provider job
// consumers' in-flight maximum, read by every worker) on conn.
func applyCaps(ctx context.Context, conn *engineConn, caps map[policy.Provider]int) error {
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := conn.js.SetProviderCaps(actx, caps); err != nil {
		return failf("set the provider caps on %s: %v", conn.describe(), err)
	}
	return nil
}

// describeCaps is the caps as one line's tail: the providers whose cap is
// not the default, then the default for the others.
func describeCaps(caps map[policy.Provider]int) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(caps)) {
		if caps[p] != defaultCap {
			parts = append(parts, fmt.Sprintf("%s=%d", p, caps[p]))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d per provider", defaultCap)
	}
	return fmt.Sprintf("%s, others %d", strings.Join(parts, " "), defaultCap)
}

// maxCap is the largest cap among provs: a self-contained run's worker
// runs up to that many of each provider (each provider's own cap bounds
// it further).
func maxCap(caps map[policy.Provider]int, provs []policy.Provider) int {
	n := 1
	for _, p := range provs {
		n = max(n, caps[p])
	}
	return n
}

// readCaps returns every provider's cap and sessions in flight, bounded
// to a few seconds.
func readCaps(ctx context.Context, conn *engineConn) ([]events.CapInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return conn.js.ProviderCaps(cctx)
}

// capsLine is status's line of caps: "running/cap" for each provider
// with a cap other than the default or sessions running or queued, then
// the default cap of the rest.
func capsLine(caps []events.CapInfo) string {
	var parts []string
	others := false
	for _, c := range caps {
		if c.Cap == defaultCap && c.InFlight == 0 && c.Queued == 0 {
			others = true
			continue
		}
		part := fmt.Sprintf("%s %d/%d", c.Provider, c.InFlight, c.Cap)
		if c.Queued > 0 {
			part += fmt.Sprintf(" (%d queued)", c.Queued)
		}
		parts = append(parts, part)
	}
	line := "sessions running/cap (all workers): "
	switch {
	case len(parts) == 0:
		return line + fmt.Sprintf("none; cap %d per provider", defaultCap)
	case others:
		return line + strings.Join(parts, ", ") + fmt.Sprintf("; others 0/%d", defaultCap)
	}
	return line + strings.Join(parts, ", ")
}

// withCaps adds the providers' caps and sessions running to a status
// document.
func withCaps(ctx context.Context, conn *engineConn, doc runStatusJSON) (runStatusJSON, error) {
	caps, err := readCaps(ctx, conn)
	if err != nil {
		return doc, failf("read the provider caps from %s: %v", conn.describe(), err)
	}
	doc.Caps = caps
	return doc, nil
}
