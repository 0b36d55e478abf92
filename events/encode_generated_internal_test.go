package events

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// randStrings are strings that take every path of json.Marshal's string
// encoder: HTML characters, every short escape, other control characters,
// U+2028 and U+2029, multi-byte and invalid UTF-8.
var randStrings = []string{
	"", "a", "codex", "<&>", "\"q\"\\", "\b\f\n\r\t", "\x00\x01\x1f\x7f", "é😀",
	"a\u2028b\u2029", "\xff", "x\xc3", "\xed\xa0\x80", "/work/run/x1/receipt.json", "ok\xe2\x80",
}

var (
	randZoneEast = time.FixedZone("E", 5*3600+30*60)
	randZoneFar  = time.FixedZone("F", 25*3600) // MarshalJSON refuses it
)

// randFill sets v to a random value of its type: nil, empty and filled
// slices, maps and pointers; extreme numbers; the strings above and
// random bytes; times in and out of what RFC 3339 can write.
func randFill(v reflect.Value, r *rand.Rand, depth int) {
	switch {
	case v.Type() == timeType:
		sec := r.Int64N(400000000000) - 100000000000 // years ~-1200 to ~10600
		t := time.Unix(sec, r.Int64N(1e9))
		switch r.IntN(4) {
		case 0:
			t = t.UTC()
		case 1:
			t = t.In(randZoneEast)
		case 2:
			t = t.In(randZoneFar)
		default:
			t = time.Date(2026, 12, 6, 7, 8, 9, int(r.Int64N(3))*1000, time.UTC)
		}
		v.Set(reflect.ValueOf(t))
		return
	}
	switch v.Kind() {
	case reflect.String:
		s := randStrings[r.IntN(len(randStrings))]
		if r.IntN(4) == 0 {
			b := make([]byte, r.IntN(12))
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			s = string(b)
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := []int64{0, -1, 1, math.MinInt64, math.MaxInt64, r.Int64()}[r.IntN(6)]
		v.SetInt(x) // truncated to the kind's size, as a conversion would
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint([]uint64{0, 1, math.MaxUint64, r.Uint64()}[r.IntN(4)])
	case reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 1e21, 1e20, 1e-6, 1e-7, -2.5e-300, 0.1, r.NormFloat64() * 1e6, math.NaN(), math.Inf(1)}[r.IntN(11)])
	case reflect.Pointer:
		if depth > 6 || r.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		randFill(p.Elem(), r, depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 6 || r.IntN(4) == 0 {
			return
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			randFill(s.Index(i), r, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 6 || r.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			randFill(k, r, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			randFill(e, r, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				randFill(v.Field(i), r, depth+1)
			}
		}
	}
}

// checkGeneratedEncode requires canonAppend to write what json.Marshal
// writes for a random value of each generated root, and to decline
// exactly the values json.Marshal refuses.
func checkGeneratedEncode(t testing.TB, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed>>7))
	for _, root := range generatedEncoders {
		rt := reflect.TypeOf(root).Elem()
		v := reflect.New(rt)
		randFill(v.Elem(), r, 0)
		want, err := json.Marshal(v.Interface())
		prefix := []byte("prefix:")
		got := canonAppend(prefix, v.Interface())
		if err != nil {
			require.Nil(t, got, "%s, seed %d: json.Marshal refuses (%v), the generated encoder wrote %q", rt, seed, err, got)
			continue
		}
		require.NotNil(t, got, "%s, seed %d: declined what json.Marshal writes as %s", rt, seed, want)
		require.Equal(t, "prefix:"+string(want), string(got), "%s, seed %d", rt, seed)
		// The value form dispatches alike.
		require.Equal(t, string(want), string(canonAppend(nil, v.Elem().Interface())), "%s by value, seed %d", rt, seed)
	}
}

// checkGeneratedSame requires the Same functions to call a value the
// same as its deep copy, and two random values the same only when
// reflect.DeepEqual does (the times here share their locations, so it
// must agree both ways) and their encodings are equal.
func checkGeneratedSame(t testing.TB, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed>>3))
	for _, root := range generatedEquals {
		rt := reflect.TypeOf(root).Elem()
		a, b := reflect.New(rt), reflect.New(rt)
		randFill(a.Elem(), r, 0)
		switch r.IntN(3) {
		case 0:
			copyValue(b.Elem(), a.Elem())
		case 1:
			copyValue(b.Elem(), a.Elem())
			randChange(b.Elem(), r)
		default:
			randFill(b.Elem(), r, 0)
		}
		same := sameOf(t, a.Interface(), b.Interface())
		// A NaN is not DeepEqual to itself; Same compares floats bit for
		// bit. Neither encodes.
		if !hasNaN(a.Interface()) && !hasNaN(b.Interface()) {
			require.Equal(t, reflect.DeepEqual(a.Interface(), b.Interface()), same, "%s, seed %d: Same and reflect.DeepEqual disagree", rt, seed)
		}
		if same {
			ja, ea := json.Marshal(a.Interface())
			jb, eb := json.Marshal(b.Interface())
			require.Equal(t, ea == nil, eb == nil, "%s, seed %d", rt, seed)
			require.Equal(t, string(ja), string(jb), "%s, seed %d: the same values encode apart", rt, seed)
		}
		c := reflect.New(rt)
		copyValue(c.Elem(), a.Elem())
		require.True(t, sameOf(t, a.Interface(), c.Interface()), "%s, seed %d: a value is not the same as its copy", rt, seed)
	}
}

