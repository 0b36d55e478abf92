package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// strictUnmarshal decodes one JSON value into v (a non-nil pointer) under
// this package's wire rules, which encoding/json alone does not enforce:
// every object key must exactly match (case included) a JSON field name of
// the target struct, no key may repeat, null is refused where the Go type
// cannot hold it (anything but pointers, slices, maps and interfaces), and
// nothing may follow the value. Types with their own UnmarshalJSON (time.Time,
// json.RawMessage) are checked by that method.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValue(dec, reflect.TypeOf(v).Elem(), "", false); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not valid for %s: %v", reflect.TypeOf(v).Elem(), err)
	}
	return nil
}

// unmarshalStored is strictUnmarshal for values this package wrote with
// json.Marshal (jobs, reports, claim and presence records), with a fast
// path for exactly those bytes: the generated decoder (canonStored), or
// else decode with encoding/json and accept only if re-encoding gives the
// same bytes, which proves exactly the known keys,
// each once, in their case, and nothing after them (as Decode's canonical
// path does for events). Anything else is zeroed and decoded strictly.
func unmarshalStored(data []byte, v any) error {
	if canonStored(v, data) || canonicalUnmarshal(data, v) {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero() // nothing of a declined fast path stays
	return strictUnmarshal(data, v)
}

func canonicalUnmarshal(data []byte, v any) bool {
	return json.Unmarshal(data, v) == nil && encodesTo(v, data)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func checkValue(dec *json.Decoder, t reflect.Type, path string, nullable bool) error {
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: not JSON: %v", where(path), err)
		}
		if string(raw) == "null" && !nullable {
			return fmt.Errorf("%s: null is not allowed", where(path))
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: not JSON: %v", where(path), err)
	}
	if tok == nil {
		if nullable || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			return nil
		}
		return fmt.Errorf("%s: null is not allowed", where(path))
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkObject(dec, tok, path, func(key string) (reflect.Type, error) {
			fields := structFields(t)
			ft, ok := fields[key]
			if !ok {
				return nil, fmt.Errorf("%s: unknown key %q (allowed: %s)", where(path), key, fieldList(fields))
			}
			return ft, nil
		})
	case reflect.Map:
		return checkObject(dec, tok, path, func(string) (reflect.Type, error) { return t.Elem(), nil })
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return wantScalar(tok, "string (base64)", path)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return fmt.Errorf("%s: want an array", where(path))
		}
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, t.Elem(), fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case reflect.String:
		return wantScalar(tok, "string", path)
	case reflect.Bool:
		return wantScalar(tok, "boolean", path)
	default:
		return wantScalar(tok, "number", path)
	}
}

func checkObject(dec *json.Decoder, tok json.Token, path string, member func(string) (reflect.Type, error)) error {
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%s: want an object", where(path))
	}
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: not JSON: %v", where(path), err)
		}
		key, _ := kt.(string)
		if seen[key] {
			return fmt.Errorf("%s: duplicate key %q", where(path), key)
		}
		seen[key] = true
		ft, err := member(key)
		if err != nil {
			return err
		}
		if err := checkValue(dec, ft, join(path, key), false); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

func wantScalar(tok json.Token, want, path string) error {
	var ok bool
	switch want {
	case "boolean":
		_, ok = tok.(bool)
	case "number":
		_, ok = tok.(json.Number)
	default:
		_, ok = tok.(string)
	}
	if !ok {
		return fmt.Errorf("%s: want a %s", where(path), want)
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// structFields maps the JSON names of t's fields to their types, following
// encoding/json's rules for tags, "-", unexported fields and embedded
// structs without a name.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range structFields(ft) {
					m[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}

func fieldList(m map[string]reflect.Type) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, `"`+k+`"`)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}
