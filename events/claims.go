package events

import (
	"context"
	"math"
	"time"
)

// Claims holds create-only execution claims with leases: the mechanism that
// keeps an attempt whose process may have started from ever running twice.
//
// A worker claims an execution id before starting the CLI and renews the
// lease while it runs. A redelivered job whose claim exists is not run: if
// the lease is live the worker waits; if it is stale the worker Abandons it
// (one worker wins) and reports the execution abandoned. A claim is never
// deleted, so a released or abandoned execution can never be claimed again.
//
// Implementations: *JetStreamClaims (a KV bucket) and *MemoryClaims; both
// pass eventstest.RunClaimsConformance.
type Claims interface {
	// Claim creates the claim of executionID for workerID with a lease of
	// ttl. ErrClaimed if any claim for executionID exists.
	Claim(ctx context.Context, executionID, workerID string, ttl time.Duration) (Lease, error)
	// Renew refreshes a held lease. ErrLeaseLost if the claim's revision is
	// no longer lease.Revision (someone abandoned or released it) or it is
	// not held.
	Renew(ctx context.Context, lease Lease) (Lease, error)
	// Inspect returns the current claim, with RenewedAt set, or ErrNotFound.
	Inspect(ctx context.Context, executionID string) (Lease, error)
	// Release marks a held lease released: the execution ended and was
	// reported. ErrLeaseLost like Renew.
	Release(ctx context.Context, lease Lease) (Lease, error)
	// Abandon marks a lease the caller found stale (see LeaseStale) as
	// abandoned by workerID, only if its revision is still lease.Revision:
	// of several workers racing, and against a holder that renews at the
	// last moment, exactly one wins and the others get ErrLeaseLost.
	Abandon(ctx context.Context, lease Lease, workerID string) (Lease, error)
}

// LeaseState is the state of a claim.
type LeaseState string

// Lease states.
const (
	LeaseHeld      LeaseState = "held"      // the holder is (or was last seen) running the execution.
	LeaseReleased  LeaseState = "released"  // the holder finished and reported.
	LeaseAbandoned LeaseState = "abandoned" // another worker found the lease stale.
)

// Lease is a claim as last read or written.
type Lease struct {
	ExecutionID string
	// WorkerID is the worker that claimed the execution.
	WorkerID string
	State    LeaseState
	// TTL is the lease's time to live, fixed at Claim.
	TTL time.Duration
	// Revision identifies this version of the claim; every Renew, Release
	// and Abandon changes it. Compare-and-set operations take it.
	Revision uint64
	// Renewals counts successful Renew calls.
	Renewals uint64
	// AbandonedBy is the worker that abandoned the claim.
	AbandonedBy string
	// RenewedAt is the store's timestamp of Revision (the server's clock for
	// JetStream). Set by Inspect only; zero on leases from Claim, Renew,
	// Release and Abandon.
	RenewedAt time.Time
}

// LeaseStale reports whether a held lease is stale, by the caller's own
// clock and without trusting any other clock: first was read by Inspect at
// firstSeen, current by a later Inspect at now; the lease is stale when it
// is still held at the same revision and more than its TTL has passed
// between the two observations. Comparing RenewedAt with the caller's clock
// instead is simpler but trusts the clocks to agree.
func LeaseStale(first Lease, firstSeen time.Time, current Lease, now time.Time) bool {
	return current.State == LeaseHeld && current.Revision == first.Revision &&
		now.Sub(firstSeen) > current.TTL
}

// claimRecord is a claim's stored JSON value.
type claimRecord struct {
	Schema      int        `json:"schema"`
	Worker      string     `json:"worker"`
	State       LeaseState `json:"state"`
	TTLMs       int64      `json:"ttlMs"`
	Renewals    uint64     `json:"renewals"`
	AbandonedBy string     `json:"abandonedBy,omitempty"`
}

func (l Lease) record() claimRecord {
	return claimRecord{Schema: JobSchemaVersion, Worker: l.WorkerID, State: l.State,
		TTLMs: l.TTL.Milliseconds(), Renewals: l.Renewals, AbandonedBy: l.AbandonedBy}
}

func decodeClaim(executionID string, b []byte) (Lease, error) {
	var r claimRecord
	if err := unmarshalStored(b, &r); err != nil {
		return Lease{}, &DecodeError{What: "claim", Err: err}
	}
	if r.Schema != JobSchemaVersion {
		return Lease{}, &DecodeError{What: "claim", Err: schemaErr(r.Schema)}
	}
	switch r.State {
	case LeaseHeld, LeaseReleased, LeaseAbandoned:
	default:
		return Lease{}, &DecodeError{What: "claim", Err: invalidf("state %q", r.State)}
	}
	// What Claim refuses to write is refused on read too: a missing or
	// non-positive ttlMs would make the lease stale at once, and one past
	// time.Duration's range would wrap.
	if r.TTLMs < 1 || r.TTLMs > math.MaxInt64/int64(time.Millisecond) {
		return Lease{}, &DecodeError{What: "claim", Err: invalidf("ttlMs %d: want 1 to %d", r.TTLMs, math.MaxInt64/int64(time.Millisecond))}
	}
	if err := ValidateWorkerID(r.Worker); err != nil {
		return Lease{}, &DecodeError{What: "claim", Err: err}
	}
	return Lease{ExecutionID: executionID, WorkerID: r.Worker, State: r.State,
		TTL: time.Duration(r.TTLMs) * time.Millisecond, Renewals: r.Renewals, AbandonedBy: r.AbandonedBy}, nil
}

func validateClaim(executionID, workerID string, ttl time.Duration) error {
	if err := ValidateExecutionID(executionID); err != nil {
		return err
	}
	if err := ValidateWorkerID(workerID); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return invalidf("lease ttl %v: want at least 1ms", ttl)
	}
	return nil
}

// transition computes the next version of a lease for Renew, Release and
// Abandon, or ErrLeaseLost when the lease is not held.
func transition(l Lease, to LeaseState, by string) (Lease, error) {
	if err := ValidateExecutionID(l.ExecutionID); err != nil {
		return Lease{}, err
	}
	if l.State != LeaseHeld || l.Revision == 0 {
		return Lease{}, leaseLost(l)
	}
	next := l
	next.RenewedAt = time.Time{}
	switch to {
	case LeaseHeld:
		next.Renewals++
	case LeaseAbandoned:
		if err := ValidateWorkerID(by); err != nil {
			return Lease{}, err
		}
		next.State, next.AbandonedBy = to, by
	default:
		next.State = to
	}
	return next, nil
}

func leaseLost(l Lease) error {
	return &leaseError{id: l.ExecutionID, rev: l.Revision}
}

type leaseError struct {
	id  string
	rev uint64
}

func (e *leaseError) Error() string {
	return "claim " + e.id + " moved from revision " + itoa64(e.rev) + ": " + ErrLeaseLost.Error()
}

func (e *leaseError) Unwrap() error { return ErrLeaseLost }
