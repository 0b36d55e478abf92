package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("key %q must be a string", key)
	}
	return s, true, nil
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
