package activities

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// heartbeat keeps one execution's lease renewed and its delivery's ack
// deadline extended.
type heartbeat struct {
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan chan error // an immediate beat, answered with its result
	mu     sync.Mutex
	lease  events.Lease
	lost   bool
}

// startHeartbeat beats every heartbeatInterval until stop: Delivery
// InProgress, then Renew. onLost runs once, from the heartbeat goroutine,
// when the lease turns out to be someone else's (abandoned by another
// worker); the heartbeat then ends. Other failures are logged and the
// next beat tries again: a worker briefly cut off from NATS keeps its
// attempt as long as nobody found its lease stale meanwhile.
func (w *Worker) startHeartbeat(ctx context.Context, log *slog.Logger, d *events.Delivery, lease events.Lease, onLost func()) *heartbeat {
	ctx, cancel := context.WithCancel(ctx)
	h := &heartbeat{cancel: cancel, done: make(chan struct{}), kick: make(chan chan error), lease: lease}
	go func() {
		defer close(h.done)
		t := time.NewTicker(w.heartbeatInterval())
		defer t.Stop()
		for {
			var reply chan error
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case reply = <-h.kick:
			}
			err := w.beat(ctx, log, d, h)
			if reply != nil {
				reply <- err
			}
			if errors.Is(err, events.ErrLeaseLost) {
				onLost()
				return
			}
		}
	}()
	return h
}

// beat is one InProgress and one Renew. A Renew refused with ErrLeaseLost
// may be this worker's own earlier renewal that was stored although its
// answer was lost: the claim is looked at, and one still held by this
// worker is kept.
func (w *Worker) beat(ctx context.Context, log *slog.Logger, d *events.Delivery, h *heartbeat) error {
	if err := d.InProgress(ctx); err != nil && ctx.Err() == nil {
		w.retrying(log, "job in-progress failed; still running", "err", err)
	}
	cur := h.current()
	actx, cancel := context.WithTimeout(ctx, w.opTimeout())
	next, err := w.cfg.Claims.Renew(actx, cur)
	cancel()
	if errors.Is(err, events.ErrLeaseLost) {
		now, ierr := w.inspectOnce(ctx, cur.ExecutionID)
		switch {
		case ierr != nil:
			if ctx.Err() == nil {
				w.retrying(log, "lease renewal refused and the claim unreadable; looking again", "err", ierr)
			}
			return ierr
		case now.State == events.LeaseHeld && now.WorkerID == w.cfg.WorkerID:
			log.Info("an earlier renewal was stored after all; the lease is still ours")
			next, err = now, nil
		}
	}
	if err != nil && ctx.Err() == nil {
		w.observe(func(o Observer) { o.LeaseFailed(d.Job.Provider) })
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.lease = next
	case errors.Is(err, events.ErrLeaseLost):
		h.lost = true
	case ctx.Err() == nil:
		w.retrying(log, "lease renewal failed; still running", "err", err)
	}
	return err
}

// confirm renews the lease now, retrying other failures until ctx is
// done. It returns nil once renewed, or an error matching
// events.ErrLeaseLost if the claim is someone else's.
func (h *heartbeat) confirm(ctx context.Context) error {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	for {
		reply := make(chan error, 1)
		select {
		case h.kick <- reply:
		case <-h.done:
			if h.isLost() {
				return events.ErrLeaseLost
			}
			return errors.New("heartbeat stopped")
		case <-ctx.Done():
			return ctx.Err()
		}
		err := <-reply
		if err == nil || errors.Is(err, events.ErrLeaseLost) {
			return err
		}
		if !bo.Wait(ctx) {
			return ctx.Err()
		}
	}
}

func (h *heartbeat) current() events.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// isLost reports whether the lease was found taken over.
func (h *heartbeat) isLost() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// stop ends the heartbeat and returns the latest lease.
func (h *heartbeat) stop() events.Lease {
	h.cancel()
	<-h.done
	return h.current()
}

// heartbeatInterval is a third of the shorter of LeaseTTL and AckWait.
func (w *Worker) heartbeatInterval() time.Duration {
	return max(min(w.cfg.LeaseTTL, w.cfg.AckWait)/3, 5*time.Millisecond)
}

// opTimeout bounds one claims operation: long enough for a slow server,
// short enough that a hung call does not outlast the lease.
func (w *Worker) opTimeout() time.Duration {
	return min(max(w.cfg.LeaseTTL/3, 250*time.Millisecond), 5*time.Second)
}
