package events

import (
	"context"
	"sync"
	"time"
)

// MemoryClaims is the in-memory Claims. Revisions are global, like a KV
// bucket's; RenewedAt comes from the clock given to NewMemoryClaims.
type MemoryClaims struct {
	mu     sync.Mutex
	now    func() time.Time
	rev    uint64
	claims map[string]memClaim
}

type memClaim struct {
	lease Lease // RenewedAt unset.
	at    time.Time
}

var _ Claims = (*MemoryClaims)(nil)

// NewMemoryClaims returns an empty MemoryClaims; now (nil: time.Now) stamps
// each revision.
func NewMemoryClaims(now func() time.Time) *MemoryClaims {
	if now == nil {
		now = time.Now
	}
	return &MemoryClaims{now: now, claims: map[string]memClaim{}}
}

// Claim implements Claims.
func (c *MemoryClaims) Claim(ctx context.Context, executionID, workerID string, ttl time.Duration) (Lease, error) {
	if err := validateClaim(executionID, workerID, ttl); err != nil {
		return Lease{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.claims[executionID]; ok {
		return Lease{}, claimedErr(executionID)
	}
	c.rev++
	l := Lease{ExecutionID: executionID, WorkerID: workerID, State: LeaseHeld, TTL: ttl.Truncate(time.Millisecond), Revision: c.rev}
	c.claims[executionID] = memClaim{lease: l, at: c.now()}
	return l, nil
}

// Renew implements Claims.
func (c *MemoryClaims) Renew(ctx context.Context, l Lease) (Lease, error) {
	return c.cas(l, LeaseHeld, "")
}

// Release implements Claims.
func (c *MemoryClaims) Release(ctx context.Context, l Lease) (Lease, error) {
	return c.cas(l, LeaseReleased, "")
}

// Abandon implements Claims.
func (c *MemoryClaims) Abandon(ctx context.Context, l Lease, workerID string) (Lease, error) {
	return c.cas(l, LeaseAbandoned, workerID)
}

func (c *MemoryClaims) cas(l Lease, to LeaseState, by string) (Lease, error) {
	next, err := transition(l, to, by)
	if err != nil {
		return Lease{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.claims[l.ExecutionID]
	if !ok || cur.lease.Revision != l.Revision {
		return Lease{}, leaseLost(l)
	}
	c.rev++
	next.Revision = c.rev
	c.claims[l.ExecutionID] = memClaim{lease: next, at: c.now()}
	return next, nil
}

// Inspect implements Claims.
func (c *MemoryClaims) Inspect(ctx context.Context, executionID string) (Lease, error) {
	if err := ValidateExecutionID(executionID); err != nil {
		return Lease{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.claims[executionID]
	if !ok {
		return Lease{}, ErrNotFound
	}
	l := cur.lease
	l.RenewedAt = cur.at
	return l, nil
}

func claimedErr(id string) error {
	return &claimedError{id: id}
}

type claimedError struct{ id string }

func (e *claimedError) Error() string { return "claim " + e.id + ": " + ErrClaimed.Error() }

func (e *claimedError) Unwrap() error { return ErrClaimed }
