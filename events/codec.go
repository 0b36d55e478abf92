package events

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// wireEnvelope is the envelope's JSON form; its field order is the key order
// of every encoded event and golden file.
type wireEnvelope struct {
	Schema  int             `json:"schema"`
	Type    Type            `json:"type"`
	Run     string          `json:"run"`
	Lane    *int            `json:"lane,omitempty"`
	Seq     uint64          `json:"seq,omitempty"`
	Time    string          `json:"time"`
	Payload json.RawMessage `json:"payload"`
}

// Encode validates e and returns its JSON form. An encoding over
// MaxEventBytes is a *LimitError (ErrTooLarge).
func Encode(e Envelope) ([]byte, error) {
	e.Schema = cmp.Or(e.Schema, SchemaVersion)
	if err := e.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", e.Type, err)
	}
	w := wireEnvelope{Schema: e.Schema, Type: e.Type, Run: e.Run, Seq: e.Seq,
		Time: e.Time.UTC().Format(time.RFC3339Nano), Payload: payload}
	if e.Lane != RunLane {
		lane := e.Lane
		w.Lane = &lane
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode %s envelope: %w", e.Type, err)
	}
	if len(b) > MaxEventBytes {
		return nil, &LimitError{What: "event " + string(e.Type), Size: len(b), Max: MaxEventBytes, Limit: "MaxEventBytes"}
	}
	return b, nil
}

// Decode strictly decodes one envelope: at most MaxEventBytes, exactly the
// envelope keys, schema SchemaVersion, a known type, a UTC RFC 3339 time, a
// payload with exactly its type's keys, nothing after the object, and every
// rule of Validate. Errors are *DecodeError (ErrInvalid; also ErrTooLarge or
// ErrSchemaVersion where that is the cause).
func Decode(b []byte) (Envelope, error) {
	if len(b) > MaxEventBytes {
		return Envelope{}, &DecodeError{What: "envelope", Err: &LimitError{What: "event", Size: len(b), Max: MaxEventBytes, Limit: "MaxEventBytes"}}
	}
	if e, ok := decodeCanonical(b); ok {
		return e, nil
	}
	var w wireEnvelope
	if err := strictUnmarshal(b, &w); err != nil {
		return Envelope{}, &DecodeError{What: "envelope", Err: err}
	}
	if w.Schema != SchemaVersion {
		return Envelope{}, &DecodeError{What: "envelope", Err: schemaErr(w.Schema)}
	}
	if !w.Type.Valid() {
		return Envelope{}, &DecodeError{What: "envelope", Err: fmt.Errorf("unknown event type %q", w.Type)}
	}
	if w.Payload == nil {
		return Envelope{}, &DecodeError{What: "envelope", Err: fmt.Errorf("payload is required")}
	}
	at, err := time.Parse(time.RFC3339Nano, w.Time)
	if err != nil || !strings.HasSuffix(w.Time, "Z") {
		return Envelope{}, &DecodeError{What: "envelope", Err: fmt.Errorf("time %q: want RFC 3339 in UTC (…Z)", w.Time)}
	}
	lane := RunLane
	if w.Lane != nil {
		if *w.Lane < 0 {
			return Envelope{}, &DecodeError{What: "envelope", Err: fmt.Errorf("lane %d: omit the key for run-level events", *w.Lane)}
		}
		lane = *w.Lane
	}
	p, err := decodePayload(w.Type, w.Payload, true)
	if err != nil {
		return Envelope{}, &DecodeError{What: "payload " + string(w.Type), Err: err}
	}
	e := Envelope{Schema: w.Schema, Type: w.Type, Run: w.Run, Lane: lane, Seq: w.Seq, Time: at.UTC(), Payload: p}
	if err := e.Validate(); err != nil {
		return Envelope{}, err
	}
	return e, nil
}

// decodeCanonical is Decode's fast path for bytes Encode wrote, which is
// every stored event: decode with encoding/json, re-encode, and accept only
// if the bytes are identical. Identical bytes have exactly the keys Encode
// writes, each once, in its case, with nothing after them, so the strict
// rules hold without the token-by-token check. Anything else (indented
// goldens, other writers, every malformed input) takes the strict path.
func decodeCanonical(b []byte) (Envelope, bool) {
	var w wireEnvelope
	if json.Unmarshal(b, &w) != nil || w.Schema != SchemaVersion || !w.Type.Valid() {
		return Envelope{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, w.Time)
	if err != nil {
		return Envelope{}, false
	}
	lane := RunLane
	if w.Lane != nil {
		lane = *w.Lane
	}
	p, err := decodePayload(w.Type, w.Payload, false)
	if err != nil {
		return Envelope{}, false
	}
	e := Envelope{Schema: w.Schema, Type: w.Type, Run: w.Run, Lane: lane, Seq: w.Seq, Time: at.UTC(), Payload: p}
	again, err := Encode(e)
	if err != nil || !bytes.Equal(again, b) {
		return Envelope{}, false
	}
	return e, true
}

// MarshalJSON is Encode, so an Envelope inside other JSON (status --json)
// has its wire form.
func (e Envelope) MarshalJSON() ([]byte, error) { return Encode(e) }

// UnmarshalJSON is Decode: json.Unmarshal into an Envelope is strict too.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	d, err := Decode(b)
	if err != nil {
		return err
	}
	*e = d
	return nil
}

func schemaErr(v int) error {
	return fmt.Errorf("%w: schema %d (this build reads %d)", ErrSchemaVersion, v, SchemaVersion)
}
