package events

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

var _ Caps = (*MemoryQueue)(nil)

// SetProviderCaps implements Caps.
func (q *MemoryQueue) SetProviderCaps(ctx context.Context, caps map[policy.Provider]int) error {
	if err := ValidateProviderCaps(caps); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(caps)) {
		mq := q.queue(JobSubject(string(p)))
		mq.cap = caps[p]
		mq.signal()
	}
	return nil
}

// ProviderCaps implements Caps. A provider's queue exists (Bound) once a
// job, a consumer or a cap named it.
func (q *MemoryQueue) ProviderCaps(ctx context.Context) ([]CapInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	infos := map[policy.Provider]CapInfo{}
	for subject, mq := range q.queues {
		if p, ok := providerOfSubject(subject); ok {
			infos[p] = CapInfo{Provider: p, Cap: mq.cap, InFlight: mq.inFlight(now), Queued: mq.queued(), Bound: true}
		}
	}
	return sortCaps(infos), nil
}
