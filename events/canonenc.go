package events

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchyard-dev/switchyard/policy"
)

// The generated encoders and comparisons in encode_generated.go use these.
// An encoder appends exactly the bytes json.Marshal writes for its value,
// or returns nil where json.Marshal would fail (a time outside RFC 3339, a
// float that is not finite), and the caller then asks json.Marshal itself
// for its answer. TestGeneratedEncodersAreCurrent writes the file;
// FuzzGeneratedEncodeIsMarshal and TestGeneratedEncodeIsMarshal hold it to
// json.Marshal byte for byte.

// appendJSON appends json.Marshal's encoding of v, with HTML characters
// escaped as Marshal escapes them.
func appendJSON(b []byte, v any) ([]byte, error) {
	if out := canonAppend(b, v); out != nil {
		return out, nil
	}
	m, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, m...), nil
}

// SameLanePolicies is SameLanePolicy over two lists: the same length,
// nil alike, each pair the same.
func SameLanePolicies(a, b []policy.LanePolicy) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if !SameLanePolicy(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// sameFloat compares two floats as their encodings would: bit for bit (0
// and -0 are equal numbers but encode apart).
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// sameTime compares two times as their encodings would: the same instant,
// clock reading and location pointer (reflect.DeepEqual also calls equal
// two distinct locations with the same contents; this never does, and
// two times it calls the same encode alike).
func sameTime(a, b time.Time) bool { return a == b }

// appendKey appends a member's key (with its quotes and colon), after a
// comma unless it is the object's first member.
func appendKey(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	return append(b, key...)
}

const hexDigits = "0123456789abcdef"

// appendStr appends s as json.Marshal writes a string: quoted, with
// quotes, backslashes, control characters, <, > and &, U+2028 and U+2029
// escaped in the form it uses, and each invalid byte as \ufffd.
func appendStr(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := plainPrefix(bytesOf(s)); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafeSet[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendBytes appends a []byte as json.Marshal writes it: base64, quoted.
func appendBytes(b []byte, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// appendTime appends t as time.Time.MarshalJSON writes it (RFC 3339 with
// nanoseconds), or returns nil where MarshalJSON fails: a year outside
// 0–9999 or a zone offset of a day or more.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		return nil
	}
	if _, off := t.Zone(); off <= -24*60*60 || off >= 24*60*60 {
		return nil
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendFloat appends a float64 as json.Marshal writes it, or returns nil
// for a value it refuses (an infinity or NaN).
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
