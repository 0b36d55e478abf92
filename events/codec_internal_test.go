package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wireEncode is the envelope as encoding/json writes wireEnvelope: the
// form Encode wrote before it built the envelope itself, and the one the
// golden files pin.
func wireEncode(t testing.TB, e Envelope) []byte {
	t.Helper()
	payload, err := json.Marshal(e.Payload)
	require.NoError(t, err)
	w := wireEnvelope{Schema: SchemaVersion, Type: e.Type, Run: e.Run, Seq: e.Seq,
		Time: e.Time.UTC().Format(time.RFC3339Nano), Payload: payload}
	if e.Lane != RunLane {
		lane := e.Lane
		w.Lane = &lane
	}
	b, err := json.Marshal(w)
	require.NoError(t, err)
	return b
}

// goldenEnvelopes is every golden event file, decoded.
func goldenEnvelopes(t testing.TB) []Envelope {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	require.NoError(t, err)
	var out []Envelope
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if env, err := Decode(b); err == nil {
			out = append(out, env)
		}
	}
	require.GreaterOrEqual(t, len(out), len(Types), "every event type has a golden file")
	return out
}

// TestEncodeMatchesWireEnvelope: Encode's envelope is byte for byte
// encoding/json's, for every event type, on a lane and at run level, with
// and without a sequence, with whole and fractional seconds and a time in
// another zone.
func TestEncodeMatchesWireEnvelope(t *testing.T) {
	zone := time.FixedZone("x", -7*3600)
	for _, env := range goldenEnvelopes(t) {
		for _, seq := range []uint64{0, 7, 1<<63 + 5} {
			for _, at := range []time.Time{env.Time, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 9, 0, 0, 120, zone)} {
				e := env
				e.Seq, e.Time = seq, at
				got, err := Encode(e)
				require.NoError(t, err)
				require.Equal(t, string(wireEncode(t, e)), string(got), "%s seq %d at %s", e.Type, seq, at)
				back, err := Decode(got)
				require.NoError(t, err)
				e.Schema, e.Time = SchemaVersion, at.UTC()
				require.Equal(t, e, back)
			}
		}
	}
}

// FuzzCanonicalIsStrict: the fast path accepts nothing the strict path
// refuses, and decodes what it accepts to the strict path's value.
func FuzzCanonicalIsStrict(f *testing.F) {
	for _, env := range goldenEnvelopes(f) {
		b, err := Encode(env)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeCanonical(b, "")
		fromString, okString := decodeCanonical(bytesOf(string(b)), string(b))
		require.Equal(t, ok, okString, "reading from a string decides otherwise")
		require.Equal(t, fast, fromString)
		strict, err := decodeStrict(b)
		if !ok {
			return
		}
		require.NoError(t, err, "the fast path accepted what the strict path refuses")
		require.Equal(t, strict, fast)
	})
}

// BenchmarkDecodeFloor is the least any decoder built on encoding/json
// does for a stored event: split the envelope and json.Unmarshal the
// payload into its type, with no check at all. BenchmarkDecode's
// events/s over this one's is what the checks cost; this one's events/s
// is the ceiling for replay with encoding/json (docs/PERFORMANCE.md):
//
//	go test ./events -run '^$' -bench 'BenchmarkDecode' -count 5
func BenchmarkDecodeFloor(b *testing.B) {
	var data [][]byte
	for _, env := range goldenEnvelopes(b) {
		env.Run = "0b5e6f1c-5b7e-4a8e-9a61-2f4c8d7e9b10"
		d, err := Encode(env)
		require.NoError(b, err)
		data = append(data, d)
	}
	n := 0
	for b.Loop() {
		h, ok := splitCanonical(data[n%len(data)], "")
		if !ok {
			b.Fatal("not canonical")
		}
		if _, err := decodePayload(h.typ, h.payload, false); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// FuzzMessageCanonicalIsStrict: for jobs, reports, claim and presence
// records, the fast path
// accepts nothing strictUnmarshal refuses, and decodes what it accepts to
// strictUnmarshal's value.
func FuzzMessageCanonicalIsStrict(f *testing.F) {
	for _, name := range []string{"job", "report-claimed", "report-finished", "report-abandoned", "report-redelivered", "report-finished-stall"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".golden"))
		require.NoError(f, err)
		f.Add(b)
		var compact bytes.Buffer
		require.NoError(f, json.Compact(&compact, b))
		f.Add(compact.Bytes())
	}
	for _, v := range []any{Lease{WorkerID: "worker-a:1", State: LeaseHeld, TTL: time.Minute, Renewals: 3}.record(),
		Lease{WorkerID: "worker-a:1", State: LeaseAbandoned, TTL: time.Minute, AbandonedBy: "engine"}.record()} {
		b, err := json.Marshal(v)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		requireFastIsStrict[Job](t, b, "job")
		requireFastIsStrict[Report](t, b, "report")
		requireFastIsStrict[claimRecord](t, b, "claim")
		requireFastIsStrict[presenceRecord](t, b, "presence")
	})
}

// requireFastIsStrict: if the fast path accepts b as a T, the strict path
// accepts it too, with the same value.
func requireFastIsStrict[T any](t *testing.T, b []byte, what string) {
	t.Helper()
	var fast, strict T
	if canonicalUnmarshal(b, &fast) {
		require.NoError(t, strictUnmarshal(b, &strict), "the fast path accepted a %s the strict path refuses", what)
		require.Equal(t, strict, fast)
	}
}

// TestMessageFastPathTaken: compact jobs and reports, as encodeMessage
// writes them, take the fast path; the indented goldens do not and still
// decode.
func TestMessageFastPathTaken(t *testing.T) {
	for _, name := range []string{"job", "report-claimed", "report-finished", "report-abandoned", "report-redelivered", "report-finished-stall"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".golden"))
		require.NoError(t, err)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, b))
		var v any = &Report{}
		if name == "job" {
			v = &Job{}
		}
		require.False(t, canonicalUnmarshal(b, v), "%s: indented bytes are not canonical", name)
		require.True(t, canonicalUnmarshal(compact.Bytes(), v), "%s: compact bytes are canonical", name)
	}
}
