package events

import (
	"context"
	"errors"

	"github.com/switchyard-dev/switchyard/policy"
)

// CapacityBucket is the JetStream key-value bucket holding the current
// capacity report of each provider (key: the provider name).
const CapacityBucket = "SY_CAPACITY"

// CapacityRefreshSubjectPrefix: a request on
// CapacityRefreshSubjectPrefix+<provider> asks that provider's workers to
// acquire and put a fresh report.
const CapacityRefreshSubjectPrefix = "sy.cap.refresh."

// ErrNoCapacityReport: no current report for the provider.
var ErrNoCapacityReport = errors.New("no capacity report")

// Capacity is where a deployment keeps each provider's current capacity
// report: at most one per provider, with its acquisition time (the
// snapshot's AcquiredAt). Workers put; engines and commands read and ask
// for refreshes. The JetStream and memory implementations pass one
// conformance suite (eventstest.RunCapacityConformance).
type Capacity interface {
	// Put replaces provider r.Provider's report. A report not newer than
	// the current one (by Snapshot.AcquiredAt) is ignored without error,
	// so a slow worker never rolls the state back. The report is
	// validated strictly (ErrInvalid, ErrSchemaVersion).
	Put(ctx context.Context, r policy.CapacityReport) error
	// Get returns provider's current report, or ErrNoCapacityReport. A
	// stored value that does not decode strictly is a *DecodeError naming
	// the provider's key.
	Get(ctx context.Context, provider policy.Provider) (policy.CapacityReport, error)
	// List returns every current report, in CapacityProviders order
	// (policy.Providers, then gemini).
	List(ctx context.Context) ([]policy.CapacityReport, error)
	// RequestRefresh asks provider's workers to acquire a fresh report;
	// it does not wait (poll Get for a newer AcquiredAt).
	RequestRefresh(ctx context.Context, provider policy.Provider) error
	// SubscribeRefresh calls fn (on one goroutine, in order) for each
	// refresh request for one of providers, until ctx ends or stop is
	// called. A request for a provider whose earlier request still waits
	// for fn is merged into it. stop waits for a running fn to return
	// (fn must not call it; it may cancel ctx); after stop, fn is never
	// called again.
	SubscribeRefresh(ctx context.Context, providers []policy.Provider, fn func(policy.Provider)) (stop func(), err error)
}
