package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// jsonObject is a JSON object that keeps its member order, for rendering
// and comparing OpenCode's ordered permission maps.
type jsonObject []jsonMember

// jsonMember is one member of a jsonObject.
type jsonMember struct {
	Key   string
	Value any
}

// MarshalJSON renders the members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// get returns the value of the last member named key (JSON's duplicate
// rule).
func (o jsonObject) get(key string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// mustGet returns a member this package rendered itself.
func (o jsonObject) mustGet(key string) any {
	v, _ := o.get(key)
	return v
}

// maxOrderedDepth bounds how deeply decodeOrdered follows nested arrays
// and objects (encoding/json's own limit). The token stream does not bound
// nesting itself, and each level is a stack frame: CLI output of millions
// of "[" would otherwise overflow the stack, which is fatal.
const maxOrderedDepth = 10000

// decodeOrdered decodes exactly one JSON value (surrounding whitespace
// allowed), objects as jsonObject, numbers as json.Number.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// decodeValue reads one value from dec's token stream, depth levels deep.
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && depth >= maxOrderedDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxOrderedDepth)
	}
	switch tok {
	case json.Delim('{'):
		obj := jsonObject{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := keyTok.(string)
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{key, v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// jsonEqual compares decoded values exactly. Objects compare as member
// sets, except permission maps and everything inside them, which are
// ordered rules and compare member by member in order; arrays compare
// element by element.
func jsonEqual(a, b any) bool { return jsonEqualIn(a, b, false) }

func jsonEqualIn(a, b any, ordered bool) bool {
	switch a := a.(type) {
	case jsonObject:
		b, ok := b.(jsonObject)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			inner := ordered || a[i].Key == "permission"
			if ordered {
				if a[i].Key != b[i].Key || !jsonEqualIn(a[i].Value, b[i].Value, inner) {
					return false
				}
				continue
			}
			bv, ok := b.get(a[i].Key)
			if !ok || !jsonEqualIn(a[i].Value, bv, inner) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqualIn(a[i], b[i], ordered) {
				return false
			}
		}
		return true
	}
	return a == b
}
