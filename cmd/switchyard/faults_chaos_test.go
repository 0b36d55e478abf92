//go:build chaos

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The randomized engine crash matrix (make chaos): rounds of fresh
// deployments, each with 50 lanes (5 runs × 10 seats) and serve killed at
// randomly chosen moments. SY_CHAOS_ROUNDS (default 3), SY_CHAOS_KILLS
// (kills per round, default 8) and SY_CHAOS_SEED (default: the clock)
// choose the matrix; the seed is logged so a failing matrix can be run
// again.

func chaosEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	return n
}

// randomTrigger picks one kill moment.
func randomTrigger(rng *rand.Rand) crashTrigger {
	switch rng.IntN(6) {
	case 0:
		return killOnSubmit()
	case 1:
		return killWhenLaunchedAndRunning()
	case 2:
		return killOnQueuedReport()
	case 3:
		n := 1 + rng.IntN(30)
		return crashTrigger{fmt.Sprintf("after %d more events", n), func(t *testing.T, h *crashHarness) {
			var target int
			h.c.read(func(v *faultView) { target = len(v.c.seen) + n })
			h.c.waitUntil(h.plan.limit, fmt.Sprintf("%d more events", n), func(v *faultView) bool {
				return len(v.c.seen) >= target || v.final(h.runs...)
			})
		}}
	case 4:
		d := time.Duration(rng.IntN(2500)) * time.Millisecond
		return crashTrigger{fmt.Sprintf("after %s", d), func(t *testing.T, h *crashHarness) { <-time.After(d) }}
	default:
		return crashTrigger{"a lane final", func(t *testing.T, h *crashHarness) {
			target := 1
			h.c.read(func(v *faultView) {
				for s, n := range v.lanes() {
					if s.Final() {
						target += n
					}
				}
			})
			h.c.waitUntil(h.plan.limit, "one more final lane", func(v *faultView) bool {
				final := 0
				for s, n := range v.lanes() {
					if s.Final() {
						final += n
					}
				}
				return final >= target || v.final(h.runs...)
			})
		}}
	}
}

// TestFaultsEngineCrashChaos runs the randomized matrix and logs the
// counts table row of docs/GUARANTEES.md.
func TestFaultsEngineCrashChaos(t *testing.T) {
	rounds := chaosEnvInt(t, "SY_CHAOS_ROUNDS", 3)
	kills := chaosEnvInt(t, "SY_CHAOS_KILLS", 8)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SY_CHAOS_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("chaos: seed %d, %d rounds, %d kills each (SY_CHAOS_SEED=%d reruns it)", seed, rounds, kills, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var total crashCounts
	for round := range rounds {
		plan := crashPlan{runs: 5, seats: 10, workers: 2, concurrency: 3, limit: 3 * time.Minute}
		// Submissions are spread over the kills: the CLI run first, the
		// others before randomly chosen kills (or at the end).
		submits := 4
		for i := range kills {
			tr := randomTrigger(rng)
			if submits > 0 && (rng.IntN(2) == 0 || kills-i <= submits) {
				submits--
				if tr.name != killOnSubmit().name {
					tr = submitThen(tr)
				}
			} else if tr.name == killOnSubmit().name {
				tr = killWhenLaunchedAndRunning()
			}
			plan.kills = append(plan.kills, tr)
		}
		var c crashCounts
		ok := t.Run(fmt.Sprintf("round-%d", round+1), func(t *testing.T) {
			c = runCrashPlan(t, plan)
			t.Logf("round %d: runs=%d lanes=%d kills=%d executions=%d starts=%d events=%d double-launches=%d lost-events=%d duplicates=%d max-restart=%s wall=%s phases{%s}",
				round+1, c.Runs, c.Lanes, c.Kills, c.Executions, c.Workloads, c.Events, c.DoubleLaunches, c.LostEvents, c.Duplicates,
				c.MaxRestart.Round(time.Millisecond), c.Wall.Round(time.Millisecond), c.Phases)
		})
		if !ok {
			t.Fatalf("round %d failed (seed %d)", round+1, seed)
		}
		total.Runs += c.Runs
		total.Lanes += c.Lanes
		total.Kills += c.Kills
		total.Executions += c.Executions
		total.Workloads += c.Workloads
		total.Events += c.Events
		total.DoubleLaunches += c.DoubleLaunches
		total.LostEvents += c.LostEvents
		total.Duplicates += c.Duplicates
		total.Phases.Created += c.Phases.Created
		total.Phases.Launching += c.Phases.Launching
		total.Phases.Running += c.Phases.Running
		total.Phases.QueuedReports += c.Phases.QueuedReports
		total.Phases.Final += c.Phases.Final
		total.Orphans += c.Orphans
		total.MaxRestart = max(total.MaxRestart, c.MaxRestart)
		total.Wall += c.Wall
	}
	host, _ := os.Hostname()
	t.Logf("chaos table row: | engine crash (serve SIGKILL) | %d | %d | %d | %d | %d | %d | %d | %s |",
		total.Runs, total.Kills, total.Lanes, total.Executions, total.DoubleLaunches, total.LostEvents, total.Duplicates, total.Wall.Round(time.Second))
	t.Logf("chaos: phases at the kills summed over lanes: %s; prepared executions never launched %d; events %d; max serve restart %s; seed %d; host %s",
		total.Phases, total.Orphans, total.Events, total.MaxRestart.Round(time.Millisecond), seed, host)
}
