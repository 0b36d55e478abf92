package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// notGenerated are the payload types the generated decoders leave to the
// decode-and-re-encode path: none now (the header of decode_generated.go
// lists them).
var notGenerated = map[Type]bool{}

// requireCanonPayload requires canonPayload to agree with the path it
// replaces on raw: when it accepts, json.Marshal writes raw again for its
// value and go-json-experiment's decoder reads the same value from raw.
func requireCanonPayload(t *testing.T, typ Type, raw []byte) (Payload, bool) {
	t.Helper()
	p, ok := canonPayload(typ, raw)
	if !ok {
		return nil, false
	}
	enc, err := json.Marshal(p)
	require.NoError(t, err)
	require.Equal(t, string(raw), string(enc), "canonPayload accepted bytes json.Marshal does not write for its value")
	want, err := decodePayload(typ, raw, false)
	require.NoError(t, err, "canonPayload accepted bytes the decoder it replaces refuses")
	require.Equal(t, want, p)
	return p, true
}

// TestCanonPayloadReadsMarshal: every generated payload type reads
// json.Marshal's bytes for its golden value, its zero value, and a value
// with every member set (strings needing each escape encoding/json
// writes, maps, pointers, byte slices) and with every slice and map empty
// but not nil.
func TestCanonPayloadReadsMarshal(t *testing.T) {
	goldens := map[Type]Payload{}
	for _, env := range goldenEnvelopes(t) {
		goldens[env.Type] = env.Payload
	}
	for _, p := range generatedPayloads {
		typ := p.EventType()
		t.Run(string(typ), func(t *testing.T) {
			rt := reflect.TypeOf(p)
			full := reflect.New(rt).Elem()
			fill(full, 0, false)
			empty := reflect.New(rt).Elem()
			fill(empty, 0, true)
			values := []any{goldens[typ], reflect.Zero(rt).Interface(), full.Interface(), empty.Interface()}
			for i, v := range values {
				raw, err := json.Marshal(v)
				require.NoError(t, err)
				_, ok := requireCanonPayload(t, typ, raw)
				require.Equal(t, !notGenerated[typ], ok, "value %d: %s", i, raw)
			}
		})
	}
}

// fill sets every exported member of v reachable within a few levels:
// strings with every character encoding/json escapes, numbers and bools
// set, two elements in each slice and map (none when empty is set: then
// they are empty but not nil).
func fill(v reflect.Value, depth int, empty bool) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("a<b>&c\"d\\e\nf\r\tg\b\f\x01\x1fé\u2028\u2029\U0001F600")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float64:
		v.SetFloat(0.0125)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1, empty)
		v.Set(p)
	case reflect.Slice:
		n := 2
		if empty {
			n = 0
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), depth+1, empty)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		if !empty {
			for _, k := range []string{"b", "a"} {
				e := reflect.New(v.Type().Elem()).Elem()
				fill(e, depth+1, empty)
				m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
			}
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 6, 4, 5, 6, 120, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1, empty)
			}
		}
	}
}

