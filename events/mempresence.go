package events

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemoryPresence is the in-memory Presence; records expire by the clock
// given to NewMemoryPresence.
type MemoryPresence struct {
	mu      sync.Mutex
	now     func() time.Time
	ttl     time.Duration
	workers map[string]WorkerPresence // Seen is the announcement time
}

var _ Presence = (*MemoryPresence)(nil)

// NewMemoryPresence returns an empty MemoryPresence whose records live for
// ttl (0: DefaultPresenceTTL); now (nil: time.Now) is its clock.
func NewMemoryPresence(ttl time.Duration, now func() time.Time) *MemoryPresence {
	if ttl <= 0 {
		ttl = DefaultPresenceTTL
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryPresence{now: now, ttl: ttl, workers: map[string]WorkerPresence{}}
}

// Announce implements Presence.
func (p *MemoryPresence) Announce(ctx context.Context, w WorkerPresence) error {
	if err := validatePresence(w); err != nil {
		return err
	}
	r := w.record()
	w = WorkerPresence{WorkerID: r.WorkerID, Providers: append(r.Providers[:0:0], r.Providers...), Concurrency: r.Concurrency,
		Host: r.Host, PID: r.PID, NoCLI: slices.Clone(r.NoCLI), Started: r.Started, Seen: p.now().UTC()}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.workers[w.WorkerID] = w
	return nil
}

// Withdraw implements Presence.
func (p *MemoryPresence) Withdraw(ctx context.Context, workerID string) error {
	if err := ValidateWorkerID(workerID); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.workers, workerID)
	return nil
}

// Live implements Presence.
func (p *MemoryPresence) Live(ctx context.Context) ([]WorkerPresence, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	out := make([]WorkerPresence, 0, len(p.workers))
	for id, w := range p.workers {
		if now.Sub(w.Seen) >= p.ttl {
			delete(p.workers, id)
			continue
		}
		out = append(out, w)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].WorkerID < out[b].WorkerID })
	return out, nil
}

// TTL implements Presence.
func (p *MemoryPresence) TTL() time.Duration { return p.ttl }
