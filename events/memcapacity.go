package events

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchyard-dev/switchyard/policy"
)

// MemoryCapacity is the in-memory Capacity. It keeps each report in its
// encoded form and decodes it on every read, exactly like the bucket, so
// both return the same values; refresh requests reach the subscribers of
// the same MemoryCapacity.
type MemoryCapacity struct {
	mu      sync.Mutex
	reports map[policy.Provider][]byte
	subs    map[*refreshLoop][]policy.Provider
}

var _ Capacity = (*MemoryCapacity)(nil)

// NewMemoryCapacity returns an empty MemoryCapacity.
func NewMemoryCapacity() *MemoryCapacity {
	return &MemoryCapacity{reports: map[policy.Provider][]byte{}, subs: map[*refreshLoop][]policy.Provider{}}
}

// Put implements Capacity.
func (c *MemoryCapacity) Put(ctx context.Context, r policy.CapacityReport) error {
	val, err := encodeCapacityReport(r)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.reports[r.Provider]; ok {
		// A corrupt current value is replaced, as in the bucket.
		if old, err := decodeCapacityReport(string(r.Provider), cur); err == nil && !newerReport(r, old) {
			return nil
		}
	}
	c.reports[r.Provider] = val
	return nil
}

// Get implements Capacity.
func (c *MemoryCapacity) Get(ctx context.Context, provider policy.Provider) (policy.CapacityReport, error) {
	if !capacityProvider(provider) {
		return policy.CapacityReport{}, invalidf("capacity report: provider %q is not a known provider", provider)
	}
	c.mu.Lock()
	val, ok := c.reports[provider]
	c.mu.Unlock()
	if !ok {
		return policy.CapacityReport{}, fmt.Errorf("capacity report of %s: %w", provider, ErrNoCapacityReport)
	}
	return decodeCapacityReport(string(provider), val)
}

// List implements Capacity.
func (c *MemoryCapacity) List(ctx context.Context) ([]policy.CapacityReport, error) {
	out := []policy.CapacityReport{}
	for _, p := range CapacityProviders {
		r, err := c.Get(ctx, p)
		if err == nil {
			out = append(out, r)
		} else if !isNoReport(err) {
			return nil, err
		}
	}
	return out, nil
}

// RequestRefresh implements Capacity.
func (c *MemoryCapacity) RequestRefresh(ctx context.Context, provider policy.Provider) error {
	if !capacityProvider(provider) {
		return invalidf("refresh request: provider %q is not a known provider", provider)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for l, ps := range c.subs {
		for _, p := range ps {
			if p == provider {
				l.offer(p)
			}
		}
	}
	return nil
}

// SubscribeRefresh implements Capacity.
func (c *MemoryCapacity) SubscribeRefresh(ctx context.Context, providers []policy.Provider, fn func(policy.Provider)) (func(), error) {
	ps, err := validateRefreshProviders(providers)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalidf("refresh subscription: fn is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := newRefreshLoop(fn)
	c.subs[l] = ps
	l.start(ctx, func() {
		c.mu.Lock()
		delete(c.subs, l)
		c.mu.Unlock()
	})
	return l.stop, nil
}
