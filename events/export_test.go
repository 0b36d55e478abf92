package events

import (
	"context"
	"time"
)

// OrderedAbandonProbe starts an ordered reader on the events stream for
// filter, abandons its consumer while its Next waits, and says whether the pump stopped its own iterator (the path
// that cannot race a consumer re-creation in nats.go, see
// orderedPump.abandon).
func OrderedAbandonProbe(ctx context.Context, j *JetStream, filter string) (stoppedByPump bool, err error) {
	r, err := newOrderedReader(ctx, j, j.events, EventsStream, 0, filter)
	if err != nil {
		return false, err
	}
	p := r.cur
	// Wait until the pump holds its iterator: it calls Next right after,
	// and waits there (nothing matches filter).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		held := p.it != nil
		p.mu.Unlock()
		if held {
			break
		}
		if time.Now().After(deadline) {
			r.stop()
			return false, context.DeadlineExceeded
		}
	}
	r.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped, nil
}

// SetDirectBatch makes j's batched direct gets ask for n events at a time.
func SetDirectBatch(j *JetStream, n int) { j.directBatch = n }

// ReadDirect is s's batched direct-get read of filter alone, without the
// consumer read it falls back to.
func ReadDirect(ctx context.Context, s *JetStreamStore, filter string) ([]Envelope, error) {
	return s.readDirect(ctx, filter)
}
