package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchyard-dev/switchyard/policy"
)

// JetStreamCapacity is Capacity on the KV bucket CapacityBucket (history
// 1: only the current report of each provider is kept; key = provider
// name). Put is a compare-and-set on the key's revision, so of two workers
// racing, the later acquisition wins whatever the order of their writes.
// Refresh requests are core NATS messages on
// CapacityRefreshSubjectPrefix+<provider>: nothing is stored, and a request
// nobody hears is lost (the asker polls Get with a deadline).
type JetStreamCapacity struct {
	j *JetStream
}

var _ Capacity = (*JetStreamCapacity)(nil)

// Put implements Capacity. Transient failures (a leader election, a
// timeout) are retried until ctx ends: a retry after a write that did land
// finds that write current and changes nothing. A current value that does
// not decode is replaced.
func (c *JetStreamCapacity) Put(ctx context.Context, r policy.CapacityReport) error {
	val, err := encodeCapacityReport(r)
	if err != nil {
		return err
	}
	key := string(r.Provider)
	retry := Backoff{Min: 25 * time.Millisecond, Max: time.Second}
	for {
		err := c.putOnce(ctx, key, r, val)
		if err == nil {
			return nil
		}
		if errors.Is(err, errCASLost) {
			retry.Reset()
			continue // someone wrote in between: compare with their report
		}
		if ctx.Err() != nil || !transient(err) {
			return translate("put capacity report of "+key, err)
		}
		if !retry.Wait(ctx) {
			return translate("put capacity report of "+key, fmt.Errorf("%w (last error: %v)", ctx.Err(), err))
		}
	}
}

// errCASLost: the key's revision moved between the read and the write.
var errCASLost = errors.New("capacity report changed meanwhile")

// putOnce reads the current report and writes r only if it is newer, on
// the revision read.
func (c *JetStreamCapacity) putOnce(ctx context.Context, key string, r policy.CapacityReport, val []byte) error {
	actx, cancel := context.WithTimeout(ctx, c.j.cfg.AttemptTimeout)
	defer cancel()
	e, err := c.j.capacity.Get(actx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		_, err = c.j.capacity.Create(actx, key, val)
	case err != nil:
		return err
	default:
		if old, derr := decodeCapacityReport(key, e.Value()); derr == nil && !newerReport(r, old) {
			return nil
		}
		_, err = c.j.capacity.Update(actx, key, val, e.Revision())
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return errCASLost
	}
	return err
}

// Get implements Capacity.
func (c *JetStreamCapacity) Get(ctx context.Context, provider policy.Provider) (policy.CapacityReport, error) {
	if !capacityProvider(provider) {
		return policy.CapacityReport{}, invalidf("capacity report: provider %q is not a known provider", provider)
	}
	e, err := c.j.capacity.Get(ctx, string(provider))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return policy.CapacityReport{}, fmt.Errorf("capacity report of %s: %w", provider, ErrNoCapacityReport)
	}
	if err != nil {
		return policy.CapacityReport{}, translate("get capacity report of "+string(provider), err)
	}
	return decodeCapacityReport(string(provider), e.Value())
}

// List implements Capacity. A key that is no provider's is an error, like
// a value that does not decode: the bucket holds nothing else.
func (c *JetStreamCapacity) List(ctx context.Context) ([]policy.CapacityReport, error) {
	lister, err := c.j.capacity.ListKeys(ctx)
	if err != nil {
		return nil, translate("list capacity reports", err)
	}
	defer func() { _ = lister.Stop() }()
	var keys []policy.Provider
	for k := range lister.Keys() {
		if !capacityProvider(policy.Provider(k)) {
			return nil, &DecodeError{What: "capacity report " + k, Err: invalidf("key %q is not a known provider", k)}
		}
		keys = append(keys, policy.Provider(k))
	}
	out := []policy.CapacityReport{}
	for _, p := range CapacityProviders {
		if !slices.Contains(keys, p) {
			continue
		}
		r, err := c.Get(ctx, p)
		if isNoReport(err) {
			continue // purged since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RequestRefresh implements Capacity: one core NATS publish, flushed so
// the server has it before the call returns.
func (c *JetStreamCapacity) RequestRefresh(ctx context.Context, provider policy.Provider) error {
	if !capacityProvider(provider) {
		return invalidf("refresh request: provider %q is not a known provider", provider)
	}
	subj := CapacityRefreshSubjectPrefix + string(provider)
	if err := c.j.nc.Publish(subj, nil); err != nil {
		return translate("request a capacity refresh of "+string(provider), err)
	}
	if err := c.flush(ctx); err != nil {
		return translate("request a capacity refresh of "+string(provider), err)
	}
	return nil
}

// SubscribeRefresh implements Capacity: one subscription per provider
// subject, registered with the server before it returns.
func (c *JetStreamCapacity) SubscribeRefresh(ctx context.Context, providers []policy.Provider, fn func(policy.Provider)) (func(), error) {
	ps, err := validateRefreshProviders(providers)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalidf("refresh subscription: fn is nil")
	}
	var subs []*nats.Subscription
	unsubscribe := func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	l := newRefreshLoop(fn)
	for _, p := range ps {
		s, err := c.j.nc.Subscribe(CapacityRefreshSubjectPrefix+string(p), func(*nats.Msg) { l.offer(p) })
		if err != nil {
			unsubscribe()
			return nil, translate("subscribe to capacity refreshes of "+string(p), err)
		}
		subs = append(subs, s)
	}
	l.start(ctx, unsubscribe)
	if err := c.flush(ctx); err != nil {
		l.stop()
		return nil, translate("subscribe to capacity refreshes", err)
	}
	return l.stop, nil
}

// flush waits for the server to have processed everything sent so far,
// for at most AttemptTimeout (NATS needs a deadline; ctx may have none).
func (c *JetStreamCapacity) flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.j.cfg.AttemptTimeout)
	defer cancel()
	return c.j.nc.FlushWithContext(ctx)
}
