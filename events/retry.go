package events

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the wait between tries of a retry loop: it starts at Min,
// doubles after each wait up to Max, and each wait is jittered into
// [d/2, d] so that many processes retrying the same server (workers after a
// serve restart, engines after a leader loss) spread out instead of arriving
// together. The zero Backoff is not usable; give Min and Max (Min <= Max,
// both > 0). A Backoff is not safe for concurrent use: one per loop.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns the wait before the next try and advances the backoff.
func (b *Backoff) Next() time.Duration {
	if b.cur < b.Min {
		b.cur = b.Min
	}
	d := b.cur
	b.cur = min(2*b.cur, b.Max)
	return d/2 + rand.N(d/2+1)
}

// Current is the upper bound of the next wait (before jitter), for logs.
func (b *Backoff) Current() time.Duration { return max(b.cur, b.Min) }

// Reset starts the backoff again at Min, after a success.
func (b *Backoff) Reset() { b.cur = b.Min }

// Wait sleeps Next() or until ctx is done; it reports whether ctx is still
// live.
func (b *Backoff) Wait(ctx context.Context) bool { return Sleep(ctx, b.Next()) }

// Sleep waits d or until ctx is done; it reports whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
