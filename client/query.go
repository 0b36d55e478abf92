package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

type (
	// RunList is a selection of the stored runs, newest first.
	RunList = engine.RunList
	// ReplayResult is a replay of a run's log against its recorded
	// decisions.
	ReplayResult = engine.ReplayResult
	// CapacityReport is a provider's current capacity (quota) report, as
	// workers put it.
	CapacityReport = policy.CapacityReport
	// Worker is a live worker's presence record: its id, providers,
	// concurrency, host, pid, start and when it was last seen.
	Worker = events.WorkerPresence
	// NativeJob is a native launch a parent must perform itself.
	NativeJob = engine.NativeJob
	// Outcome is a native execution's normalized outcome.
	Outcome = policy.Outcome
)

// ListFilter selects runs for List. The zero value selects every run.
type ListFilter struct {
	// Open selects runs that are not final; Final selects final ones
	// (both or neither: every run).
	Open, Final bool
	// Role selects runs of this role ("" any). A final run's role is
	// read from its log.
	Role string
	// Limit is the most runs returned, newest first (0: no limit).
	Limit int
}

// List returns the stored runs the filter selects, newest first.
func (c *Client) List(ctx context.Context, f ListFilter) (RunList, error) {
	if f.Limit < 0 {
		return RunList{}, &InvalidInputError{Field: "Limit", Reason: "want 0 (no limit) or more"}
	}
	match := func(st RunStatus) bool {
		if f.Open != f.Final && st.Final != f.Final {
			return false
		}
		return true
	}
	list, err := c.eng.ListRuns(ctx, match, 0)
	if err != nil {
		return RunList{}, mapError(err, "")
	}
	if f.Role != "" {
		// An indexed final run's status carries no role in match: filter
		// the full statuses ListRuns returns.
		kept := list.Runs[:0]
		for _, st := range list.Runs {
			if st.Role == f.Role {
				kept = append(kept, st)
			}
		}
		list.Runs, list.Matched = kept, len(kept)
	}
	if f.Limit > 0 && len(list.Runs) > f.Limit {
		list.Runs = list.Runs[:f.Limit]
	}
	return list, nil
}

// ErrDiverged: Replay with verify found that the run's log does not
// replay to its recorded decisions (the result says where).
var ErrDiverged = errors.New("switchyard: replay diverges from the log")

// Replay replays run's log and recomputes every decision. With verify, a
// divergence is an error wrapping ErrDiverged (the result is returned
// with it).
func (c *Client) Replay(ctx context.Context, run string, verify bool) (ReplayResult, error) {
	res, err := engine.Replay(ctx, c.conn.JetStream().Store(), run, policy.DefaultOptions())
	if err != nil {
		return res, mapError(err, "")
	}
	if verify && !res.Verified {
		return res, fmt.Errorf("run %s: %w", run, ErrDiverged)
	}
	return res, nil
}

// Usage returns every provider's current capacity report, as the workers
// last put them.
func (c *Client) Usage(ctx context.Context) ([]CapacityReport, error) {
	reps, err := c.conn.JetStream().Capacity().List(ctx)
	return reps, mapError(err, "")
}

// Workers returns the live workers (their presence records, announced
// within the presence TTL), sorted by worker id.
func (c *Client) Workers(ctx context.Context) ([]Worker, error) {
	ws, err := c.conn.JetStream().Presence().Live(ctx)
	return ws, mapError(err, "")
}

// NativeNext claims the next native launch waiting for parent (a lane
// whose attempt the parent harness must perform itself); nil when there is
// none. With wait it waits for one until ctx ends.
func (c *Client) NativeNext(ctx context.Context, parent string, wait bool) (*NativeJob, error) {
	p, err := policy.ParseParent(parent)
	if err != nil {
		return nil, invalid("Parent", err)
	}
	job, err := c.eng.NativeNext(ctx, p, wait)
	return job, mapError(err, "")
}

// NativeReport reports a native execution's outcome. processStarted says
// whether the native process started (nil: unknown); evidenceRef names
// the evidence.
func (c *Client) NativeReport(ctx context.Context, executionID string, outcome Outcome, processStarted *bool, evidenceRef string) error {
	return mapError(c.eng.NativeReport(ctx, executionID, outcome, processStarted, evidenceRef), "")
}
