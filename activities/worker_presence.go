package activities

import (
	"context"
	"os"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// announce keeps this worker's presence record fresh, every third of the
// store's TTL, until ctx is done; then it withdraws the record, so a
// worker that stops cleanly disappears from status at once (a crashed one
// expires after the TTL). Failures are logged and retried on the next
// beat: presence is advisory and never stops the worker.
func (w *Worker) announce(ctx context.Context) {
	host, _ := os.Hostname()
	rec := events.WorkerPresence{WorkerID: w.cfg.WorkerID, Providers: w.cfg.Providers, Concurrency: w.cfg.Concurrency,
		Host: host, PID: os.Getpid(), Started: w.cfg.Now().UTC()}
	if len(rec.Host) > events.MaxWorkerIDLen {
		rec.Host = ""
	}
	every := max(w.cfg.Presence.TTL()/3, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		actx, cancel := context.WithTimeout(ctx, max(every, time.Second))
		err := w.cfg.Presence.Announce(actx, rec)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.log.Warn("cannot announce this worker; status may not list it", "err", err)
			failing = true
		case err == nil && failing:
			w.log.Info("worker announced again")
			failing = false
		}
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
	}
}
