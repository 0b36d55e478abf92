package activities

// TEMPORARY STAND-IN — removed at merge (issue #11).
//
// The capacity store's JetStream implementation lands on the events
// branch. At merge this whole file is replaced by:
//
//	func testCapacity(t *testing.T, js *events.JetStream) events.Capacity { return js.Capacity() }

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// testCapacity is the capacity store the worker tests use. Removed at
// merge: js.Capacity().
func testCapacity(t *testing.T, js *events.JetStream) events.Capacity {
	return &standinCapacity{reports: map[policy.Provider]policy.CapacityReport{}}
}

type standinCapacity struct {
	mu      sync.Mutex
	reports map[policy.Provider]policy.CapacityReport
	subs    []func(policy.Provider)
	watch   [][]policy.Provider
}

func (m *standinCapacity) Put(_ context.Context, r policy.CapacityReport) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.reports[r.Provider]; ok && cur.Snapshot.AcquiredAt.After(r.Snapshot.AcquiredAt) {
		return nil
	}
	m.reports[r.Provider] = r
	return nil
}

func (m *standinCapacity) Get(_ context.Context, p policy.Provider) (policy.CapacityReport, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[p]
	if !ok {
		return policy.CapacityReport{}, events.ErrNoCapacityReport
	}
	return r, nil
}

func (m *standinCapacity) List(ctx context.Context) ([]policy.CapacityReport, error) {
	var out []policy.CapacityReport
	for _, p := range policy.Providers {
		if r, err := m.Get(ctx, p); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *standinCapacity) RequestRefresh(_ context.Context, p policy.Provider) error {
	m.mu.Lock()
	var fns []func(policy.Provider)
	for i, fn := range m.subs {
		if fn != nil && slices.Contains(m.watch[i], p) {
			fns = append(fns, fn)
		}
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(p)
	}
	return nil
}

func (m *standinCapacity) SubscribeRefresh(_ context.Context, ps []policy.Provider, fn func(policy.Provider)) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := len(m.subs)
	m.subs, m.watch = append(m.subs, fn), append(m.watch, ps)
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.subs[i] = nil
	}, nil
}
