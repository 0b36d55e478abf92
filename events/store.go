package events

import "context"

// Store is the append-only event log: one subject per lane and one per run,
// optimistic concurrency per subject, idempotent retries.
//
// Implementations: *JetStreamStore (embedded or external NATS) and
// *MemoryStore; both pass eventstest.RunStoreConformance.
type Store interface {
	// Append validates and encodes env (Encode; env.Seq is ignored) and
	// stores it on env.Subject() if and only if the subject's last sequence
	// is expectedLastSeq (0: the subject has no events yet). It returns the
	// event's sequence.
	//
	// Retries are safe: the append carries a deterministic message id
	// (run, lane, expectedLastSeq, type and a digest of the encoded bytes),
	// and an append whose identical event is already stored right after
	// expectedLastSeq returns that event's sequence and no error, however
	// long ago it was stored. A different event at that position, or any
	// other mismatch, is a *ConflictError (ErrConflict): reload and decide
	// again. An invalid envelope matches ErrInvalid; one over MaxEventBytes
	// is a *LimitError (ErrTooLarge).
	Append(ctx context.Context, env Envelope, expectedLastSeq uint64) (uint64, error)

	// Last returns the newest event on the subject of run and lane (RunLane
	// for run-level events), or ErrNotFound when it has none.
	Last(ctx context.Context, run string, lane int) (Envelope, error)

	// Load returns one subject's events (lane, or RunLane for the run-level
	// subject) in order, as of the call; empty, not an error, when there are
	// none.
	Load(ctx context.Context, run string, lane int) ([]Envelope, error)

	// LoadRun returns every event of a run, run-level and lane-level, in
	// store order (the order they were appended).
	LoadRun(ctx context.Context, run string) ([]Envelope, error)

	// Runs returns the ids of every run with a run-level event (every run
	// starts with run-created), sorted.
	Runs(ctx context.Context) ([]string, error)

	// Watch streams events of one run (run "" for all runs) with a sequence
	// greater than after, in store order: first those already stored, then
	// new ones as they are appended. after 0 streams from the beginning. The
	// channel is closed when ctx is done, or if a stored event fails to
	// decode (LoadRun then reports the error).
	Watch(ctx context.Context, run string, after uint64) (<-chan Envelope, error)
}

// validateLoad checks the run and lane of a Load or Last call.
func validateLoad(run string, lane int) error {
	if err := ValidateRunID(run); err != nil {
		return err
	}
	if lane < RunLane || lane > MaxLanes {
		return invalidf("lane %d out of range", lane)
	}
	return nil
}
