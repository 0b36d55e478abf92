package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
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

// publishingQueue records the jobs published through it, in the order
// their publications completed, and fails the first publication of
// failLane's job (failLane < 0: none).
type publishingQueue struct {
	events.Queue
	failLane int
	mu       sync.Mutex
	failed   bool
	order    []events.Job
}

func (q *publishingQueue) PublishControl(ctx context.Context, c events.Control) (uint64, error) {
	return q.Queue.(events.ControlQueue).PublishControl(ctx, c)
}

func (q *publishingQueue) PublishJob(ctx context.Context, subject string, job events.Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if job.Lane == q.failLane && !q.failed {
		q.failed = true
		return errors.New("injected: the jobs stream did not acknowledge")
	}
	if err := q.Queue.PublishJob(ctx, subject, job); err != nil {
		return err
	}
	q.order = append(q.order, job)
	return nil
}

// TestPanelJobsPublishedInLaneOrder: the jobs of a pass's launches are
// published in the background, each after its launch is recorded, and
// reach the queue in lane order; a publication that fails is published
// again, under the same execution id, by the session that reloads, and
// the lane still runs once.
func TestPanelJobsPublishedInLaneOrder(t *testing.T) {
	t.Parallel()
	for _, failLane := range []int{-1, 2} {
		t.Run(fmt.Sprintf("fail=%d", failLane), func(t *testing.T) {
			t.Parallel()
			const lanes = 6
			var q *publishingQueue
			h := newHarness(t, jetstream, func(h *harness, c *engine.Config) {
				q = &publishingQueue{Queue: c.Queue, failLane: failLane}
				c.Queue = q
			})
			seats := slices.Repeat([]string{"codex:gpt-5.6-sol@high"}, lanes)
			run := h.submit(sheet("", "arena runners: "+joinSeats(seats)), "arena runners", policy.ReadOnly)
			h.run()
			h.startWorker(map[string]string{"codex": "success"})
			r, envs := h.waitFinal(run)
			launches := ofType(envs, events.TypeLaunch)
			require.Len(t, launches, lanes, "one launch a lane:\n%s", dump(envs))
			for i := range lanes {
				require.Equal(t, machines.StateComplete, r.Lanes[i].State)
			}
			q.mu.Lock()
			defer q.mu.Unlock()
			var lanesOrder []int
			for _, job := range q.order {
				lanesOrder = append(lanesOrder, job.Lane)
				require.Equal(t, launches[job.Lane].Payload.(events.Launch).ExecutionID, job.ExecutionID,
					"lane %d's job is its recorded execution", job.Lane)
			}
			if failLane < 0 {
				require.Equal(t, []int{0, 1, 2, 3, 4, 5}, lanesOrder)
			} else {
				require.True(t, q.failed)
				require.Equal(t, []int{0, 1, 3, 4, 5}, lanesOrder[:5], "the jobs after the failed one are still published, in order")
				// The reloaded session publishes every launching execution
				// again (the same ids: the jobs stream keeps one of each),
				// the failed one among them.
				require.Contains(t, lanesOrder[5:], 2, "the failed job is published again after the reload")
			}
			for _, e := range envs {
				require.NotEqual(t, events.TypeAudit, e.Type, "no redelivered or duplicate report: %v", e.Payload)
			}
			h.verifyReplay(run)
		})
	}
}
