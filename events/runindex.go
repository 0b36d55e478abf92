package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The run index: one small summary per final run, so that listing the
// newest runs and an engine's start do not fold (or even touch) every final
// run's log.
//
// The index is derived data. The event log stays the only truth: an entry
// is written only by the engine, only from a run's own log, and only after
// that log's run-final is stored. Final is permanent (nothing is appended
// to a final run but audits), so an entry, once written, stays true; a run
// the index does not know (an open run, a run finalized while the index
// write failed, a store from before the index, a deleted or damaged
// bucket) is read from its log as before, and the engine writes its entry
// when it finds it final. An entry that does not decode, or names a
// different run than its key, counts as missing.

// RunsBucket is the KV bucket of the run index (key = run id).
const RunsBucket = "sy_runs"

// runsStream is the stream behind RunsBucket.
const runsStream = "KV_" + RunsBucket

// runEntryHeader carries a key's entry (FinalRun JSON) in RunsBucket; the
// message body is the run's status snapshot. One write per final run, and
// FinalRuns reads headers only.
const runEntryHeader = "Sy-Final-Run"

// FinalRun is the index entry of one final run.
type FinalRun struct {
	// Run is the run id (the entry's key).
	Run string `json:"run"`
	// Created is the time of the run's run-created event.
	Created time.Time `json:"created"`
	// Updated is the time of its newest run-level event when the entry
	// was written (run-final, or an audit after it).
	Updated time.Time `json:"updated"`
	// Cancelled: the run carries a run-level cancel.
	Cancelled bool `json:"cancelled,omitempty"`
	// Seq is the store sequence of that newest run-level event.
	Seq uint64 `json:"seq"`
	// ReportsThrough is how far the run's reports are handled: the
	// largest ReportSeq of its run-level events then.
	ReportsThrough uint64 `json:"reportsThrough,omitempty"`
}

// validate checks an entry before it is written or after it is read.
func (f FinalRun) validate() error {
	if err := ValidateRunID(f.Run); err != nil {
		return err
	}
	if f.Created.IsZero() || f.Updated.IsZero() || f.Seq == 0 {
		return fmt.Errorf("%w: run index entry of %s: created, updated and seq are required", ErrInvalid, f.Run)
	}
	return nil
}

// encodeFinalRun is f's stored form.
func encodeFinalRun(f FinalRun) ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(f)
}

// maxFinalRunBytes bounds a stored entry (they are about 200 bytes).
const maxFinalRunBytes = 1024

