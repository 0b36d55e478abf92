package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// Engine creates runs and drives them. One Engine value serves both roles:
// a process that calls Run drives every non-final run in the store; any
// process (the CLI talking to `switchyard serve`, a parent harness) can
// call Submit, the control inputs, Status, Report, Wait and the native
// methods against the same store and queue.
//
// An Engine is safe for concurrent use. Run may be active at most once per
// Engine at a time.
type Engine struct {
	cfg     Config
	ctl     events.ControlQueue
	log     *slog.Logger
	running atomic.Bool
	gitMu   sync.Mutex // serializes git worktree commands of this process
}

// New validates cfg and returns an Engine with defaults applied.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(cfg.DataDir); err == nil {
		cfg.DataDir = real
	}
	return &Engine{cfg: cfg, ctl: cfg.Queue.(events.ControlQueue), log: cfg.Logger}, nil
}

// Run drives every non-final run until ctx is done, then returns nil once
// every run's goroutine has stopped. It finds the runs already in the store
// (resuming each from its log: jobs whose publication may have been lost
// are published again under the same execution id, pending decisions are
// taken), then watches the store for run-created events appended by any
// process. Each run is driven by one goroutine: it consumes the run's
// worker reports and control inputs in order, records each as events, and
// decides every lane that is due. Errors inside a run (a lost connection,
// a conflicting writer) are logged and the run is reloaded from its log
// and resumed; Run itself fails only if it cannot list or watch the store.
func (e *Engine) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("engine: Run is already active on this Engine")
	}
	defer e.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	defer wg.Wait()
	// Reports that reach a run after run-final are watched from here on,
	// before the store is listed, so none falls between the two.
	late := newLateReports(e)
	reportsAt, err := e.cfg.Queue.LastReportSeq(ctx, "")
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("engine: read the reports stream: %w", err)
	}
	hub := newReportHub(e, late, reportsAt)
	wg.Add(2)
	go func() {
		defer wg.Done()
		hub.run(ctx)
	}()
	go func() {
		defer wg.Done()
		late.loop(ctx)
	}()
	seen := map[string]bool{}
	start := func(run string) {
		if seen[run] {
			return
		}
		seen[run] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.drive(ctx, run, hub)
		}()
	}

	after, unindexed, err := e.discover(ctx, start, seen, late)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	watch, err := e.watchRuns(ctx, after)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("engine: watch the store: %w", err)
	}
	// A run created between the first listing and the watch's start point
	// is listed now; later ones arrive on the watch.
	ids, err := e.cfg.Store.Runs(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("engine: list runs: %w", err)
	}
	for _, id := range ids {
		start(id)
	}
	e.log.Info("engine running", "runs", len(seen), "watchAfter", after)
	if len(unindexed) > 0 {
		// Final runs the index lacks get their entries from their logs,
		// beside the drivers (until then ListRuns reads their logs).
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.log.Info("rebuilding the run index from the log", "runs", len(unindexed))
			for _, id := range unindexed {
				if _, err := e.indexFromLog(ctx, id); err != nil && ctx.Err() == nil {
					e.log.Warn("run index entry not rebuilt", "run", id, "err", err)
				}
			}
		}()
	}

	// Never reset: once the store watch has ended a few times, each
	// restart waits up to 5 s.
	retry := events.Backoff{Min: 50 * time.Millisecond, Max: 5 * time.Second}
	for {
		select {
		case <-ctx.Done():
			return nil
		case env, ok := <-watch:
			if ok {
				after = max(after, env.Seq)
				if env.Type == events.TypeRunCreated {
					start(env.Run)
				}
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
			e.log.Warn("store watch ended; restarting it", "after", after)
			if !retry.Wait(ctx) {
				return nil
			}
			if watch, err = e.watchRuns(ctx, after); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("engine: watch the store: %w", err)
			}
		}
	}
}

// runLevelWatcher is a Store that can watch the run-level events of every
// run alone (events.JetStreamStore: the server filters out lane events).
type runLevelWatcher interface {
	WatchRunLevel(ctx context.Context, after uint64) (<-chan events.Envelope, error)
}

// watchRuns watches the store for new runs after sequence after: Run only
// looks for run-created, a run-level event, so a store that can leaves the
// lane events (most of the log) out of the watch instead of delivering and
// decoding each of them a second time.
func (e *Engine) watchRuns(ctx context.Context, after uint64) (<-chan events.Envelope, error) {
	if w, ok := e.cfg.Store.(runLevelWatcher); ok {
		return w.WatchRunLevel(ctx, after)
	}
	return e.cfg.Store.Watch(ctx, "", after)
}

// discover starts a driver for every listed run whose run-level log does not
// end with run-final (or an audit recorded after it), marks the others seen
// and has late check them for reports that arrived after run-final, and
// returns the highest sequence it read: the watch for new runs starts after
// it.
func (e *Engine) discover(ctx context.Context, start func(string), seen map[string]bool, late *lateReports) (uint64, []string, error) {
	ids, err := e.cfg.Store.Runs(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("engine: list runs: %w", err)
	}
	// Final runs the index knows need no read at all; every other run's
	// newest run-level event says whether it is final (and a final one
	// without an entry gets it: the index is rebuilt from the log).
	idx := e.finalRuns(ctx)
	var after uint64
	var unindexed []string
	for _, id := range ids {
		if f, ok := idx[id]; ok {
			after = max(after, f.Seq)
			seen[id] = true
			late.check(id, f.ReportsThrough)
			continue
		}
		last, err := e.cfg.Store.Last(ctx, id, events.RunLane)
		if err != nil {
			return 0, nil, fmt.Errorf("engine: last event of run %s: %w", id, err)
		}
		after = max(after, last.Seq)
		final := last.Type == events.TypeRunFinal
		if last.Type == events.TypeAudit {
			// An audit recorded after run-final, or one of an open run
			// (a malformed report): the log says which.
			r, _, err := e.load(ctx, id)
			switch {
			case errors.Is(err, ErrInconsistentLog):
				// Its driver says so and leaves it.
			case err != nil:
				return 0, nil, fmt.Errorf("engine: %w", err)
			default:
				final = r.Closed != nil
			}
		}
		if final {
			seen[id] = true
			late.check(id, last.ReportSeq())
			if idx != nil {
				unindexed = append(unindexed, id)
			}
			continue
		}
		start(id)
	}
	return after, unindexed, nil
}

// load folds a run's whole log. It also returns the envelopes, for the
// callers that look at payloads the fold does not keep.
func (e *Engine) load(ctx context.Context, run string) (*machines.Run, []events.Envelope, error) {
	if err := events.ValidateRunID(run); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnknownRun, err)
	}
	envs, err := e.cfg.Store.LoadRun(ctx, run)
	if err != nil {
		return nil, nil, fmt.Errorf("load run %s: %w", run, err)
	}
	if len(envs) == 0 {
		return nil, nil, fmt.Errorf("run %s: %w", run, ErrUnknownRun)
	}
	r, err := machines.FoldRun(envs)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w: %w", run, ErrInconsistentLog, err)
	}
	return r, envs, nil
}
