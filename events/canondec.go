package events

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// newCanonDec reads raw, from a copy of it as one string.
func newCanonDec(raw []byte) canonDec { return canonDec{b: raw, s: string(raw)} }

// canonPayload decodes a payload of type t from raw with the generated
// decoder (canonPayloadFrom), or declines.
func canonPayload(t Type, raw []byte) (Payload, bool) { return canonPayloadFrom(t, newCanonDec(raw)) }

// bytesOf is a read-only view of s's bytes, for the readers that never
// write to their input (splitCanonical, canonDec, plainPrefix): decoding a stored
// string then slices its strings out of it instead of copying it first.
// Nothing else may be handed the view; a path that declines copies s.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// canonDec reads the one encoding json.Marshal writes, from the front of
// b, for the generated decoders in decode_generated.go. Each method
// consumes its value only when the bytes are exactly what encoding/json
// writes for the value read; otherwise it returns false and the caller
// declines, so the canonical path falls back to decoding and re-encoding.
// A false is never an error: it only means "not provably canonical here".
type canonDec struct {
	b []byte
	// s is the input as one string, b's bytes at its end: a string read
	// without escapes is a slice of it, so a payload costs one copy of
	// its bytes, not one allocation a string.
	s string
	// buf collects a string with escapes; reused.
	buf []byte
}

// lit consumes s when b starts with it.
func (d *canonDec) lit(s string) bool {
	if len(d.b) < len(s) || string(d.b[:len(s)]) != s {
		return false
	}
	d.b = d.b[len(s):]
	return true
}

// key consumes a member's key: `"name":`, preceded by a comma unless it is
// the object's first member. k is the key with its quotes and colon.
func (d *canonDec) key(first *bool, k string) bool {
	if !*first {
		if len(d.b) == 0 || d.b[0] != ',' {
			return false
		}
		if len(d.b)-1 < len(k) || string(d.b[1:1+len(k)]) != k {
			return false
		}
		d.b = d.b[1+len(k):]
		return true
	}
	if !d.lit(k) {
		return false
	}
	*first = false
	return true
}

// null consumes a JSON null.
func (d *canonDec) null() bool { return d.lit("null") }

// str reads a string as encoding/json writes it (HTML characters,
// control characters, U+2028 and U+2029 escaped, and only in the form it
// escapes them; valid UTF-8 only, since it writes invalid bytes as
// \ufffd, which decodes to another string).
func (d *canonDec) str() (string, bool) {
	b := d.b
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	i := 1 + plainPrefix(b[1:])
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if !htmlSafeSet[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && n == 1) || r == '\u2028' || r == '\u2029' {
			return "", false
		}
		i += n
	}
	if i < len(b) && b[i] == '"' {
		at := len(d.s) - len(b)
		d.b = b[i+1:]
		return d.s[at+1 : at+i], true
	}
	return d.strEscaped(i)
}

// strEscaped continues str at b[i], the first byte that is not literal.
func (d *canonDec) strEscaped(i int) (string, bool) {
	b := d.b
	out := append(d.buf[:0], b[1:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			d.b = b[i+1:]
			d.buf = out
			return string(out), true
		case c == '\\':
			ch, n, ok := canonEscape(b[i:])
			if !ok {
				return "", false
			}
			out = utf8.AppendRune(out, ch)
			i += n
		case c < utf8.RuneSelf:
			if !htmlSafe(c) {
				return "", false
			}
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if (r == utf8.RuneError && n == 1) || r == '\u2028' || r == '\u2029' {
				return "", false
			}
			out = append(out, b[i:i+n]...)
			i += n
		}
	}
	return "", false
}

// canonEscape reads the escape at the front of b (which starts with a
// backslash) when it is one encoding/json writes, and returns the
// character and the escape's length.
func canonEscape(b []byte) (rune, int, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	switch b[1] {
	case '"', '\\':
		return rune(b[1]), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		if len(b) < 6 {
			return 0, 0, false
		}
		switch s := string(b[2:6]); s {
		case "003c":
			return '<', 6, true
		case "003e":
			return '>', 6, true
		case "0026":
			return '&', 6, true
		case "2028":
			return '\u2028', 6, true
		case "2029":
			return '\u2029', 6, true
		default:
			if s[0] != '0' || s[1] != '0' || !isLowerHex(s[2]) || !isLowerHex(s[3]) {
				return 0, 0, false
			}
			c := unhex(s[2])<<4 | unhex(s[3])
			// Only the control characters without a short escape.
			if c >= 0x20 || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' {
				return 0, 0, false
			}
			return rune(c), 6, true
		}
	}
	return 0, 0, false
}

// htmlSafe reports whether encoding/json writes the ASCII byte c as
// itself when escaping HTML; htmlSafeSet is the same as a table.
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c < utf8.RuneSelf
}

// plainPrefix returns how many leading bytes of b, in whole 8-byte
// words, are ASCII that encoding/json writes as itself (htmlSafe): the
// string scanners' fast path, a word at a time. It may stop early (at the
// last whole word, or at a word holding any other byte); the caller goes
// on byte by byte from there. It only reads b.
func plainPrefix(b []byte) int {
	i := 0
	// Four words at a time while they are plain: one branch for 32 bytes,
	// and four independent computations the processor runs side by side.
	for len(b)-i >= 32 {
		w := b[i : i+32]
		if (wordBad(binary.LittleEndian.Uint64(w))|wordBad(binary.LittleEndian.Uint64(w[8:]))|
			wordBad(binary.LittleEndian.Uint64(w[16:]))|wordBad(binary.LittleEndian.Uint64(w[24:])))&wordHi != 0 {
			break
		}
		i += 32
	}
	for len(b)-i >= 8 && plainWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	return i
}

