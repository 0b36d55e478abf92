package events

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
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
//
// The payload is encoding/json's; the envelope around it is written here,
// in wireEnvelope's key order, as encoding/json would write it (every
// envelope string is plain ASCII once validated: a type, a token-safe run
// id, an RFC 3339 time), so the payload's bytes are not compacted a second
// time. TestEncodeMatchesWireEnvelope holds the two forms equal.
func Encode(e Envelope) ([]byte, error) {
	e.Schema = cmp.Or(e.Schema, SchemaVersion)
	if err := e.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", e.Type, err)
	}
	b := make([]byte, 0, len(payload)+len(e.Run)+96)
	b = append(b, `{"schema":`...)
	b = strconv.AppendInt(b, int64(e.Schema), 10)
	b = appendPlainField(b, "type", string(e.Type))
	b = appendPlainField(b, "run", e.Run)
	if e.Lane != RunLane {
		b = append(b, `,"lane":`...)
		b = strconv.AppendInt(b, int64(e.Lane), 10)
	}
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, e.Seq, 10)
	}
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","payload":`...)
	b = append(b, payload...)
	b = append(b, '}')
	if len(b) > MaxEventBytes {
		return nil, &LimitError{What: "event " + string(e.Type), Size: len(b), Max: MaxEventBytes, Limit: "MaxEventBytes"}
	}
	return b, nil
}

