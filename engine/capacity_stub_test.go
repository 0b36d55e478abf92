package engine_test

// TEMPORARY — removed at merge. A stand-in for events.NewMemoryCapacity,
// which is being written on another branch (ev). At merge delete this file
// and replace newMemoryCapacity() with events.NewMemoryCapacity(...).

import (
	"context"
	"slices"
	"sync"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

type stubCapacity struct {
	mu      sync.Mutex
	reports map[policy.Provider]policy.CapacityReport
	subs    []stubSub
}

type stubSub struct {
	providers []policy.Provider
	fn        func(policy.Provider)
	ctx       context.Context
}

func newMemoryCapacity() events.Capacity {
	return &stubCapacity{reports: map[policy.Provider]policy.CapacityReport{}}
}

func (c *stubCapacity) Put(_ context.Context, r policy.CapacityReport) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.reports[r.Provider]; ok && r.Snapshot.AcquiredAt.Before(cur.Snapshot.AcquiredAt) {
		return nil
	}
	c.reports[r.Provider] = r
	return nil
}

func (c *stubCapacity) Get(_ context.Context, p policy.Provider) (policy.CapacityReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reports[p]
	if !ok {
		return policy.CapacityReport{}, events.ErrNoCapacityReport
	}
	return r, nil
}

func (c *stubCapacity) List(context.Context) ([]policy.CapacityReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []policy.CapacityReport
	for _, p := range policy.Providers {
		if r, ok := c.reports[p]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func (c *stubCapacity) RequestRefresh(_ context.Context, p policy.Provider) error {
	c.mu.Lock()
	subs := slices.Clone(c.subs)
	c.mu.Unlock()
	for _, s := range subs {
		if s.ctx.Err() == nil && slices.Contains(s.providers, p) {
			go s.fn(p)
		}
	}
	return nil
}

func (c *stubCapacity) SubscribeRefresh(ctx context.Context, providers []policy.Provider, fn func(policy.Provider)) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.subs = append(c.subs, stubSub{providers: providers, fn: fn, ctx: ctx})
	c.mu.Unlock()
	return cancel, nil
}