const (
	wordLo = 0x0101010101010101 // 0x01 in every byte
	wordHi = 0x8080808080808080 // the high bit of every byte
)

// plainWord reports whether each of the eight bytes in x is htmlSafe.
// (v-wordLo)&^v has a byte's high bit set for the lowest zero byte of v
// (and only above some zero byte), so it finds whether any byte is zero;
// x-wordLo*0x20 sets a high bit below any byte under 0x20 the same way,
// and x's own high bits find non-ASCII. '"' (0x22) and '&' (0x26) differ
// only in bit 2, '<' (0x3c) and '>' (0x3e) only in bit 1: setting that
// bit finds both with one test.
func plainWord(x uint64) bool { return wordBad(x)&wordHi == 0 }

// wordBad has the high bit of some byte set, under wordHi, when a byte of
// x is not htmlSafe (plainWord); its other bits mean nothing.
func wordBad(x uint64) uint64 {
	q := (x | wordLo*0x04) ^ (wordLo * '&')
	a := (x | wordLo*0x02) ^ (wordLo * '>')
	e := x ^ (wordLo * '\\')
	return x | (x - wordLo*0x20) | (q-wordLo)&^q | (a-wordLo)&^a | (e-wordLo)&^e
}

var htmlSafeSet = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = htmlSafe(byte(c))
	}
	return t
}()

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// digits returns the length of the decimal at the front of b: an
// optional minus when neg is allowed, then 0 or a digit 1-9 and more
// digits; 0 when there is none. "-0" is refused: encoding/json writes 0.
func (d *canonDec) digits(neg bool) int {
	b := d.b
	i := 0
	if neg && len(b) > 0 && b[0] == '-' {
		i = 1
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	switch {
	case i == start:
		return 0
	case b[start] == '0' && (i-start > 1 || start == 1):
		return 0
	}
	// A fraction or exponent is not an integer's encoding.
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0
	}
	return i
}

// int reads a signed integer of bits bits.
func (d *canonDec) int(bits int) (int64, bool) {
	n := d.digits(true)
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.b[:n]), 10, bits)
	if err != nil {
		return 0, false
	}
	d.b = d.b[n:]
	return v, true
}

// uint reads an unsigned integer of bits bits.
func (d *canonDec) uint(bits int) (uint64, bool) {
	n := d.digits(false)
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.b[:n]), 10, bits)
	if err != nil {
		return 0, false
	}
	d.b = d.b[n:]
	return v, true
}

// float reads a float64 and keeps it only when json.Marshal writes the
// same text for it (rare in events: a receipt's costUsd).
func (d *canonDec) float() (float64, bool) {
	i := 0
	for i < len(d.b) && bytes.IndexByte([]byte("-+.eE0123456789"), d.b[i]) >= 0 {
		i++
	}
	if i == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(d.b[:i]), 64)
	if err != nil {
		return 0, false
	}
	enc, err := json.Marshal(f)
	if err != nil || !bytes.Equal(enc, d.b[:i]) {
		return 0, false
	}
	d.b = d.b[i:]
	return f, true
}

// bool reads true or false.
func (d *canonDec) bool() (bool, bool) {
	switch {
	case d.lit("true"):
		return true, true
	case d.lit("false"):
		return false, true
	}
	return false, false
}

// bytes reads a []byte, which encoding/json writes as standard base64.
func (d *canonDec) bytes() ([]byte, bool) {
	b := d.b
	if len(b) == 0 || b[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, false
	}
	text := b[1 : 1+end]
	out := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Strict().Decode(out, text)
	if err != nil || base64.StdEncoding.EncodedLen(n) != len(text) {
		return nil, false
	}
	d.b = b[end+2:]
	return out[:n], true
}

// time reads a time.Time as its MarshalJSON writes a UTC time: RFC 3339
// with nanoseconds and trailing zeros dropped, ending in Z. Other zones
// decline (a decoded offset's location is the decoder's choice).
func (d *canonDec) time() (time.Time, bool) {
	b := d.b
	s, ok := d.str()
	if !ok || len(s) == 0 || s[len(s)-1] != 'Z' {
		d.b = b
		return time.Time{}, false
	}
	t, ok := parseUTC(s)
	if !ok {
		d.b = b
	}
	return t, ok
}

// parseUTC reads s when it is exactly how a UTC time formats as
// time.RFC3339Nano: time.Parse of it, when formatting that again gives s
// back. Most such strings take canonUTC's direct reading.
func parseUTC(s string) (time.Time, bool) {
	if t, ok := canonUTC(s); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	t = t.UTC()
	var buf [64]byte
	return t, string(t.AppendFormat(buf[:0], time.RFC3339Nano)) == s
}

// canonUTC reads "YYYY-MM-DDTHH:MM:SS[.fraction]Z" with every field in
// range and a fraction of 1 to 9 digits not ending in 0: the strings a
// UTC time's RFC3339Nano format writes, read without time.Parse (an
// envelope's time is one per event). It declines anything else, which
// parseUTC then reads the long way; FuzzCanonUTC holds it to that way.
func canonUTC(s string) (time.Time, bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(s string) int {
		n := 0
		for i := range len(s) {
			c := s[i] - '0'
			if c > 9 {
				return -1
			}
			n = n*10 + int(c)
		}
		return n
	}
	year, month, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	ns := 0
	if frac := s[19 : len(s)-1]; frac != "" {
		digits := frac[1:]
		if frac[0] != '.' || len(digits) < 1 || len(digits) > 9 || digits[len(digits)-1] == '0' {
			return time.Time{}, false
		}
		if ns = num(digits); ns < 0 {
			return time.Time{}, false
		}
		for range 9 - len(digits) {
			ns *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, ns, time.UTC), true
}

// daysIn is the number of days in month m of year y (proleptic
// Gregorian, as time counts them).
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
