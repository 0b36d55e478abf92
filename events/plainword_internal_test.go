package events

import (
	"encoding/binary"
	"testing"
)

// plainRef is plainPrefix by definition: whole words of htmlSafe bytes.
func plainRef(b []byte) int {
	n := 0
	for len(b)-n >= 8 {
		for _, c := range b[n : n+8] {
			if !htmlSafe(c) {
				return n
			}
		}
		n += 8
	}
	return n
}

// TestPlainWord puts every byte value at every position of a word of
// plain bytes: the word is plain exactly when that byte is htmlSafe.
func TestPlainWord(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			got := plainWord(binary.LittleEndian.Uint64(w))
			if got != htmlSafe(byte(c)) {
				t.Fatalf("byte %#02x at %d: plainWord %v, htmlSafe %v", c, pos, got, !got)
			}
		}
	}
	// Two bytes that are each plain can borrow into each other in the
	// subtraction; pairs of every unsafe byte next to every byte.
	for c1 := range 256 {
		for c2 := range 256 {
			w := []byte("ab" + string([]byte{byte(c1), byte(c2)}) + "cdef")
			want := htmlSafe(byte(c1)) && htmlSafe(byte(c2))
			if got := plainWord(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("bytes %#02x %#02x: plainWord %v, want %v", c1, c2, got, want)
			}
		}
	}
}

func FuzzPlainPrefix(f *testing.F) {
	f.Add([]byte(`/home/user/work/checkout/.switchyard/exec/abc`))
	f.Add([]byte("plain text \x00 and <html> & \"quotes\" \\ \u00e9\u2028"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := plainRef(b)
		if got := plainPrefix(b); got != want {
			t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
		}
	})
}

// TestPlainPrefixEveryPosition puts every byte value at every position of
// plain buffers of every length up to 75 (whole 32-byte blocks, words
// after them and a ragged tail): plainPrefix stops at the word holding it
// exactly as plainRef does.
func TestPlainPrefixEveryPosition(t *testing.T) {
	plain := []byte("/home/user/work/checkout/.switchyard/exec/abcdefghijklmnopqrstuvwxyz0123456789")
	for n := range 76 {
		if got, want := plainPrefix(plain[:n]), n/8*8; got != want {
			t.Fatalf("plain, %d bytes: plainPrefix %d, want %d", n, got, want)
		}
		for pos := range n {
			for c := range 256 {
				b := append([]byte(nil), plain[:n]...)
				b[pos] = byte(c)
				if got, want := plainPrefix(b), plainRef(b); got != want {
					t.Fatalf("byte %#02x at %d of %d: plainPrefix %d, want %d", c, pos, n, got, want)
				}
			}
		}
	}
}
