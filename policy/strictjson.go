package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// JSONFault names why WalkObject refused its input.
type JSONFault int

// The faults WalkObject reports. Each caller turns them into its own
// contract's message; JSONError.Error is a plain default.
const (
	// JSONSyntax: the input is not JSON where an object's structure was
	// expected (empty input, a bad key, a missing '}'). Err holds
	// encoding/json's error.
	JSONSyntax JSONFault = iota + 1
	// JSONNotObject: the input is a JSON value other than an object.
	JSONNotObject
	// JSONUnknownKey: a key outside the allowed list; reported before its
	// value is read, so whatever follows it does not matter.
	JSONUnknownKey
	// JSONDuplicateKey: a key already seen in this object (compared after
	// unescaping, so "a" and "\u0061" are the same key).
	JSONDuplicateKey
	// JSONBadValue: a member's value is not JSON (or nests deeper than
	// encoding/json's limit of 10000). Key names the member, Err holds
	// encoding/json's error.
	JSONBadValue
	// JSONTrailingData: something other than whitespace follows the object.
	JSONTrailingData
)

// JSONError is WalkObject's own refusal of its input. Errors returned by
// the member callback are passed through unchanged instead.
type JSONError struct {
	Fault JSONFault
	// Key is the member at fault (JSONUnknownKey, JSONDuplicateKey,
	// JSONBadValue), else "".
	Key string
	// Offset is the byte offset in the input just past the last token the
	// walk read: for a key fault, the end of that key.
	Offset int64
	// Err is encoding/json's error for JSONSyntax and JSONBadValue.
	Err error
}

func (e *JSONError) Error() string {
	switch e.Fault {
	case JSONSyntax:
		return fmt.Sprintf("not JSON: %v", e.Err)
	case JSONNotObject:
		return "want a JSON object"
	case JSONUnknownKey:
		return fmt.Sprintf("unknown key %q", e.Key)
	case JSONDuplicateKey:
		return fmt.Sprintf("duplicate key %q", e.Key)
	case JSONBadValue:
		return fmt.Sprintf("key %q: not JSON: %v", e.Key, e.Err)
	case JSONTrailingData:
		return "trailing data after the JSON object"
	}
	return fmt.Sprintf("JSON fault %d", int(e.Fault))
}

func (e *JSONError) Unwrap() error { return e.Err }

// JSONMember is one member of an object, as WalkObject hands it over.
type JSONMember struct {
	Key string
	// Value is the member's value exactly as written (no surrounding
	// whitespace); it is valid JSON but not checked any further.
	Value json.RawMessage
	// Offset is the byte offset in the input where Value starts.
	Offset int64
}

// WalkObject reads data as exactly one JSON object, surrounding whitespace
// allowed, and calls fn for each member in document order. encoding/json
// alone would match struct keys case-insensitively and let a repeated key
// silently win; WalkObject compares keys exactly and refuses repeats.
//
// allowed, when non-nil, lists the only keys accepted. The walk stops at the
// first fault with a *JSONError: input that is not JSON, a non-object, a key
// outside allowed, a duplicate key, a bad value, or trailing data. It also
// stops at the first error fn returns and returns that error unchanged.
// Members before a fault have already been passed to fn, so a caller that
// needs all-or-nothing collects them and uses them only on success.
//
// The walk does not recurse: a nested object is one member's Value, which
// the caller walks again if it needs the same rules there. Nesting inside a
// value is bounded by encoding/json (10000 levels), so no input panics or
// exhausts the stack. Size limits are the caller's.
func WalkObject(data []byte, allowed []string, fn func(JSONMember) error) error {
	var buf [16]JSONMember
	if members, ok := flatObject(data, allowed, buf[:0]); ok {
		for _, m := range members {
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	}
	return walkDecoder(data, allowed, fn)
}

// walkDecoder is WalkObject with encoding/json's Decoder, for any input.
func walkDecoder(data []byte, allowed []string, fn func(JSONMember) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(f JSONFault, key string, err error) error {
		return &JSONError{Fault: f, Key: key, Offset: dec.InputOffset(), Err: err}
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(JSONSyntax, "", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(JSONNotObject, "", nil)
	}
	seen := map[string]struct{}{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(JSONSyntax, "", err)
		}
		key, _ := tok.(string)
		if allowed != nil && !slices.Contains(allowed, key) {
			return fail(JSONUnknownKey, key, nil)
		}
		if _, dup := seen[key]; dup {
			return fail(JSONDuplicateKey, key, nil)
		}
		seen[key] = struct{}{}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fail(JSONBadValue, key, err)
		}
		if err := fn(JSONMember{Key: key, Value: v, Offset: dec.InputOffset() - int64(len(v))}); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(JSONSyntax, "", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(JSONTrailingData, "", nil)
	}
	return nil
}

// flatObject is WalkObject's one pass for the common input: an object
// whose keys are printable ASCII without escapes, each allowed and none
// repeated, and whose values are strings without escapes or control
// characters, numbers, true, false or null, with only JSON whitespace
// between tokens and after the object. It appends the members to out and
// returns them, with their values copied, as encoding/json would hand
// them over. Anything else (a nested value, an escape, any fault) returns
// false, and WalkObject walks the input with encoding/json, which finds
// the same members or the fault; flatObject calls nothing meanwhile, so a
// decline costs no repeated callback. FuzzFlatObjectIsWalk holds the two
// to the same answer.
func flatObject(data []byte, allowed []string, out []JSONMember) ([]JSONMember, bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			// A key.
			if i == len(data) || data[i] != '"' {
				return nil, false
			}
			ks := i + 1
			i = ks
			for i < len(data) && data[i] != '"' {
				if c := data[i]; c < 0x20 || c >= 0x7f || c == '\\' {
					return nil, false
				}
				i++
			}
			if i == len(data) {
				return nil, false
			}
			key := data[ks:i]
			if allowed != nil && !slices.Contains(allowed, string(key)) {
				return nil, false
			}
			for _, m := range out {
				if m.Key == string(key) {
					return nil, false
				}
			}
			i = skipSpace(data, i+1)
			if i == len(data) || data[i] != ':' {
				return nil, false
			}
			vs := skipSpace(data, i+1)
			ve, ok := scalarEnd(data, vs)
			if !ok {
				return nil, false
			}
			out = append(out, JSONMember{Key: string(key), Value: data[vs:ve:ve], Offset: int64(vs)})
			i = skipSpace(data, ve)
			if i == len(data) {
				return nil, false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return nil, false
			}
			i = skipSpace(data, i+1)
		}
	}
	if skipSpace(data, i) != len(data) {
		return nil, false
	}
	if len(out) > 0 {
		// Values are copies, as json.RawMessage's decoding makes them: one
		// copy of the input, each value a full slice of it.
		cp := bytes.Clone(data)
		for k := range out {
			m := &out[k]
			m.Value = cp[m.Offset : m.Offset+int64(len(m.Value)) : m.Offset+int64(len(m.Value))]
		}
	}
	return out, true
}

