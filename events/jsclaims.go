package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamClaims is Claims on the KV bucket ClaimsBucket: the key is the
// execution id, Claim is a create-only put, and Renew, Release and Abandon
// are compare-and-set updates on the revision. Keys are never deleted.
//
// KV operations are not retried inside: a Claim that fails with a timeout
// may have been stored, and retrying it would report the caller's own claim
// as ErrClaimed. Inspect before deciding.
type JetStreamClaims struct {
	j *JetStream
}

var _ Claims = (*JetStreamClaims)(nil)

// Claim implements Claims.
func (c *JetStreamClaims) Claim(ctx context.Context, executionID, workerID string, ttl time.Duration) (Lease, error) {
	if err := validateClaim(executionID, workerID, ttl); err != nil {
		return Lease{}, err
	}
	l := Lease{ExecutionID: executionID, WorkerID: workerID, State: LeaseHeld, TTL: ttl.Truncate(time.Millisecond)}
	val, err := json.Marshal(l.record())
	if err != nil {
		return Lease{}, err
	}
	rev, err := c.j.kv.Create(ctx, executionID, val)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return Lease{}, claimedErr(executionID)
	}
	if err != nil {
		return Lease{}, translate("claim "+executionID, err)
	}
	l.Revision = rev
	return l, nil
}

// Renew implements Claims.
func (c *JetStreamClaims) Renew(ctx context.Context, l Lease) (Lease, error) {
	return c.cas(ctx, l, LeaseHeld, "")
}

// Release implements Claims.
func (c *JetStreamClaims) Release(ctx context.Context, l Lease) (Lease, error) {
	return c.cas(ctx, l, LeaseReleased, "")
}

// Abandon implements Claims.
func (c *JetStreamClaims) Abandon(ctx context.Context, l Lease, workerID string) (Lease, error) {
	return c.cas(ctx, l, LeaseAbandoned, workerID)
}

func (c *JetStreamClaims) cas(ctx context.Context, l Lease, to LeaseState, by string) (Lease, error) {
	next, err := transition(l, to, by)
	if err != nil {
		return Lease{}, err
	}
	val, err := json.Marshal(next.record())
	if err != nil {
		return Lease{}, err
	}
	rev, err := c.j.kv.Update(ctx, l.ExecutionID, val, l.Revision)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return Lease{}, leaseLost(l)
	}
	if err != nil {
		return Lease{}, translate(fmt.Sprintf("update claim %s to %s", l.ExecutionID, to), err)
	}
	next.Revision = rev
	return next, nil
}

// Inspect implements Claims; RenewedAt is the server's timestamp of the
// claim's current revision.
func (c *JetStreamClaims) Inspect(ctx context.Context, executionID string) (Lease, error) {
	if err := ValidateExecutionID(executionID); err != nil {
		return Lease{}, err
	}
	e, err := c.j.kv.Get(ctx, executionID)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Lease{}, fmt.Errorf("claim %s: %w", executionID, ErrNotFound)
	}
	if err != nil {
		return Lease{}, translate("inspect claim "+executionID, err)
	}
	l, err := decodeClaim(executionID, e.Value())
	if err != nil {
		return Lease{}, err
	}
	l.Revision, l.RenewedAt = e.Revision(), e.Created().UTC()
	return l, nil
}

// Writer returns the connection that wrote executionID's current claim
// (the ReporterHeader the engine's API proxy stamped; "" for a claim the
// engine's own connection wrote) and the claim.
func (c *JetStreamClaims) Writer(ctx context.Context, executionID string) (string, Lease, error) {
	if err := ValidateExecutionID(executionID); err != nil {
		return "", Lease{}, err
	}
	st, err := c.j.streamHandle(ctx, "KV_"+ClaimsBucket)
	if err != nil {
		return "", Lease{}, translate("claim "+executionID, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "$KV."+ClaimsBucket+"."+executionID)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", Lease{}, fmt.Errorf("claim %s: %w", executionID, ErrNotFound)
	}
	if err != nil {
		c.j.forgetStream("KV_" + ClaimsBucket)
		return "", Lease{}, translate("claim "+executionID, err)
	}
	l, err := decodeClaim(executionID, m.Data)
	if err != nil {
		return "", Lease{}, err
	}
	l.Revision = m.Sequence
	return m.Header.Get(ReporterHeader), l, nil
}