// TestCanonPayloadDeclines: bytes that are valid JSON for the type but
// not json.Marshal's encoding of what they hold are declined, so the
// decode-and-re-encode path decides them as before.
func TestCanonPayloadDeclines(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
	}{
		{"a space", `{"reason":"r", "by":"b"}`},
		{"keys out of order", `{"by":"b","reason":"r"}`},
		{"an unknown key", `{"reason":"r","by":"b","x":1}`},
		{"a key twice", `{"reason":"r","reason":"r","by":"b"}`},
		{"a key in another case", `{"Reason":"r","by":"b"}`},
		{"an escape encoding/json does not write", `{"reason":"\u0072","by":"b"}`},
		{"a slash escaped", `{"reason":"a\/b","by":"b"}`},
		{"an HTML character unescaped", `{"reason":"<","by":"b"}`},
		{"upper-case hex", `{"reason":"\u001F","by":"b"}`},
		{"a short escape written long", `{"reason":"\u000a","by":"b"}`},
		{"U+2028 unescaped", "{\"reason\":\"\u2028\",\"by\":\"b\"}"},
		{"invalid UTF-8", "{\"reason\":\"\xff\",\"by\":\"b\"}"},
		{"trailing bytes", `{"reason":"r","by":"b"}x`},
		{"null for a string", `{"reason":null,"by":"b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := canonPayload(TypeCancel, []byte(tc.raw))
			require.False(t, ok)
		})
	}
	// The same control bytes accepted in encoding/json's form.
	p, ok := requireCanonPayload(t, TypeCancel, []byte(`{"reason":"\u003c\u0026\u003e\u2028\n\u001f","by":"b"}`))
	require.True(t, ok)
	require.Equal(t, "<&>\u2028\n\x1f", p.(Cancel).Reason)

	_, ok = requireCanonPayload(t, TypeClaim, []byte(`{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reportSeq":7}`))
	require.True(t, ok)
	for _, tc := range []struct{ name, raw string }{
		{"an omitempty member present but empty", `{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reporter":""}`},
		{"an omitempty number present as 0", `{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reportSeq":0}`},
		{"a leading zero", `{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reportSeq":07}`},
		{"a fraction", `{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reportSeq":7.0}`},
		{"a negative unsigned", `{"executionId":"e","workerId":"w","lease":{"ttlMs":1,"revision":1},"reportSeq":-7}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := canonPayload(TypeClaim, []byte(tc.raw))
			require.False(t, ok)
		})
	}
}

// FuzzCanonPayloadIsMarshal: whatever canonPayload accepts is
// json.Marshal's encoding of the value it returns, and the decoder it
// stands in for reads the same value from it. Its seeds are the
// encodings TestCanonPayloadReadsMarshal reads.
func FuzzCanonPayloadIsMarshal(f *testing.F) {
	for _, env := range goldenEnvelopes(f) {
		raw, err := json.Marshal(env.Payload)
		require.NoError(f, err)
		f.Add(uint8(typeIndex(env.Type)), raw)
	}
	for _, p := range generatedPayloads {
		for _, empty := range []bool{false, true} {
			v := reflect.New(reflect.TypeOf(p)).Elem()
			fill(v, 0, empty)
			raw, err := json.Marshal(v.Interface())
			require.NoError(f, err)
			f.Add(uint8(typeIndex(p.EventType())), raw)
		}
	}
	f.Fuzz(func(t *testing.T, i uint8, raw []byte) {
		typ := Types[int(i)%len(Types)]
		requireCanonPayload(t, typ, raw)
	})
}

func typeIndex(t Type) int {
	for i, x := range Types {
		if x == t {
			return i
		}
	}
	return 0
}

// TestCanonStoredReadsMarshal: the records unmarshalStored reads are read
// by their generated decoders from json.Marshal's bytes, to the value
// encoding/json's decoder (the path they replace) reads; a time in
// another zone and bytes in another form are declined and leave the
// target untouched.
func TestCanonStoredReadsMarshal(t *testing.T) {
	for _, v := range generatedStored {
		rt := reflect.TypeOf(v).Elem()
		t.Run(rt.Name(), func(t *testing.T) {
			full := reflect.New(rt).Elem()
			fill(full, 0, false)
			empty := reflect.New(rt).Elem()
			fill(empty, 0, true)
			for i, val := range []any{reflect.Zero(rt).Interface(), full.Interface(), empty.Interface()} {
				raw, err := json.Marshal(val)
				require.NoError(t, err)
				requireCanonStored(t, rt, raw, true, "value %d: %s", i, raw)
				spaced := append([]byte(" "), raw...)
				requireCanonStored(t, rt, spaced, false, "value %d with a space first", i)
			}
		})
	}
	raw, err := json.Marshal(presenceRecord{WorkerID: "w", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))})
	require.NoError(t, err)
	requireCanonStored(t, reflect.TypeFor[presenceRecord](), raw, false, "a time with an offset")
}

func requireCanonStored(t *testing.T, rt reflect.Type, raw []byte, accept bool, msg string, args ...any) {
	t.Helper()
	require.Equal(t, accept, checkCanonStored(t, rt, raw), append([]any{msg}, args...)...)
}

// checkCanonStored requires canonStored to agree with the path it replaces
// on raw, as requireCanonPayload does, and to leave a declined record as
// it was; it reports whether canonStored accepted raw.
func checkCanonStored(t *testing.T, rt reflect.Type, raw []byte) bool {
	t.Helper()
	got := reflect.New(rt)
	if !canonStored(got.Interface(), raw) {
		require.True(t, got.Elem().IsZero(), "a declined record is left as it was")
		return false
	}
	enc, err := json.Marshal(got.Interface())
	require.NoError(t, err)
	require.Equal(t, string(raw), string(enc))
	want := reflect.New(rt)
	require.NoError(t, json.Unmarshal(raw, want.Interface()))
	require.Equal(t, want.Interface(), got.Interface())
	return true
}

// FuzzCanonStoredIsMarshal is FuzzCanonPayloadIsMarshal for the records
// unmarshalStored reads.
func FuzzCanonStoredIsMarshal(f *testing.F) {
	for i, v := range generatedStored {
		for _, empty := range []bool{false, true} {
			x := reflect.New(reflect.TypeOf(v).Elem()).Elem()
			fill(x, 0, empty)
			raw, err := json.Marshal(x.Interface())
			require.NoError(f, err)
			f.Add(uint8(i), raw)
		}
	}
	f.Fuzz(func(t *testing.T, i uint8, raw []byte) {
		checkCanonStored(t, reflect.TypeOf(generatedStored[int(i)%len(generatedStored)]).Elem(), raw)
	})
}