// skipSpace returns the index of the first byte of data at or after i that
// is not JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scalarEnd returns the end of the scalar at data[i] that flatObject reads
// in one pass (a string without escapes or control characters, a number,
// true, false, null), or false.
func scalarEnd(data []byte, i int) (int, bool) {
	if i == len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		for j := i + 1; j < len(data); j++ {
			switch c := data[j]; {
			case c == '"':
				return j + 1, true
			case c < 0x20 || c == '\\':
				return 0, false
			}
		}
		return 0, false
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(data[i:], []byte(lit)) {
				return i + len(lit), true
			}
		}
		return 0, false
	case c == '-' || (c >= '0' && c <= '9'):
		return numberEnd(data, i)
	}
	return 0, false
}

// numberEnd returns the end of the JSON number at data[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(data []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(i + 1)
	default:
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// ObjectMembers walks data with WalkObject and returns its members by key.
// It is for callers that look members up rather than handle them in order;
// the faults and errors are WalkObject's.
func ObjectMembers(data []byte, allowed []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	err := WalkObject(data, allowed, func(m JSONMember) error {
		out[m.Key] = m.Value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// strictObject is WalkObject for the sheet and receipt decoders: members
// by exact key, with the unknown-key message listing the allowed keys.
func strictObject(raw []byte, allowed ...string) (map[string]json.RawMessage, error) {
	m, err := ObjectMembers(raw, append([]string{}, allowed...))
	var je *JSONError
	if errors.As(err, &je) && je.Fault == JSONUnknownKey {
		return nil, fmt.Errorf("unknown key %q (allowed: %s)", je.Key, quotedList(allowed))
	}
	return m, err
}

// jsonString decodes a JSON string member.
func jsonString(m map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := m[key]
	if !ok {
		return "", false, nil
	}
	if s, ok := plainJSONString(raw); ok {
		return s, true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("key %q must be a string", key)
	}
	return s, true, nil
}

// plainJSONString reads a JSON string with nothing to unescape: quotes
// around valid UTF-8 holding no quote, backslash or control character.
// Those bytes are the value json.Unmarshal gives; anything else is left
// to it.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

// jsonStrings decodes a JSON array-of-strings member.
func jsonStrings(m map[string]json.RawMessage, key string) ([]string, bool, error) {
	raw, ok := m[key]
	if !ok {
		return nil, false, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return nil, true, fmt.Errorf("key %q must be an array of strings", key)
	}
	return s, true, nil
}

func inList[T comparable](list []T, x T) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

func quotedList[T ~string](list []T) string {
	var b bytes.Buffer
	for i, s := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + string(s) + `"`)
	}
	return b.String()
}
