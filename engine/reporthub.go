package engine

import (
	"context"
	"slices"
	"sync"

	"github.com/switchyard-dev/switchyard/events"
)

// reportHub is the engine's one watch of every run's reports. It hands
// each report to the driver of its run when one here waits for it,
// decoded once, and each report's mark to the late-report catch-up, which
// it replaces the watch of. Before it, every driver session opened its own
// consumer of its run's reports: a consumer created and deleted on the
// server for every run, the largest share of serve's JetStream API work
// in the peers benchmark (docs/PERFORMANCE.md).
//
// The watch starts at the reports stream's end when the engine starts and
// never skips a sequence: when it ends, it resumes after the last report it
// handed on. A driver that subscribes is handed every report of its run
// past the watch's position at that moment; the reports of its run
// between its own mark and that position are read by the run's own
// consumer instead (subscribe), which only a resumed run needs.
type reportHub struct {
	e    *Engine
	late *lateReports

	mu   sync.Mutex
	at   uint64 // the watch hands on every report past at (and has handed on those up to it)
	subs map[string][]*reportSub
}

// reportSub is one driver session's subscription: the reports of its run
// the watch handed on and the session has not taken yet.
type reportSub struct {
	after uint64
	queue []events.ReportDelivery // under reportHub.mu
	wake  chan struct{}
}

func newReportHub(e *Engine, late *lateReports, at uint64) *reportHub {
	return &reportHub{e: e, late: late, at: at, subs: map[string][]*reportSub{}}
}

// run follows every run's reports from the hub's position until ctx is
// done, restarting the watch after a backoff when it ends.
func (h *reportHub) run(ctx context.Context) {
	retry := events.Backoff{Min: lateRetryMin, Max: lateRetryMax}
	for ctx.Err() == nil {
		h.mu.Lock()
		after := h.at
		h.mu.Unlock()
		ch, err := h.late.watchMarks(ctx, after)
		if err == nil {
			for m := range ch {
				h.hand(m)
				retry.Reset()
			}
		}
		if ctx.Err() != nil {
			return
		}
		h.e.log.Warn("watch of every run's reports ended; restarting it", "after", after, "err", err)
		if !retry.Wait(ctx) {
			return
		}
	}
}

// hand passes one report on: to its run's subscribed sessions, and its
// mark to the late-report catch-up.
func (h *reportHub) hand(m events.ReportMark) {
	h.mu.Lock()
	if m.Seq <= h.at {
		h.mu.Unlock()
		return // a restarted watch's repeat
	}
	h.at = m.Seq
	if subs := h.subs[m.Run]; len(subs) > 0 {
		rd := m.Delivery()
		for _, s := range subs {
			if rd.Seq > s.after {
				s.queue = append(s.queue, rd)
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
	}
	h.mu.Unlock()
	h.late.seen(m.Run)
}

// subscribe is Queue.SubscribeReports for a driver session: every report
// of run after after, in order, until ctx is done. When the run may hold
// reports between after and the watch's position (a resumed run whose
// newest report is past after), the run's own consumer reads them, as
// before the hub; a run with none there (every new run) is served by the
// watch alone.
func (h *reportHub) subscribe(ctx context.Context, run string, after uint64) (<-chan events.ReportDelivery, error) {
	s := &reportSub{after: after, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	at := h.at
	h.subs[run] = append(h.subs[run], s)
	h.mu.Unlock()
	if after < at {
		// Every report of run up to at went by before s was added: past
		// after, there must be none.
		last, err := h.e.cfg.Queue.LastReportSeq(ctx, run)
		if err != nil || last > after {
			h.drop(run, s)
			if err != nil {
				return nil, err
			}
			return h.e.cfg.Queue.SubscribeReports(ctx, run, after)
		}
	}
	out := make(chan events.ReportDelivery)
	go h.forward(ctx, run, s, out)
	return out, nil
}

// forward sends s's reports on out until ctx is done, then drops s.
func (h *reportHub) forward(ctx context.Context, run string, s *reportSub, out chan<- events.ReportDelivery) {
	defer close(out)
	defer h.drop(run, s)
	var batch []events.ReportDelivery
	for {
		h.mu.Lock()
		batch, s.queue = s.queue, batch[:0]
		h.mu.Unlock()
		for _, rd := range batch {
			select {
			case out <- rd:
			case <-ctx.Done():
				return
			}
		}
		clear(batch)
		if len(batch) > 0 {
			continue
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		}
	}
}

func (h *reportHub) drop(run string, s *reportSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := slices.DeleteFunc(h.subs[run], func(x *reportSub) bool { return x == s })
	if len(subs) == 0 {
		delete(h.subs, run)
	} else {
		h.subs[run] = subs
	}
}