// appendPlainField appends ,"key":"value" for a value Validate has
// checked: a known type or a token-safe id, no character JSON escapes.
func appendPlainField(b []byte, key, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":"`...)
	b = append(b, value...)
	return append(b, '"')
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
	if e, ok := decodeCanonical(b, ""); ok {
		return e, nil
	}
	return decodeStrict(b)
}

// decodeString is Decode of an event held as a string (the memory store
// keeps them so): the canonical path reads the string's own bytes, and
// its strings are slices of it, with no copy of it made first; anything
// else is decoded from a copy, exactly as Decode would.
func decodeString(s string) (Envelope, error) {
	if len(s) > MaxEventBytes {
		return Decode([]byte(s))
	}
	if e, ok := decodeCanonical(bytesOf(s), s); ok {
		return e, nil
	}
	return decodeStrict([]byte(s))
}

// decodeStrict is Decode's path for every input decodeCanonical declines:
// the token-by-token strict check, then each rule with its own error.
func decodeStrict(b []byte) (Envelope, error) {
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
// every stored event: it accepts exactly the bytes Encode writes for the
// envelope it decodes, and declines everything else (indented goldens,
// other writers, every malformed input), which takes the strict path.
// Identical bytes have exactly the keys Encode writes, each once, in its
// case, with nothing after them, so the strict rules hold without the
// token-by-token check.
//
// The envelope is checked where it was read: splitCanonical accepts only
// the header Encode writes (ASCII fields without escapes, decimals
// without leading zeros, no seq of 0) and the time must format back to
// its own text; the payload is read by its generated decoder
// (decode_generated.go), which accepts only json.Marshal's bytes for the
// value it reads, or when that declines (a payload type it does not
// generate, or bytes in another form), decoded once with
// go-json-experiment's decoder and required to encode back to its own
// bytes (encodesTo); and the envelope must pass Validate, as Encode
// requires. Neither the envelope
// nor the payload's encoding is built as a new slice.
// FuzzDecodeMatchesOracle holds this equal to decoding, encoding the
// whole envelope again and comparing.
//
// whole, when not "", is b as a string (decodeString): strings read are
// then slices of it.
func decodeCanonical(b []byte, whole string) (Envelope, bool) {
	h, ok := splitCanonical(b, whole)
	if !ok {
		return Envelope{}, false
	}
	at, ok := parseUTC(h.time)
	if !ok {
		return Envelope{}, false
	}
	e := Envelope{Schema: SchemaVersion, Type: h.typ, Run: h.run, Lane: h.lane, Seq: h.seq, Time: at}
	d := canonDec{b: h.payload, s: h.payloadString}
	if whole == "" {
		d = newCanonDec(h.payload)
	}
	if p, ok := canonPayloadFrom(h.typ, d); ok {
		// Read in one pass from exactly its own encoding, so encodesTo
		// holds without encoding it (FuzzCanonPayloadIsMarshal).
		e.Payload = p
		return e, e.Validate() == nil
	}
	p, err := decodePayload(h.typ, h.payload, false)
	if err != nil {
		return Envelope{}, false
	}
	e.Payload = p
	if e.Validate() != nil || !encodesTo(p, h.payload) {
		return Envelope{}, false
	}
	return e, true
}

// canonicalHeader is the envelope keys of an event as Encode writes them.
type canonicalHeader struct {
	typ     Type
	run     string
	lane    int
	seq     uint64
	time    string
	payload []byte
	// payloadString is payload as a string, when splitCanonical was given
	// one.
	payloadString string
}

// splitCanonical reads the envelope keys in the one form Encode writes
// them and returns the payload's bytes, without decoding those: the
// schema, type, run, lane and seq exactly as Encode would write the
// values it returns. The time is only read (decodeCanonical checks it
// formats back), the payload only delimited (decodeCanonical checks it
// encodes back), and anything not in this form takes the strict path.
//
// whole, when not "", is b as a string: the strings returned are slices
// of it.
func splitCanonical(b []byte, whole string) (canonicalHeader, bool) {
	h := canonicalHeader{lane: RunLane}
	r := canonicalReader{b: b, s: whole}
	if !r.literal(`{"schema":`) {
		return h, false
	}
	if n, ok := r.uint(); !ok || n != SchemaVersion {
		return h, false
	}
	typ, ok := r.typeField(`,"type":"`)
	if !ok {
		return h, false
	}
	h.typ = typ
	if h.run, ok = r.stringField(`,"run":"`); !ok {
		return h, false
	}
	if r.literal(`,"lane":`) {
		n, ok := r.uint()
		if !ok || n > MaxLanes {
			return h, false
		}
		h.lane = int(n)
	}
	if r.literal(`,"seq":`) {
		if h.seq, ok = r.uint(); !ok || h.seq == 0 { // Encode omits a seq of 0
			return h, false
		}
	}
	if h.time, ok = r.stringField(`,"time":"`); !ok {
		return h, false
	}
	if !r.literal(`,"payload":`) || len(r.b) < 2 || r.b[len(r.b)-1] != '}' {
		return h, false
	}
	h.payload = r.b[:len(r.b)-1]
	if r.s != "" {
		h.payloadString = r.s[:len(r.s)-1]
	}
	return h, true
}

// canonicalReader consumes b from the front; s, when not "", holds the
// same bytes as b as a string, consumed with it.
type canonicalReader struct {
	b []byte
	s string
}

// skip consumes n bytes.
func (r *canonicalReader) skip(n int) {
	r.b = r.b[n:]
	if r.s != "" {
		r.s = r.s[n:]
	}
}

func (r *canonicalReader) literal(s string) bool {
	if !bytes.HasPrefix(r.b, []byte(s)) {
		return false
	}
	r.skip(len(s))
	return true
}

// typeField is stringField for the event type, which must be one of
// Types (the string returned is the constant's, not a new one); any
// other declines, and the strict path reports it.
func (r *canonicalReader) typeField(prefix string) (Type, bool) {
	if !r.literal(prefix) {
		return "", false
	}
	end := bytes.IndexByte(r.b, '"')
	if end < 0 || bytes.IndexByte(r.b[:end], '\\') >= 0 {
		return "", false
	}
	name := r.b[:end]
	r.skip(end + 1)
	for _, t := range Types {
		if string(t) == string(name) {
			return t, true
		}
	}
	return "", false
}

// uint reads a decimal without sign or leading zeros (Encode's form).
func (r *canonicalReader) uint() (uint64, bool) {
	i := 0
	for i < len(r.b) && i < 19 && r.b[i] >= '0' && r.b[i] <= '9' {
		i++
	}
	if i == 0 || (i > 1 && r.b[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(string(r.b[:i]), 10, 64)
	if err != nil {
		return 0, false
	}
	r.skip(i)
	return n, true
}

// stringField reads prefix, then a string body up to its closing quote;
// a backslash (an escape, which Encode never writes here) refuses.
func (r *canonicalReader) stringField(prefix string) (string, bool) {
	if !r.literal(prefix) {
		return "", false
	}
	end := bytes.IndexByte(r.b, '"')
	if end < 0 || bytes.IndexByte(r.b[:end], '\\') >= 0 {
		return "", false
	}
	var s string
	if r.s != "" {
		s = r.s[:end]
	} else {
		s = string(r.b[:end])
	}
	r.skip(end + 1)
	return s, true
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
