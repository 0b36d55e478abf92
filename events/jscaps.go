package events

import (
	"context"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/switchyard-dev/switchyard/policy"
)

var _ Caps = (*JetStreamQueue)(nil)

// SetProviderCaps implements Caps: each provider consumer's MaxAckPending
// becomes its cap (its other settings stay).
func (q *JetStreamQueue) SetProviderCaps(ctx context.Context, caps map[policy.Provider]int) error {
	if err := ValidateProviderCaps(caps); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(caps)) {
		subject := JobSubject(string(p))
		name, err := jobQueueName(subject)
		if err != nil {
			return err
		}
		n := caps[p]
		_, err = q.upsertJobConsumer(ctx, name, subject, func(cfg *jetstream.ConsumerConfig, exists bool) bool {
			changed := !exists || cfg.MaxAckPending != n
			cfg.MaxAckPending = n
			return changed
		})
		if err != nil {
			return translate("set the cap of "+string(p), err)
		}
	}
	return nil
}

// ProviderCaps implements Caps from the jobs stream's consumers: Cap is a
// provider consumer's MaxAckPending, InFlight its NumAckPending, Queued its
// NumPending.
func (q *JetStreamQueue) ProviderCaps(ctx context.Context) ([]CapInfo, error) {
	infos := map[policy.Provider]CapInfo{}
	l := q.j.jobs.ListConsumers(ctx)
	for ci := range l.Info() {
		p, ok := cutProviderQueue(ci.Name)
		if !ok {
			continue
		}
		infos[p] = CapInfo{Provider: p, Cap: ci.Config.MaxAckPending, InFlight: ci.NumAckPending,
			Queued: int(ci.NumPending), Bound: true}
	}
	if err := l.Err(); err != nil {
		return nil, translate("list the jobs consumers", err)
	}
	return sortCaps(infos), nil
}

// SetProviderCaps sets the deployment's concurrency caps: see Caps.
func (j *JetStream) SetProviderCaps(ctx context.Context, caps map[policy.Provider]int) error {
	return j.Queue().SetProviderCaps(ctx, caps)
}

// ProviderCaps returns every provider's concurrency cap and jobs in
// flight: see Caps.
func (j *JetStream) ProviderCaps(ctx context.Context) ([]CapInfo, error) {
	return j.Queue().ProviderCaps(ctx)
}
