package main

// TEMPORARY STAND-INS — removed at merge (issue #11).
//
// The branch h/cmd is written against the skeleton while events (the
// capacity store), policy (EvaluateEligibility) and engine (the run's
// unknown-quota override) land on other branches. Each function here is
// the one seam cmd/switchyard needs from them; at merge this whole file is
// replaced by the one-line bodies given in each comment:
//
//	func jsCapacity(js *events.JetStream) events.Capacity { return js.Capacity() }
//	func evaluateEligibility(in policy.EligibilityInput) policy.EligibilityVerdict { return policy.EvaluateEligibility(in) }
//	func setAllowUnknownQuota(req *engine.RunRequest, ps []policy.Provider) { req.AllowUnknownQuota = ps }

import (
	"context"
	"sync"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// jsCapacity is the deployment's capacity store on js. Removed at merge:
// js.Capacity().
func jsCapacity(js *events.JetStream) events.Capacity { return standinCapacity }

// evaluateEligibility is the one gate. Removed at merge:
// policy.EvaluateEligibility(in).
func evaluateEligibility(in policy.EligibilityInput) policy.EligibilityVerdict {
	if in.Source == policy.QuotaUnsupported {
		return policy.EligibilityVerdict{Eligible: true, Capacity: policy.EvidenceOpaque}
	}
	if in.Report == nil {
		return policy.EligibilityVerdict{Code: policy.ExcludeQuotaUnknown, Capacity: policy.EvidenceUnknown}
	}
	return policy.EligibilityVerdict{Eligible: true, Capacity: policy.EvidenceMeasured}
}

// setAllowUnknownQuota records the run's override in its request (the
// field lands with the engine's branch). Removed at merge:
// req.AllowUnknownQuota = ps.
func setAllowUnknownQuota(req *engine.RunRequest, ps []policy.Provider) {}

// standinCapacity is a process-local store. Removed at merge.
var standinCapacity events.Capacity = &memCapacity{reports: map[policy.Provider]policy.CapacityReport{}}

type memCapacity struct {
	mu      sync.Mutex
	reports map[policy.Provider]policy.CapacityReport
}

func (m *memCapacity) Put(_ context.Context, r policy.CapacityReport) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.reports[r.Provider]; ok && cur.Snapshot.AcquiredAt.After(r.Snapshot.AcquiredAt) {
		return nil
	}
	m.reports[r.Provider] = r
	return nil
}

func (m *memCapacity) Get(_ context.Context, p policy.Provider) (policy.CapacityReport, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[p]
	if !ok {
		return policy.CapacityReport{}, events.ErrNoCapacityReport
	}
	return r, nil
}

func (m *memCapacity) List(ctx context.Context) ([]policy.CapacityReport, error) {
	var out []policy.CapacityReport
	for _, p := range append(append([]policy.Provider{}, policy.Providers...), policy.Gemini) {
		if r, err := m.Get(ctx, p); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memCapacity) RequestRefresh(context.Context, policy.Provider) error { return nil }

func (m *memCapacity) SubscribeRefresh(context.Context, []policy.Provider, func(policy.Provider)) (func(), error) {
	return func() {}, nil
}
