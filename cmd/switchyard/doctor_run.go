package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// runPrecheckTimeout bounds run's pre-submit check (it runs no probe; this
// only caps reading the live workers).
const runPrecheckTimeout = 10 * time.Second

// runAllowsUnverified are the providers whose UNVERIFIED containment the
// run accepts. Seam for run's --allow-unverified-containment (recorded in
// RunOptions.AllowUnverifiedContainment): until run has the flag, none.
func runAllowsUnverified(runFlags) []policy.Provider { return nil }

// runPrecheck is doctor's quick check (no probes, no quota, no worker
// commands) of the providers a run's lanes may launch, run before the run
// is submitted. It prints what will not work, one problem per line with its
// fix, and nothing when all is well; the run goes on either way (a
// fallback may cover a blocked attempt).
func runPrecheck(ctx context.Context, w io.Writer, conn *engineConn, f engineFlags, rf runFlags, in runInput) {
	if len(in.providers) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, runPrecheckTimeout)
	defer cancel()
	c := doctorCheck{mode: in.req.Mode, allowUnverified: runAllowsUnverified(rf), env: doctorEnv(), conn: conn}
	if conn != nil && conn.mode != connEmbedded {
		c.served, c.connFlags = true, conn.connFlags(f)
	}
	checked := checkProviders(cctx, c, in.providers)
	lanes := doctorLanes(in.lanes, checked)
	n := 0
	for _, p := range checked {
		n += len(p.Problems)
	}
	if n == 0 {
		return
	}
	blocked := 0
	for _, l := range lanes {
		if !l.CanRun {
			blocked++
		}
	}
	// The doctor command pastes as is: the run's parent, and where the
	// data lives unless it is the default (issue 28, finding 14).
	details := fmt.Sprintf("switchyard doctor --sheet %s --role %s --parent %s --probe", shellQuote(rf.sheet), shellQuote(rf.role), shellQuote(rf.parent))
	if conn != nil {
		details += conn.connFlags(f)
	}
	head := fmt.Sprintf("pre-check: %s (the run goes on; a fallback may cover them; details: %s)", plural(n, "problem"), details)
	if blocked > 0 {
		head = fmt.Sprintf("pre-check: %s; %s cannot run at all (the run goes on; details: %s)",
			plural(n, "problem"), plural(blocked, "lane"), details)
	}
	fmt.Fprintln(w, head)
	for _, p := range checked {
		for _, pr := range p.Problems {
			fmt.Fprintf(w, "  %s: %s\n    fix: %s\n", p.Provider, pr.Message, pr.Fix)
		}
	}
}
