package events

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// oracleDecode is Decode as it was before the canonical path compared the
// payload's encoding alone (issue 29): decode, re-encode the whole
// envelope with Encode, compare, else the strict path. It is the oracle
// of FuzzDecodeMatchesOracle; keep it as it is.
func oracleDecode(b []byte) (Envelope, error) {
	if len(b) > MaxEventBytes {
		return Envelope{}, &DecodeError{What: "envelope", Err: &LimitError{What: "event", Size: len(b), Max: MaxEventBytes, Limit: "MaxEventBytes"}}
	}
	if e, ok := oracleDecodeCanonical(b); ok {
		return e, nil
	}
	return decodeStrict(b)
}

// oracleDecodeCanonical is the canonical path before issue 29.
func oracleDecodeCanonical(b []byte) (Envelope, bool) {
	h, ok := oracleSplitCanonical(b)
	if !ok {
		return Envelope{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, h.time)
	if err != nil {
		return Envelope{}, false
	}
	p, err := decodePayload(h.typ, h.payload, false)
	if err != nil {
		return Envelope{}, false
	}
	e := Envelope{Schema: SchemaVersion, Type: h.typ, Run: h.run, Lane: h.lane, Seq: h.seq, Time: at.UTC(), Payload: p}
	again, err := Encode(e)
	if err != nil || !bytes.Equal(again, b) {
		return Envelope{}, false
	}
	return e, true
}

// oracleSplitCanonical is splitCanonical before issue 29.
func oracleSplitCanonical(b []byte) (canonicalHeader, bool) {
	h := canonicalHeader{lane: RunLane}
	r := canonicalReader{b: b}
	if !r.literal(`{"schema":`) {
		return h, false
	}
	if n, ok := r.uint(); !ok || n != SchemaVersion {
		return h, false
	}
	typ, ok := r.stringField(`,"type":"`)
	if !ok {
		return h, false
	}
	h.typ = Type(typ)
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
		if h.seq, ok = r.uint(); !ok {
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
	return h, true
}

// FuzzDecodeMatchesOracle: Decode gives exactly what oracleDecode gives
// for every input (the same envelope, or an error with the same text),
// and its canonical path accepts exactly what the oracle's does.
func FuzzDecodeMatchesOracle(f *testing.F) {
	for _, env := range goldenEnvelopes(f) {
		b, err := Encode(env)
		require.NoError(f, err)
		f.Add(b)
		env.Seq, env.Lane = 7, max(env.Lane, 0)
		if b, err := Encode(env); err == nil {
			f.Add(b)
		}
	}
	for _, s := range oracleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := oracleDecode(b)
		got, gotErr := Decode(b)
		// A stored string decodes as its bytes do (the memory store's path).
		gotString, gotStringErr := decodeString(string(b))
		if wantErr != nil {
			require.Error(t, gotErr)
			require.Equal(t, wantErr.Error(), gotErr.Error())
			require.Error(t, gotStringErr)
			require.Equal(t, wantErr.Error(), gotStringErr.Error())
			return
		}
		require.NoError(t, gotStringErr)
		require.Equal(t, want, gotString)
		require.NoError(t, gotErr)
		require.Equal(t, want, got)
		_, wantFast := oracleDecodeCanonical(b)
		_, gotFast := decodeCanonical(b, "")
		require.Equal(t, wantFast, gotFast, "the canonical path accepts what the oracle's does")
	})
}

// oracleSeeds are the header and payload forms the canonical path must
// decline or accept exactly as the oracle does: the cases its checks
// were written for.
var oracleSeeds = []string{
	// canonical, run-level and on a lane, with a seq
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","seq":9,"time":"2026-01-01T00:00:00.5Z","payload":{"reason":"r","by":"b"}}`,
	// a seq of 0 is never written: the strict path decides
	`{"schema":1,"type":"cancel","run":"R","lane":0,"seq":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	// leading zeros, a negative lane, a lane on a run-level type
	`{"schema":1,"type":"cancel","run":"R","lane":01,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":-1,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","seq":07,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	// times that parse but are not Encode's: an offset, trailing zeros, a lower-case z
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00+00:00","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00.500Z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T01:00:00+01:00","payload":{"reason":"r","by":"b"}}`,
	// payloads that decode but are not their encoding: key order, a
	// duplicate, another case, whitespace, an escape, null, trailing data
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"by":"b","reason":"r"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"Reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"} }`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"\u0072","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"<&>","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"\u003c\u0026\u003e","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":null,"by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}x`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b","extra":1}}`,
	`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"\xff","by":"b"}}`,
	// an unknown type, a schema the build does not read, an escaped run
	`{"schema":1,"type":"nope","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{}}`,
	`{"schema":2,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
	`{"schema":1,"type":"cancel","run":"\u0052","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`,
}
