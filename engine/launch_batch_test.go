package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestPanelLaunchesPreparedSideBySide: the lanes one pass launches have
// their files prepared side by side and are recorded in lane order, each
// once; when one lane's preparation fails (its execution directory already
// exists), the launches before it are recorded, the session reloads, the
// lanes after it are launched afresh under new ids, what was prepared for
// them and never launched is removed before run-final, and no execution
// is ever published without its launch recorded.
func TestPanelLaunchesPreparedSideBySide(t *testing.T) {
	t.Parallel()
	const lanes = 6
	h := newHarness(t, jetstream, withIDs("batch"))
	seats := slices.Repeat([]string{"codex:gpt-5.6-sol@high"}, lanes)
	run := h.submit(sheet("", "arena runners: "+joinSeats(seats)), "arena runners", policy.ReadOnly)
	laneDir := func(lane int) string { return filepath.Join(h.data, "runs", run, events.LaneToken(lane)) }
	// The ids the first pass draws, in lane order, follow the run's own.
	require.Equal(t, "batch-0001", run)
	blocked := filepath.Join(laneDir(2), "batch-0004")
	require.NoError(t, os.MkdirAll(blocked, 0o700))

	h.run()
	h.startWorker(map[string]string{"codex": "success"})
	r, envs := h.waitFinal(run)

	var launched []string
	var order []int
	for _, e := range ofType(envs, events.TypeLaunch) {
		l := e.Payload.(events.Launch)
		launched = append(launched, l.ExecutionID)
		order = append(order, e.Lane)
		require.FileExists(t, l.Paths.Prompt, "a recorded launch has its prompt copy")
	}
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, order, "one launch a lane, in lane order:\n%s", dump(envs))
	require.Equal(t, []string{"batch-0002", "batch-0003"}, launched[:2], "the launches before the failed one are recorded")
	require.NotContains(t, launched, "batch-0004")
	for i := range lanes {
		require.Equal(t, machines.StateComplete, r.Lanes[i].State)
	}
	for _, id := range []string{"batch-0004", "batch-0005", "batch-0006", "batch-0007"} {
		require.NotContains(t, launched, id)
	}
	// Each lane directory holds exactly its launched execution: the
	// prepared, never launched ones (and the empty one that blocked
	// lane 2) were removed before run-final.
	for i := range lanes {
		entries, err := os.ReadDir(laneDir(i))
		require.NoError(t, err)
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		require.Equal(t, []string{launched[i]}, names, "lane %d", i)
	}
	h.verifyReplay(run)
}

func joinSeats(seats []string) string {
	out := ""
	for i, s := range seats {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
