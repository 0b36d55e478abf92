package policy_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// walk collects every member WalkObject hands over, in order.
func walk(in string, allowed []string) ([]policy.JSONMember, error) {
	var got []policy.JSONMember
	err := policy.WalkObject([]byte(in), allowed, func(m policy.JSONMember) error {
		got = append(got, m)
		return nil
	})
	return got, err
}

func TestWalkObjectAccepts(t *testing.T) {
	t.Parallel()
	got, err := walk(" \n{\"b\": [1, {\"x\": 1, \"x\": 2}], \"a\" :\"s\", \"\": null}\t\n", nil)
	require.NoError(t, err)
	require.Len(t, got, 3)
	// Document order, values verbatim without surrounding whitespace.
	require.Equal(t, "b", got[0].Key)
	require.Equal(t, `[1, {"x": 1, "x": 2}]`, string(got[0].Value), "nested values are not walked")
	require.Equal(t, "a", got[1].Key)
	require.Equal(t, `"s"`, string(got[1].Value))
	require.Equal(t, "", got[2].Key, "the empty key is a key")
	require.Equal(t, "null", string(got[2].Value))
	// Offset locates each value in the input.
	in := " \n{\"b\": [1, {\"x\": 1, \"x\": 2}], \"a\" :\"s\", \"\": null}\t\n"
	for _, m := range got {
		require.Equal(t, string(m.Value), in[m.Offset:m.Offset+int64(len(m.Value))], "member %q", m.Key)
	}

	got, err = walk(`{}`, []string{"a"})
	require.NoError(t, err)
	require.Empty(t, got, "an empty object has no members")
}

