package policy

import (
	"encoding/json"
	"testing"
)

// FuzzPlainJSONString holds the fast path to json.Unmarshal: whatever it
// reads, Unmarshal reads as the same string.
func FuzzPlainJSONString(f *testing.F) {
	for _, s := range []string{`"user"`, `""`, `"a\"b"`, `"tab	"`, "\"bad\xff\"", `"é"`, `"\u00e9"`, ` "x"`, `"x`, `x"`, `"`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainJSONString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || got != want {
			t.Fatalf("plainJSONString(%q) = %q; json.Unmarshal gives %q, %v", raw, got, want, err)
		}
	})
}

// TestPlainJSONString: the strings a sheet's access facts hold take the
// fast path; any string needing unescaping or repair does not.
func TestPlainJSONString(t *testing.T) {
	for _, s := range []string{`"user"`, `""`, `"2026-12-06T10:00:00Z"`, `"é ü"`} {
		if _, ok := plainJSONString([]byte(s)); !ok {
			t.Errorf("%s: not read", s)
		}
	}
	for _, s := range []string{`"a\"b"`, `"a\\b"`, "\"tab\t\"", "\"bad\xff\"", `"\u00e9"`, ` "x"`, `"x`, `x`, `"`} {
		if _, ok := plainJSONString([]byte(s)); ok {
			t.Errorf("%s: read, should be left to json.Unmarshal", s)
		}
	}
}
