package events

import (
	"bytes"
	"encoding/json"
	"sync"
)

// encodesTo reports whether json.Marshal(v) would return exactly want,
// without building the encoding as a new slice: encoding/json's Encoder
// writes from its pooled buffer, and matchWriter compares as it is
// written. This is the canonical check of Decode and unmarshalStored: a
// value decoded from bytes that are its own encoding has exactly the keys
// encoding/json writes, each once, in their case, and nothing after them.
func encodesTo(v any, want []byte) bool {
	m := matchers.Get().(*matcher)
	m.w = matchWriter{want: want, ok: true}
	err := m.enc.Encode(v) // json.Marshal's bytes, then a newline
	equal := err == nil && m.w.ok && m.w.off == len(want) && m.w.newline
	m.w = matchWriter{}
	matchers.Put(m)
	return equal
}

// matcher is an Encoder writing to its own matchWriter, pooled.
type matcher struct {
	w   matchWriter
	enc *json.Encoder
}

var matchers = sync.Pool{New: func() any {
	m := &matcher{}
	m.enc = json.NewEncoder(&m.w) // escapes HTML, as json.Marshal does
	return m
}}

// matchWriter compares what is written with want and then the one
// newline Encoder.Encode ends with; ok turns false at the first
// difference and stays false.
type matchWriter struct {
	want    []byte
	off     int // bytes of want matched
	newline bool
	ok      bool
}

func (w *matchWriter) Write(p []byte) (int, error) {
	if w.ok {
		k := min(len(p), len(w.want)-w.off)
		w.ok = bytes.Equal(p[:k], w.want[w.off:w.off+k])
		w.off += k
		if rest := p[k:]; w.ok && len(rest) > 0 {
			w.ok = len(rest) == 1 && rest[0] == '\n' && !w.newline
			w.newline = true
		}
	}
	return len(p), nil
}