// decodeFinalRun parses a stored entry strictly: unknown fields, trailing
// data, oversize input or missing fields are ErrInvalid.
func decodeFinalRun(key string, b []byte) (FinalRun, error) {
	var f FinalRun
	if len(b) > maxFinalRunBytes {
		return f, fmt.Errorf("%w: run index entry %s: %d bytes, over %d", ErrInvalid, key, len(b), maxFinalRunBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return FinalRun{}, fmt.Errorf("%w: run index entry %s: %v", ErrInvalid, key, err)
	}
	if dec.More() {
		return FinalRun{}, fmt.Errorf("%w: run index entry %s: data after the object", ErrInvalid, key)
	}
	if err := f.validate(); err != nil {
		return FinalRun{}, err
	}
	if f.Run != key {
		return FinalRun{}, fmt.Errorf("%w: run index entry %s names run %s", ErrInvalid, key, f.Run)
	}
	return f, nil
}

// RunIndex is the run index. Both Store implementations provide it
// (JetStreamStore on RunsBucket, MemoryStore in memory).
//
// Beside each entry the index may keep a snapshot: the final run's status
// as its log folded at sequence f.Seq, opaque bytes (the engine's JSON,
// at most MaxMessageBytes), in the same message as the entry (the entry in
// a header, the snapshot as the body). A reader uses it only while the
// run's newest run-level event is still at that sequence.
type RunIndex interface {
	// PutFinalRun writes (or replaces) run f.Run's entry and, unless
	// status is nil, its snapshot first.
	PutFinalRun(ctx context.Context, f FinalRun, status []byte) error
	// FinalRuns returns every entry that decodes, by run id, and how many
	// stored entries did not (they count as missing).
	FinalRuns(ctx context.Context) (map[string]FinalRun, int, error)
	// FinalRunStatus returns run's snapshot and the sequence it was folded
	// at; ErrNotFound when there is none (or it does not decode).
	FinalRunStatus(ctx context.Context, run string) (uint64, []byte, error)
}

// runSnapshot is a stored snapshot.
type runSnapshot struct {
	Seq    uint64          `json:"seq"`
	Status json.RawMessage `json:"status"`
}

// encodeSnapshot wraps status with its sequence.
func encodeSnapshot(seq uint64, status []byte) ([]byte, error) {
	if seq == 0 || !json.Valid(status) {
		return nil, fmt.Errorf("%w: run status snapshot: want a sequence and JSON", ErrInvalid)
	}
	b, err := json.Marshal(runSnapshot{Seq: seq, Status: status})
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMessageBytes {
		return nil, &LimitError{What: "run status snapshot", Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}
	}
	return b, nil
}

// decodeSnapshot unwraps a stored snapshot strictly.
func decodeSnapshot(run string, b []byte) (uint64, []byte, error) {
	var s runSnapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || dec.More() || s.Seq == 0 || len(s.Status) == 0 {
		return 0, nil, fmt.Errorf("%w: run status snapshot of %s does not decode", ErrNotFound, run)
	}
	return s.Seq, s.Status, nil
}

var (
	_ RunIndex = (*JetStreamStore)(nil)
	_ RunIndex = (*MemoryStore)(nil)
)

// PutFinalRun implements RunIndex: one message, the entry in a header and
// the snapshot (or nothing) as the body. A retry of a write that landed
// rewrites the same value.
func (s *JetStreamStore) PutFinalRun(ctx context.Context, f FinalRun, status []byte) error {
	entry, err := encodeFinalRun(f)
	if err != nil {
		return err
	}
	var body []byte
	if status != nil {
		if body, err = encodeSnapshot(f.Seq, status); err != nil {
			return err
		}
	}
	retry := Backoff{Min: 25 * time.Millisecond, Max: time.Second}
	for {
		m := nats.NewMsg("$KV." + RunsBucket + "." + f.Run)
		m.Header.Set(runEntryHeader, string(entry))
		m.Data = body
		_, err := s.j.js.PublishMsg(ctx, m, jetstream.WithExpectStream(runsStream))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !transient(err) {
			return translate("put run index entry of "+f.Run, err)
		}
		if !retry.Wait(ctx) {
			return translate("put run index entry of "+f.Run, fmt.Errorf("%w (last error: %v)", ctx.Err(), err))
		}
	}
}

// FinalRunStatus implements RunIndex with a direct get of the key.
func (s *JetStreamStore) FinalRunStatus(ctx context.Context, run string) (uint64, []byte, error) {
	if err := ValidateRunID(run); err != nil {
		return 0, nil, err
	}
	st, err := s.j.js.Stream(ctx, runsStream)
	if err != nil {
		return 0, nil, translate("run index", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "$KV."+RunsBucket+"."+run)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil, fmt.Errorf("run status snapshot of %s: %w", run, ErrNotFound)
	}
	if err != nil {
		return 0, nil, translate("run status snapshot of "+run, err)
	}
	f, err := decodeFinalRun(run, []byte(m.Header.Get(runEntryHeader)))
	if err != nil || len(m.Data) == 0 {
		return 0, nil, fmt.Errorf("run status snapshot of %s: %w", run, ErrNotFound)
	}
	seq, status, err := decodeSnapshot(run, m.Data)
	if err != nil || seq != f.Seq {
		return 0, nil, fmt.Errorf("run status snapshot of %s: %w", run, ErrNotFound)
	}
	return seq, status, nil
}

// FinalRuns implements RunIndex: one read of the bucket's entries (the
// stream keeps one message, the current value, per key) through an
// ephemeral consumer, up to the entries it counted when created. An entry
// written meanwhile may be missed: its run then counts as not indexed.
func (s *JetStreamStore) FinalRuns(ctx context.Context) (map[string]FinalRun, int, error) {
	out := map[string]FinalRun{}
	st, err := s.j.js.Stream(ctx, runsStream)
	if err != nil {
		return nil, 0, translate("run index", err)
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Name: s.j.consumerName(), FilterSubject: "$KV." + RunsBucket + ".>", DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: readInactive,
		HeadersOnly: true, // the entries; the snapshots stay on the server
	})
	if err != nil {
		return nil, 0, translate("run index", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = st.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	pending := int(cons.CachedInfo().NumPending)
	if pending == 0 {
		return out, 0, nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(min(max(pending, 64), 10000)),
		jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return nil, 0, translate("run index", err)
	}
	defer it.Stop()
	bad := 0
	prefix := "$KV." + RunsBucket + "."
	for range pending {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return nil, 0, translate("run index", err)
		}
		key := strings.TrimPrefix(m.Subject(), prefix)
		if op := m.Headers().Get("KV-Operation"); op != "" {
			delete(out, key) // a delete or purge marker
		} else if f, err := decodeFinalRun(key, []byte(m.Headers().Get(runEntryHeader))); err == nil {
			out[key] = f
		} else {
			bad++
		}
	}
	return out, bad, nil
}

// runIndexMem is MemoryStore's run index.
type runIndexMem struct {
	mu        sync.Mutex
	entries   map[string][]byte
	snapshots map[string][]byte
}

// PutFinalRun implements RunIndex.
func (s *MemoryStore) PutFinalRun(_ context.Context, f FinalRun, status []byte) error {
	b, err := encodeFinalRun(f)
	if err != nil {
		return err
	}
	var snap []byte
	if status != nil {
		if snap, err = encodeSnapshot(f.Seq, status); err != nil {
			return err
		}
	}
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	if s.index.entries == nil {
		s.index.entries, s.index.snapshots = map[string][]byte{}, map[string][]byte{}
	}
	if snap != nil {
		s.index.snapshots[f.Run] = snap
	}
	s.index.entries[f.Run] = b
	return nil
}

// FinalRunStatus implements RunIndex.
func (s *MemoryStore) FinalRunStatus(_ context.Context, run string) (uint64, []byte, error) {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	b, ok := s.index.snapshots[run]
	if !ok {
		return 0, nil, fmt.Errorf("run status snapshot of %s: %w", run, ErrNotFound)
	}
	return decodeSnapshot(run, b)
}

// FinalRuns implements RunIndex.
func (s *MemoryStore) FinalRuns(context.Context) (map[string]FinalRun, int, error) {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	out, bad := map[string]FinalRun{}, 0
	for k, b := range s.index.entries {
		if f, err := decodeFinalRun(k, b); err == nil {
			out[k] = f
		} else {
			bad++
		}
	}
	return out, bad, nil
}

// PutRawRunIndexEntry stores b as key's entry without any check: tests use
// it to damage the index.
func (s *MemoryStore) PutRawRunIndexEntry(key string, b []byte) {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	if s.index.entries == nil {
		s.index.entries, s.index.snapshots = map[string][]byte{}, map[string][]byte{}
	}
	s.index.entries[key] = bytes.Clone(b)
}

// DropRunIndex forgets every entry, as a deleted bucket would.
func (s *MemoryStore) DropRunIndex() {
	s.index.mu.Lock()
	defer s.index.mu.Unlock()
	s.index.entries, s.index.snapshots = nil, nil
}
