package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// strictObject decodes one JSON object and returns its members by exact
// key. Keys outside allowed, duplicate keys, a non-object value and
// trailing data are errors. encoding/json alone would match keys
// case-insensitively and keep the last duplicate, which is not strict.
func strictObject(raw []byte, allowed ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		key, _ := tok.(string)
		if !inList(allowed, key) {
			return nil, fmt.Errorf("unknown key %q (allowed: %s)", key, quotedList(allowed))
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: not JSON: %v", key, err)
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return out, nil
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
