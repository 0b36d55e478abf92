package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// The engine keeps the run index (events.RunIndex): an entry per final
// run, written by the run's driver once run-final is stored, and by the
// engine's start for every final run found without one (a store from
// before the index, a write that failed, a damaged or deleted bucket). The
// engine's start and ListRuns read the index instead of every final run's
// log, so both cost about the same at 10,000 final runs as at 10. Open
// runs and runs the index lacks are always read from their logs.

// runIndex is the store's run index, or nil when the store has none.
func (e *Engine) runIndex() events.RunIndex {
	ix, _ := e.cfg.Store.(events.RunIndex)
	return ix
}

// indexFinal writes the index entry and status snapshot of final run r,
// whose whole log as folded is envs. A failure is logged and left: the
// run is then read from its log until the engine's next start writes it.
func (e *Engine) indexFinal(ctx context.Context, r *machines.Run, envs []events.Envelope) {
	ix := e.runIndex()
	if ix == nil || r == nil || r.Closed == nil || len(envs) == 0 {
		return
	}
	f := events.FinalRun{Run: r.ID, Created: envs[0].Time, Cancelled: r.Cancel != nil, Seq: r.Seq, ReportsThrough: handledMark(envs)}
	for _, env := range envs {
		if env.Lane == events.RunLane && env.Seq == r.Seq {
			f.Updated = env.Time
		}
	}
	status, err := json.Marshal(statusOf(r, envs))
	if err == nil && len(status) > events.MaxMessageBytes-64 {
		status = nil // too large to keep: ListRuns folds its log
	}
	if err == nil {
		err = ix.PutFinalRun(ctx, f, status)
	}
	if err != nil && ctx.Err() == nil {
		e.log.Warn("run index entry not written; the run is read from its log until the engine's next start writes it", "run", r.ID, "err", err)
	}
}

// indexFromLog folds run's log and, when it is final, writes its entry.
// It reports whether the run is final.
func (e *Engine) indexFromLog(ctx context.Context, run string) (bool, error) {
	r, envs, err := e.load(ctx, run)
	if err != nil {
		return false, err
	}
	if r.Closed == nil {
		return false, nil
	}
	e.indexFinal(ctx, r, envs)
	return true, nil
}

// indexedStatus is final run's status from its index snapshot, when the
// snapshot is of the run's newest run-level event (nothing was appended
// since: a final run's lanes take no more events). ok false: read the log.
func (e *Engine) indexedStatus(ctx context.Context, ix events.RunIndex, run string) (RunStatus, bool) {
	seq, raw, err := ix.FinalRunStatus(ctx, run)
	if err != nil {
		return RunStatus{}, false
	}
	last, err := e.cfg.Store.Last(ctx, run, events.RunLane)
	if err != nil || last.Seq != seq {
		return RunStatus{}, false
	}
	var st RunStatus
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil || dec.More() || st.Run != run || !st.Final {
		return RunStatus{}, false
	}
	return st, true
}

// finalRuns reads the index for the engine's start and ListRuns: nil (read
// every run from its log) when the store has no index or it cannot be
// read.
func (e *Engine) finalRuns(ctx context.Context) map[string]events.FinalRun {
	ix := e.runIndex()
	if ix == nil {
		return nil
	}
	idx, bad, err := ix.FinalRuns(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("run index unreadable; reading every run's log", "err", err)
		}
		return nil
	}
	if bad > 0 {
		e.log.Warn("run index entries that do not decode are ignored (their runs are read from their logs, and the engine's start rewrites them)", "entries", bad)
	}
	return idx
}

// RunList is a selection of the stored runs (ListRuns).
type RunList struct {
	// Runs are the selected runs, newest first (by creation, then run id
	// descending), each as its log stands.
	Runs []RunStatus
	// Matched counts the runs that matched before the limit cut the list;
	// Total counts every run whose log folds.
	Matched, Total int
	// Open are every run that is not final, as its log stands.
	Open []RunStatus
}

// ListRuns selects the stored runs that match (nil: all), newest first,
// at most limit of them (0: no limit). Final runs the index knows are
// matched and ordered by their entries, and only the selected ones are
// read: from their snapshot when their log has not moved since it was
// taken, else from their log; every other run (open, or not yet indexed)
// is read from its log. So the statuses returned are always the logs', and
// a missing or stale index costs time, never a wrong answer: an entry
// exists only for a run whose run-final is stored, and a final run stays
// final.
//
// match sees, for an indexed final run, a RunStatus with only Run, Created,
// Updated, Final (true) and Cancelled set: it must decide on those alone
// for final runs.
func (e *Engine) ListRuns(ctx context.Context, match func(RunStatus) bool, limit int) (RunList, error) {
	ids, err := e.cfg.Store.Runs(ctx)
	if err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	idx := e.finalRuns(ctx)
	var out RunList
	cands := make([]RunStatus, 0, len(ids))
	full := make(map[string]bool, len(ids))
	for _, id := range ids {
		if f, ok := idx[id]; ok {
			cands = append(cands, RunStatus{Run: id, Created: f.Created, Updated: f.Updated, Final: true, Cancelled: f.Cancelled})
			continue
		}
		st, err := e.Status(ctx, id)
		if errors.Is(err, ErrInconsistentLog) {
			e.log.Warn("run log does not fold", "run", id, "err", err)
			continue
		}
		if err != nil {
			return RunList{}, err
		}
		full[id] = true
		cands = append(cands, st)
		if !st.Final {
			out.Open = append(out.Open, st)
		}
	}
	out.Total = len(cands)
	sel := cands[:0:0]
	for _, c := range cands {
		if match == nil || match(c) {
			sel = append(sel, c)
		}
	}
	slices.SortStableFunc(sel, func(a, b RunStatus) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return cmp.Compare(b.Run, a.Run)
	})
	out.Matched = len(sel)
	if limit > 0 && len(sel) > limit {
		sel = sel[:limit]
	}
	out.Runs = make([]RunStatus, 0, len(sel))
	ix := e.runIndex()
	for _, c := range sel {
		if !full[c.Run] {
			if st, ok := e.indexedStatus(ctx, ix, c.Run); ok {
				out.Runs = append(out.Runs, st)
				continue
			}
			st, err := e.Status(ctx, c.Run)
			if errors.Is(err, ErrInconsistentLog) {
				e.log.Warn("run log does not fold", "run", c.Run, "err", err)
				continue
			}
			if err != nil {
				return RunList{}, err
			}
			c = st
		}
		out.Runs = append(out.Runs, c)
	}
	return out, nil
}
