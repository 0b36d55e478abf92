package events

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// SchemaVersion is the envelope schema this build writes and reads. A new
// event type, a new key or a changed meaning bumps it; Decode refuses other
// versions with ErrSchemaVersion.
const SchemaVersion = 1

// MaxEventBytes is the largest encoded envelope a Store accepts (512 KiB).
// It stays below NATS's default 1 MiB max_payload with room for headers. A
// finish event embeds its decoded receipt, so a receipt near
// policy.MaxReceiptBytes (1 MiB) cannot be recorded whole.
const MaxEventBytes = 512 << 10

// Envelope is one event: who it belongs to, where it sits in the log, when
// it was recorded, and its typed payload.
//
// JSON form (keys in this order; lane omitted for run-level events; seq
// omitted when 0):
//
//	{"schema":1,"type":"launch","run":"R","lane":0,"seq":7,
//	 "time":"2026-01-02T03:04:05.123456789Z","payload":{...}}
type Envelope struct {
	// Schema is the envelope schema version. 0 means SchemaVersion when
	// encoding; decoding always sets it.
	Schema int
	// Type names the payload's type; it must equal Payload.EventType().
	Type Type
	// Run is the run id (ValidateRunID).
	Run string
	// Lane is the 0-based lane index, or RunLane for run-level events.
	Lane int
	// Seq is the store's sequence of this event, assigned by the Store on
	// Append and set on every envelope a Store returns. It increases along a
	// subject and across the whole store but is not contiguous within a
	// subject (JetStream's stream sequence). It is the value to pass as
	// expectedLastSeq for the next append on the same subject. Append ignores
	// the value it is given.
	Seq uint64
	// Time is when the event was recorded, set by the caller (the engine's
	// clock; stores never read a clock). Encoded as RFC 3339 with nanoseconds
	// in UTC.
	Time time.Time
	// Payload is the typed body; see Type for which struct each type takes.
	Payload Payload
}

// NewEnvelope builds an envelope of p's type for run and lane (RunLane for
// run-level events) recorded at at (converted to UTC).
func NewEnvelope(run string, lane int, at time.Time, p Payload) Envelope {
	e := Envelope{Schema: SchemaVersion, Run: run, Lane: lane, Time: at.UTC(), Payload: p}
	if p != nil {
		e.Type = p.EventType()
	}
	return e
}

// Subject is the envelope's event subject, EventSubject(Run, Lane).
func (e Envelope) Subject() string { return EventSubject(e.Run, e.Lane) }

// ReportSeq is the reports-stream sequence up to which the event says the
// run's reports are handled: the report a claim, finish or audit records,
// or run-final's ReportsThrough; 0 for every other event.
func (e Envelope) ReportSeq() uint64 {
	switch p := e.Payload.(type) {
	case Claim:
		return p.ReportSeq
	case Finish:
		return p.ReportSeq
	case Audit:
		return p.ReportSeq
	case RunFinal:
		return p.ReportsThrough
	}
	return 0
}

// Validate checks the envelope and its payload: schema, known type matching
// the payload, valid run id, a lane allowed by the type's scope, a set time,
// and the payload's own rules. Every error matches ErrInvalid.
func (e Envelope) Validate() error {
	if e.Schema != 0 && e.Schema != SchemaVersion {
		return &DecodeError{What: "envelope", Err: schemaErr(e.Schema)}
	}
	if e.Payload == nil {
		return invalidf("envelope: payload is required")
	}
	if !e.Type.Valid() {
		return invalidf("envelope: unknown event type %q", e.Type)
	}
	if pt := e.Payload.EventType(); pt != e.Type {
		return invalidf("envelope: type %q carries a %q payload", e.Type, pt)
	}
	if err := ValidateRunID(e.Run); err != nil {
		return err
	}
	switch e.Type.Scope() {
	case ScopeRun:
		if e.Lane != RunLane {
			return invalidf("%s: run-level event must have lane RunLane (-1), got %d", e.Type, e.Lane)
		}
	case ScopeLane:
		if e.Lane < 0 || e.Lane > MaxLanes {
			return invalidf("%s: lane-level event needs a lane in 0..%d, got %d", e.Type, MaxLanes, e.Lane)
		}
	default:
		if e.Lane < RunLane || e.Lane > MaxLanes {
			return invalidf("%s: lane %d out of range", e.Type, e.Lane)
		}
	}
	if e.Time.IsZero() {
		return invalidf("%s: time is required", e.Type)
	}
	if err := e.Payload.validate(); err != nil {
		return &DecodeError{What: "payload " + string(e.Type), Err: err}
	}
	return nil
}

// appendMsgID is the deterministic Nats-Msg-Id of an append:
// <run>.<lane>.<expected>.<type>.<16 hex digits of sha256(encoded)>. A
// retried append of the same bytes at the same position carries the same id
// and is stored once; a different event at the same position carries a
// different id, so it is a conflict, never silently taken for the first.
func appendMsgID(e Envelope, expected uint64, encoded []byte) string {
	sum := sha256.Sum256(encoded)
	return e.Run + "." + LaneToken(e.Lane) + "." + strconv.FormatUint(expected, 10) + "." +
		string(e.Type) + "." + hex.EncodeToString(sum[:8])
}