func TestWalkObjectRefuses(t *testing.T) {
	t.Parallel()
	deep := `{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	for _, tc := range []struct {
		name    string
		in      string
		allowed []string
		fault   policy.JSONFault
		key     string
		msg     string
		members int // members handed over before the fault
	}{
		{"empty input", "", nil, policy.JSONSyntax, "", "not JSON: EOF", 0},
		{"whitespace only", " \n", nil, policy.JSONSyntax, "", "not JSON: EOF", 0},
		{"garbage", "x", nil, policy.JSONSyntax, "", "not JSON: invalid character 'x' looking for beginning of value", 0},
		{"array", `[{"a":1}]`, nil, policy.JSONNotObject, "", "want a JSON object", 0},
		{"string", `"{}"`, nil, policy.JSONNotObject, "", "want a JSON object", 0},
		{"null", `null`, nil, policy.JSONNotObject, "", "want a JSON object", 0},
		{"number", `12`, nil, policy.JSONNotObject, "", "want a JSON object", 0},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, nil, policy.JSONDuplicateKey, "a", `duplicate key "a"`, 2},
		{"duplicate after unescaping", `{"a":1,"\u0061":2}`, nil, policy.JSONDuplicateKey, "a", `duplicate key "a"`, 1},
		{"duplicate empty key", `{"":1,"":2}`, nil, policy.JSONDuplicateKey, "", `duplicate key ""`, 1},
		{"keys are case-sensitive: unknown", `{"A":1}`, []string{"a"}, policy.JSONUnknownKey, "A", `unknown key "A"`, 0},
		{"unknown key before its bad value", `{"a":1,"zz":}`, []string{"a"}, policy.JSONUnknownKey, "zz", `unknown key "zz"`, 1},
		{"unknown wins over duplicate", `{"z":1,"z":2}`, []string{"a"}, policy.JSONUnknownKey, "z", `unknown key "z"`, 0},
		{"empty allowed list refuses every key", `{"a":1}`, []string{}, policy.JSONUnknownKey, "a", `unknown key "a"`, 0},
		{"bad value", `{"a":tru}`, nil, policy.JSONBadValue, "a", `key "a": not JSON: invalid character '}' in literal true (expecting 'e')`, 0},
		{"missing colon", `{"a" 1}`, nil, policy.JSONBadValue, "a", `key "a": not JSON: expected colon after object key`, 0},
		{"value nested too deep", deep, nil, policy.JSONBadValue, "a", `key "a": not JSON: invalid character '[' exceeded max depth`, 0},
		{"non-string key", `{1:2}`, nil, policy.JSONSyntax, "", "not JSON: invalid character '1'", 0},
		{"trailing comma", `{"a":1,}`, nil, policy.JSONSyntax, "", "not JSON: invalid character '}' looking for beginning of object key string", 1},
		{"truncated", `{"a":1`, nil, policy.JSONSyntax, "", "not JSON: EOF", 1},
		{"second object", `{"a":1} {"a":2}`, nil, policy.JSONTrailingData, "", "trailing data after the JSON object", 1},
		{"trailing garbage", `{"a":1}x`, nil, policy.JSONTrailingData, "", "trailing data after the JSON object", 1},
		{"trailing brace", `{"a":1}}`, nil, policy.JSONTrailingData, "", "trailing data after the JSON object", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := walk(tc.in, tc.allowed)
			var je *policy.JSONError
			require.ErrorAs(t, err, &je)
			require.Equal(t, tc.fault, je.Fault, "fault for %q: %v", tc.in, err)
			require.Equal(t, tc.key, je.Key)
			require.Equal(t, tc.msg, err.Error())
			require.Len(t, got, tc.members)
			require.True(t, je.Offset >= 0 && je.Offset <= int64(len(tc.in)), "offset %d outside the input", je.Offset)
			if tc.fault == policy.JSONSyntax || tc.fault == policy.JSONBadValue {
				require.Error(t, je.Err, "a syntax fault carries encoding/json's error")
				require.ErrorIs(t, err, je.Err)
			} else {
				require.NoError(t, je.Err)
			}
		})
	}
}

// The offset of a key fault is the end of that key, so a caller can point
// at the second of two repeated keys.
func TestWalkObjectKeyOffset(t *testing.T) {
	t.Parallel()
	in := `{"a":1, "a":2}`
	_, err := walk(in, nil)
	var je *policy.JSONError
	require.ErrorAs(t, err, &je)
	require.Equal(t, int64(strings.LastIndex(in, `"a"`)+3), je.Offset)
}

// The callback's error stops the walk and comes back unchanged, so each
// caller keeps its own messages.
func TestWalkObjectCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop here")
	var keys []string
	err := policy.WalkObject([]byte(`{"a":1,"b":2,"c":3}`), nil, func(m policy.JSONMember) error {
		keys = append(keys, m.Key)
		if m.Key == "b" {
			return stop
		}
		return nil
	})
	require.Same(t, stop, err)
	require.Equal(t, []string{"a", "b"}, keys)
}

func TestObjectMembers(t *testing.T) {
	t.Parallel()
	m, err := policy.ObjectMembers([]byte(`{"a": {"b": 1}, "c": "d"}`), []string{"a", "c", "e"})
	require.NoError(t, err)
	require.Equal(t, map[string]json.RawMessage{"a": json.RawMessage(`{"b": 1}`), "c": json.RawMessage(`"d"`)}, m)

	m, err = policy.ObjectMembers([]byte(`{"a":1,"a":1}`), nil)
	require.Nil(t, m, "no members on a fault")
	var je *policy.JSONError
	require.ErrorAs(t, err, &je)
	require.Equal(t, policy.JSONDuplicateKey, je.Fault)
}

// FuzzWalkObject feeds arbitrary bytes to WalkObject. It proves: the walk
// never panics; it fails only with a *JSONError (the callback never fails
// here); it accepts exactly the JSON objects whose keys are distinct, as
// encoding/json counts them; each value it hands over is valid JSON found at
// its offset.
func FuzzWalkObject(f *testing.F) {
	for _, s := range []string{``, `{}`, ` {"a":1} `, `{"a":1,"a":2}`, `{"a":{"a":1,"a":2}}`,
		`{"a":1}{}`, `[]`, `{"a":[1,2,{"b":null}],"b":"\u00e9","c":-1.5e3,"d":true}`,
		`{"\u0061":1,"a":2}`, `{"a":1,}`, `{"a"}`, `{"a":` + strings.Repeat("[", 100), "{\"\xff\":1,\"\xfe\":2}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []policy.JSONMember
		err := policy.WalkObject(b, nil, func(m policy.JSONMember) error {
			got = append(got, m)
			return nil
		})
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(b, &obj) == nil && obj != nil
		if err != nil {
			var je *policy.JSONError
			require.ErrorAs(t, err, &je, "%T %v", err, err)
			require.NotEmpty(t, je.Error())
			if isObject {
				// A valid object is refused only for a repeated key.
				require.Equal(t, policy.JSONDuplicateKey, je.Fault, "valid object %q refused: %v", b, err)
				require.Less(t, len(obj), countMembers(t, b))
			}
			return
		}
		require.True(t, isObject, "accepted %q, which is not one JSON object", b)
		require.Len(t, got, len(obj), "accepted %q with a repeated key", b)
		for _, m := range got {
			require.True(t, json.Valid(m.Value), "member %q value %q", m.Key, m.Value)
			require.Equal(t, string(m.Value), string(b[m.Offset:m.Offset+int64(len(m.Value))]))
			require.Contains(t, obj, m.Key)
		}
	})
}

// countMembers counts the top-level members of a valid JSON object with
// encoding/json's token stream, repeats included.
func countMembers(t *testing.T, b []byte) int {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	_, err := dec.Token()
	require.NoError(t, err)
	n := 0
	for dec.More() {
		_, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		n++
	}
	_, err = dec.Token()
	require.NoError(t, err)
	_, err = dec.Token()
	require.ErrorIs(t, err, io.EOF)
	return n
}
