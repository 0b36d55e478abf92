package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var flatObjectCases = []string{
	`{}`, ` { } `, `{"provider":"codex","funding":"included","capacity":"standard"}`,
	"\t{\"a\" : 1 ,\n\"b\":-0.5e+3}\r\n", `{"a":true,"b":false,"c":null}`, "{\"a\":\"é\xff\"}",
	`{"a":1,"a":2}`, `{"a":"\u0061"}`, `{"\u0061":1}`, `{"a":[1]}`, `{"a":{}}`, `{"a":01}`,
	`{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":1}x`, `{"a":1,}`, `{,}`, `{"a" 1}`,
	`[]`, ``, `{"a":"x`, `{"a":1`, `{"zz":1}`, "{\"a\":\"\x01\"}",
}

// checkFlatObject requires flatObject, where it reads data at all, to
// hand over exactly the members encoding/json's walk does, which must
// then find no fault.
func checkFlatObject(t *testing.T, data []byte, allowed []string) bool {
	got, ok := flatObject(data, allowed, nil)
	if !ok {
		return false
	}
	var want []JSONMember
	err := walkDecoder(data, allowed, func(m JSONMember) error {
		want = append(want, m)
		return nil
	})
	require.NoError(t, err, "%q: flatObject read what encoding/json refuses", data)
	require.Equal(t, len(want), len(got), "%q", data)
	for i := range want {
		require.Equal(t, want[i].Key, got[i].Key, "%q", data)
		require.Equal(t, string(want[i].Value), string(got[i].Value), "%q", data)
		require.Equal(t, want[i].Offset, got[i].Offset, "%q", data)
		require.Equal(t, len(got[i].Value), cap(got[i].Value), "%q: a value's spare capacity would let an append overwrite the next", data)
	}
	return true
}

// TestFlatObject: flatObject reads the flat objects sheets and receipts
// are made of, declines the rest, and agrees with encoding/json's walk on
// what it reads; WalkObject gives the same faults either way.
func TestFlatObject(t *testing.T) {
	read := map[string]bool{}
	for _, c := range flatObjectCases {
		read[c] = checkFlatObject(t, []byte(c), nil)
		checkFlatObject(t, []byte(c), []string{"a", "b", "c"})
	}
	for _, c := range []string{`{}`, ` { } `, `{"provider":"codex","funding":"included","capacity":"standard"}`,
		"\t{\"a\" : 1 ,\n\"b\":-0.5e+3}\r\n", `{"a":true,"b":false,"c":null}`, "{\"a\":\"é\xff\"}"} {
		require.True(t, read[c], "%q not read in one pass", c)
	}
	for _, c := range []string{`{"a":1,"a":2}`, `{"a":"\u0061"}`, `{"a":[1]}`, `{"a":01}`, `{"a":1}x`, `{"a":1,}`} {
		require.False(t, read[c], "%q read in one pass", c)
	}
	// A fault is encoding/json's, as before.
	err := WalkObject([]byte(`{"a":1,"a":2}`), nil, func(JSONMember) error { return nil })
	var je *JSONError
	require.ErrorAs(t, err, &je)
	require.Equal(t, JSONDuplicateKey, je.Fault)
	_, err = ObjectMembers([]byte(`{"zz":1}`), []string{"a"})
	require.ErrorAs(t, err, &je)
	require.Equal(t, JSONUnknownKey, je.Fault)
}

func FuzzFlatObjectIsWalk(f *testing.F) {
	for _, c := range flatObjectCases {
		f.Add([]byte(c), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, restrict bool) {
		var allowed []string
		if restrict {
			allowed = []string{"a", "b", "provider"}
		}
		checkFlatObject(t, data, allowed)
	})
}
