package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// jsonSchemaVersion is the "schemaVersion" every JSON document of the
// CLI's own commands carries (docs/OPERATIONS.md, "JSON output"): the
// first key of a top-level object, of each element of a top-level array
// (status's run list, workers) and of each line of a JSON-lines stream
// (status --watch --json). Version 1 is the output before the key was
// added: snake_case keys in usage, doctor, models and setup, which
// carried "schema_version": 1, and no version elsewhere. The policy and
// runner commands, history (the stored events) and the contract commands
// print their own formats and carry none.
const jsonSchemaVersion = 2

// versionedJSON is v as one compact JSON line with schemaVersion first in
// the object v marshals to, or in each element of the array it marshals
// to (no HTML escaping). Anything else is a programming error.
func versionedJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(buf.Bytes())
	if len(raw) > 0 && raw[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, e := range elems {
			stamped, err := stampVersion(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, stamped...)
		}
		return append(out, ']'), nil
	}
	return stampVersion(raw)
}

// stampVersion puts schemaVersion first in the JSON object raw.
func stampVersion(raw json.RawMessage) ([]byte, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return nil, fmt.Errorf("a JSON document is an object, not %.40s", raw)
	}
	if _, ok := keys["schemaVersion"]; ok {
		return nil, fmt.Errorf("the document sets schemaVersion itself")
	}
	rest := bytes.TrimSpace(raw[1:])
	out := fmt.Appendf(nil, `{"schemaVersion":%d`, jsonSchemaVersion)
	if rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// writeDoc prints v, a document of the CLI's own, with its schemaVersion
// (see versionedJSON), indented by two spaces.
func writeDoc(w io.Writer, v any) error {
	b, err := versionedJSON(v)
	if err != nil {
		return failf("write JSON: %v", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return failf("write JSON: %v", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// writeDocLine prints v with its schemaVersion as one JSON line (a line
// of a JSON-lines stream).
func writeDocLine(w io.Writer, v any) error {
	b, err := versionedJSON(v)
	if err != nil {
		return failf("write JSON: %v", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
