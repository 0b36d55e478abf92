package activities

import (
	"context"
	"os"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// announceFirst announces this worker once and returns its record and
// whether the announcement failed (logged).
func (w *Worker) announceFirst(ctx context.Context) (events.WorkerPresence, bool) {
	host, _ := os.Hostname()
	rec := events.WorkerPresence{WorkerID: w.cfg.WorkerID, Providers: w.cfg.Providers, Concurrency: w.cfg.Concurrency,
		Host: host, PID: os.Getpid(), NoCLI: w.cfg.NoCLI, Started: w.cfg.Now().UTC()}
	if len(rec.Host) > events.MaxWorkerIDLen {
		rec.Host = ""
	}
	err := w.announceOnce(ctx, rec)
	if err != nil && ctx.Err() == nil {
		w.log.Warn("cannot announce this worker; status may not list it", "err", err)
	}
	return rec, err != nil
}

func (w *Worker) announceOnce(ctx context.Context, rec events.WorkerPresence) error {
	actx, cancel := context.WithTimeout(ctx, max(w.presenceEvery(), time.Second))
	defer cancel()
	return w.cfg.Presence.Announce(actx, rec)
}

// presenceEvery is a third of the presence store's TTL.
func (w *Worker) presenceEvery() time.Duration {
	return max(w.cfg.Presence.TTL()/3, 10*time.Millisecond)
}

// announce keeps this worker's presence record fresh, every third of the
// store's TTL, until ctx is done; then it withdraws the record, so a
// worker that stops cleanly disappears from status at once (a crashed one
// expires after the TTL). Failures are logged once and retried on the
// next beat: presence is advisory and never stops the worker.
func (w *Worker) announce(ctx context.Context, rec events.WorkerPresence, failing bool) {
	t := time.NewTicker(w.presenceEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if err := w.cfg.Presence.Withdraw(wctx, w.cfg.WorkerID); err != nil {
				w.log.Debug("presence not withdrawn; it expires by itself", "err", err)
			}
			cancel()
			return
		case <-t.C:
		}
		err := w.announceOnce(ctx, rec)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.log.Warn("cannot announce this worker; status may not list it", "err", err)
			failing = true
		case err == nil && failing:
			w.log.Info("worker announced again")
			failing = false
		}
	}
}