// randChange changes one value reachable from v, picked at random: a
// nil made empty or an empty made nil, a pointer set or cleared, a
// string, number or bool changed. Some changes leave the encoding as it
// was (an empty slice under omitempty made nil); the check requires
// Same to tell them apart all the same, as reflect.DeepEqual does.
func randChange(v reflect.Value, r *rand.Rand) {
	var leaves []reflect.Value
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if v.Type() == timeType {
			leaves = append(leaves, v)
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			leaves = append(leaves, v)
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			leaves = append(leaves, v)
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			leaves = append(leaves, v) // map values are not settable: the map itself changes
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		default:
			leaves = append(leaves, v)
		}
	}
	walk(v)
	if len(leaves) == 0 {
		return
	}
	l := leaves[r.IntN(len(leaves))]
	switch {
	case l.Type() == timeType:
		l.Set(reflect.ValueOf(l.Interface().(time.Time).Add(time.Nanosecond)))
		return
	}
	switch l.Kind() {
	case reflect.Pointer, reflect.Map:
		if l.IsNil() {
			randFill(l, r, 5)
			if l.IsNil() {
				l.Set(reflect.New(l.Type().Elem()))
			}
		} else {
			l.SetZero()
		}
	case reflect.Slice:
		switch {
		case l.IsNil():
			l.Set(reflect.MakeSlice(l.Type(), 0, 0))
		case l.Len() == 0:
			l.SetZero()
		default:
			l.Set(l.Slice(0, l.Len()-1))
		}
	case reflect.String:
		l.SetString(l.String() + "x")
	case reflect.Bool:
		l.SetBool(!l.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		l.SetInt(l.Int() ^ 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		l.SetUint(l.Uint() ^ 1)
	case reflect.Float64:
		l.SetFloat(-l.Float())
	}
}

func sameOf(t testing.TB, a, b any) bool {
	switch a := a.(type) {
	case *policy.Decision:
		return SameDecision(a, b.(*policy.Decision))
	case *policy.Event:
		return SameEvent(a, b.(*policy.Event))
	case *policy.LanePolicy:
		return SameLanePolicy(a, b.(*policy.LanePolicy))
	}
	t.Fatalf("no Same function for %T", a)
	return false
}

// hasNaN reports whether json.Marshal refuses v (a NaN or infinity).
func hasNaN(v any) bool {
	_, err := json.Marshal(v)
	return err != nil
}

// copyValue copies src to dst, sharing nothing mutable.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			copyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMap(src.Type())
		for it := src.MapRange(); it.Next(); {
			e := reflect.New(src.Type().Elem()).Elem()
			copyValue(e, it.Value())
			m.SetMapIndex(it.Key(), e)
		}
		dst.Set(m)
	case reflect.Struct:
		if src.Type() == timeType {
			dst.Set(src)
			return
		}
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	default:
		dst.Set(src)
	}
}

// TestGeneratedEncodeIsMarshal: for 3,000 random values of each generated
// root, the generated encoder writes json.Marshal's bytes or declines
// exactly where json.Marshal fails.
func TestGeneratedEncodeIsMarshal(t *testing.T) {
	for seed := range uint64(3000) {
		checkGeneratedEncode(t, seed)
	}
}

// TestGeneratedSameIsDeepEqual: the Same functions agree with
// reflect.DeepEqual on random pairs and copies, and values they call the
// same encode alike.
func TestGeneratedSameIsDeepEqual(t *testing.T) {
	for seed := range uint64(3000) {
		checkGeneratedSame(t, seed)
	}
}

// TestAppendTimeAndFloat: the time and float writers the generated
// encoders call write what json.Marshal writes, and fail where it fails
// (no type they cover holds either today, so they are tested here).
func TestAppendTimeAndFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 20000 {
		var tm time.Time
		v := reflect.ValueOf(&tm).Elem()
		randFill(v, r, 0)
		want, err := json.Marshal(tm)
		got := appendTime(nil, tm)
		if err != nil {
			require.Nil(t, got, "time %d: %v: json.Marshal refuses it (%v)", i, tm, err)
		} else {
			require.Equal(t, string(want), string(got), "time %d", i)
		}
		var f float64
		randFill(reflect.ValueOf(&f).Elem(), r, 0)
		if i%2 == 0 {
			f = math.Float64frombits(r.Uint64())
		}
		want, err = json.Marshal(f)
		got = appendFloat(nil, f)
		if err != nil {
			require.Nil(t, got, "float %v: json.Marshal refuses it (%v)", f, err)
		} else {
			require.Equal(t, string(want), string(got), "float %v", f)
		}
	}
}

func FuzzGeneratedEncodeIsMarshal(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkGeneratedEncode(t, seed)
		checkGeneratedSame(t, seed)
	})
}
