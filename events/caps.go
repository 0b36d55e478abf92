package events

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// Concurrency caps: how many of a provider's jobs may be in flight
// (delivered and not yet acknowledged) at once across the whole
// deployment, however many workers pull them.
const (
	// DefaultProviderCap is a provider's cap until the deployment sets
	// one: the provider registry RFC's default of 2.
	DefaultProviderCap = 2
	// MaxProviderCap bounds a cap (activities.MaxConcurrency, the most one
	// worker may run, is the same).
	MaxProviderCap = 64
)

// Caps holds the deployment's per-provider concurrency caps. The cap is
// enforced where the jobs are handed out: JetStream stores it as the
// provider consumer's MaxAckPending, so the server never delivers more of
// that provider's jobs unacknowledged, across every worker, than its cap.
// The consumer's configuration is the only copy; every process reads it
// there. Workers binding to the consumer (Queue.Jobs) keep the cap they
// find and create a missing consumer with DefaultProviderCap.
//
// Implementations: *JetStreamQueue and *MemoryQueue; both pass
// eventstest.RunQueueCapsConformance.
type Caps interface {
	// SetProviderCaps sets the cap of each provider in caps (creating its
	// consumer when none exists yet). Jobs already in flight stay; a
	// lowered cap only holds back new deliveries.
	SetProviderCaps(ctx context.Context, caps map[policy.Provider]int) error
	// ProviderCaps returns, for every provider of policy.Providers and any
	// other provider with a consumer, its cap and how many of its jobs are
	// in flight, in policy.Providers order then by name.
	ProviderCaps(ctx context.Context) ([]CapInfo, error)
}

// CapInfo is one provider's concurrency cap and its use.
type CapInfo struct {
	Provider policy.Provider `json:"provider"`
	// Cap is the most jobs of the provider in flight at once, across all
	// workers.
	Cap int `json:"cap"`
	// InFlight counts jobs delivered to a worker and not yet acknowledged
	// (running, or about to be returned): the sessions running now.
	InFlight int `json:"inFlight"`
	// Queued counts jobs waiting for a free slot or a worker.
	Queued int `json:"queued"`
	// Bound is false while the provider has no consumer yet (no worker has
	// bound to it and no cap was set): Cap is then the default it will get.
	Bound bool `json:"bound"`
}

// ValidateProviderCaps checks every provider name and cap of caps.
func ValidateProviderCaps(caps map[policy.Provider]int) error {
	for _, p := range slices.Sorted(maps.Keys(caps)) {
		if err := ValidateProvider(string(p)); err != nil {
			return err
		}
		if n := caps[p]; n < 1 || n > MaxProviderCap {
			return invalidf("cap of %s %d: want 1-%d", p, n, MaxProviderCap)
		}
	}
	return nil
}

// providerOfSubject returns the provider of a provider job subject; false
// for a native subject or anything else.
func providerOfSubject(subject string) (policy.Provider, bool) {
	name, err := jobQueueName(subject)
	if err != nil {
		return "", false
	}
	p, ok := cutProviderQueue(name)
	return p, ok
}

// cutProviderQueue returns the provider of a durable name jobs_<provider>;
// false for jobs_native_<parent> and other names.
func cutProviderQueue(name string) (policy.Provider, bool) {
	const prefix = "jobs_"
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return "", false
	}
	p := name[len(prefix):]
	if ValidateProvider(p) != nil {
		return "", false
	}
	return policy.Provider(p), true
}

// sortCaps orders infos as ProviderCaps promises, adding a default entry
// for each provider of policy.Providers missing from them.
func sortCaps(infos map[policy.Provider]CapInfo) []CapInfo {
	for _, p := range policy.Providers {
		if _, ok := infos[p]; !ok {
			infos[p] = CapInfo{Provider: p, Cap: DefaultProviderCap}
		}
	}
	rank := func(p policy.Provider) int {
		if i := slices.Index(policy.Providers, p); i >= 0 {
			return i
		}
		return len(policy.Providers)
	}
	out := slices.Collect(maps.Values(infos))
	slices.SortFunc(out, func(a, b CapInfo) int {
		if ra, rb := rank(a.Provider), rank(b.Provider); ra != rb {
			return ra - rb
		}
		return cmp.Compare(a.Provider, b.Provider)
	})
	return out
}
