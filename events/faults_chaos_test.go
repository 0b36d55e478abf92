//go:build chaos

package events_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// TestFaultsEmbeddedServerCrashChaos repeats the embedded server crash at
// random points of the burst (SY_CHAOS_SERVER_KILLS per fsync policy,
// default 10; SY_CHAOS_SEED picks the points) and logs the counts row of
// docs/GUARANTEES.md.
func TestFaultsEmbeddedServerCrashChaos(t *testing.T) {
	kills := 10
	if v := os.Getenv("SY_CHAOS_SERVER_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SY_CHAOS_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0xc4a05))
	t.Logf("seed %d", seed)
	for _, fsync := range []events.FsyncPolicy{events.FsyncAlways, events.FsyncInterval} {
		var total serverCrashResult
		var maxRestart time.Duration
		for i := range kills {
			after := 1 + rng.IntN(5000)
			var r serverCrashResult
			if !t.Run(fmt.Sprintf("%s-%d-after-%d", fsync, i+1, after), func(t *testing.T) { r = crashBurst(t, fsync, 1+rng.IntN(8), after) }) {
				t.FailNow()
			}
			total.Acked += r.Acked
			total.AckedReports += r.AckedReports
			total.InFlight += r.InFlight
			total.Lost += r.Lost
			total.Duplicated += r.Duplicated
			maxRestart = max(maxRestart, r.Restart)
		}
		t.Logf("server table row: | embedded server SIGKILL, fsync=%s | %d | %d | %d events + %d reports acknowledged | %d stored unacknowledged (in flight) | lost %d | duplicated %d | max restart %s |",
			fsync, kills, kills, total.Acked, total.AckedReports, total.InFlight, total.Lost, total.Duplicated, maxRestart.Round(time.Millisecond))
		require.Zero(t, total.Lost)
		require.Zero(t, total.Duplicated)
	}
}
