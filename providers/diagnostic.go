package providers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchyard-dev/switchyard/policy"
)

// Caps on what a failure receipt retains (provider-dispatch.md "Failure
// receipt diagnostics").
const (
	// FieldCap bounds every retained text field and error message, in
	// characters (runes).
	FieldCap = 500
	// EvidenceCap bounds a rendered evidence block, in characters.
	EvidenceCap = 4000
)

// maxScanLines bounds how many non-blank lines a parser reads. Output past
// it is not read at all, and the parser reports a protocol error instead of
// guessing at an outcome it did not see.
const maxScanLines = 1 << 20

// CapText returns s as valid UTF-8, cut to at most n characters.
func CapText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// Field is one selected terminal field of a failure diagnostic: a typed
// member of the provider's final envelope, never free transcript text.
type Field struct {
	Name  string
	Value string // capped at FieldCap characters when rendered
	// Literal marks a JSON number or boolean, rendered bare.
	Literal bool
}

// Evidence is a failure diagnostic before rendering. Captures are only
// counted (non-blank lines and JSON-object lines); their text is never
// copied into the block.
type Evidence struct {
	Note     string  // launcher-authored sentence
	Code     string  // rendered as "diagnostic: <code>"; "" omits the line
	Terminal []Field // selected terminal fields of the final envelope
	Stdout   []byte  // counted only
	Stderr   []byte  // counted only
}

// String renders the block: the note, the diagnostic code, the terminal
// fields as one JSON object and the capture counts, each text field capped
// at FieldCap and the whole block at EvidenceCap characters.
func (e Evidence) String() string {
	var b strings.Builder
	if note := strings.TrimSpace(e.Note); note != "" {
		b.WriteString(CapText(note, FieldCap))
		b.WriteByte('\n')
	}
	if code := strings.TrimSpace(e.Code); code != "" {
		b.WriteString("diagnostic: ")
		b.WriteString(CapText(code, FieldCap))
		b.WriteByte('\n')
	}
	if len(e.Terminal) > 0 {
		b.WriteString("terminal: ")
		b.WriteString(renderFields(e.Terminal))
		b.WriteByte('\n')
	}
	ol, oe := countCapture(e.Stdout)
	el, ee := countCapture(e.Stderr)
	fmt.Fprintf(&b, "stdout: %d line(s), %d JSON event(s); stderr: %d line(s), %d JSON event(s)", ol, oe, el, ee)
	return CapText(b.String(), EvidenceCap)
}

// FailureEvidence renders a diagnostic block; see Evidence.
func FailureEvidence(note, code string, terminal []Field, stdout, stderr []byte) string {
	return Evidence{Note: note, Code: code, Terminal: terminal, Stdout: stdout, Stderr: stderr}.String()
}

// TerminalFields selects the typed fields of a settled workload's final
// candidate envelope for its failure diagnostic, by the spec's
// TerminalFields selector. It returns nil for a provider without a stdout
// protocol (Devin) or without a recognizable final envelope.
func TerminalFields(spec *Spec, req Request, c Capture) []Field {
	if s := behaviourOf(spec, req); s != nil && s.TerminalFields != nil {
		return s.TerminalFields(c)
	}
	return nil
}

// providerOf prefers the spec's provider and falls back to the request's.
func providerOf(spec *Spec, req Request) policy.Provider {
	if spec != nil && spec.Provider != "" {
		return spec.Provider
	}
	return req.Provider
}

func renderFields(fields []Field) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(CapText(f.Name, FieldCap))
		b.Write(name)
		b.WriteByte(':')
		v := CapText(strings.TrimSpace(f.Value), FieldCap)
		if f.Literal && json.Valid([]byte(v)) && v != "" && v[0] != '"' && v[0] != '{' && v[0] != '[' {
			b.WriteString(v)
			continue
		}
		quoted, _ := json.Marshal(v)
		b.Write(quoted)
	}
	b.WriteByte('}')
	return b.String()
}

// Field helpers for the per-provider selections.

func textField(name, value string) (Field, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return Field{}, false
	}
	return Field{Name: name, Value: CapText(value, FieldCap)}, true
}

// fieldsFrom selects the named string, boolean and number members of o in
// the given order; other member types are skipped.
func fieldsFrom(o rawObject, names ...string) []Field {
	var out []Field
	for _, name := range names {
		raw, ok := o[name]
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) == 0:
		case raw[0] == '"':
			if s, ok := o.str(name); ok {
				if f, ok := textField(name, s); ok {
					out = append(out, f)
				}
			}
		case string(raw) == "true" || string(raw) == "false":
			out = append(out, Field{Name: name, Value: string(raw), Literal: true})
		case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
			if n, ok := o.number(name); ok && len(n) <= 40 {
				out = append(out, Field{Name: name, Value: n.String(), Literal: true})
			}
		}
	}
	return out
}

// Capture reading shared by the parsers.

// object is one decoded JSON object. Members stay raw so a value of an
// unexpected type is seen as such instead of being coerced.
type rawObject map[string]json.RawMessage

// decodeObject parses b as exactly one JSON object.
func decodeObject(b []byte) (rawObject, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var o rawObject
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

func (o rawObject) has(key string) bool { _, ok := o[key]; return ok }

// str returns a string member.
func (o rawObject) str(key string) (string, bool) {
	raw := bytes.TrimSpace(o[key])
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// text returns a string member, or "" when absent or not a string.
func (o rawObject) text(key string) string { s, _ := o.str(key); return s }

// typ is the "type" member.
func (o rawObject) typ() string { return o.text("type") }

// boolean returns a JSON boolean member; ok is false for any other type.
func (o rawObject) boolean(key string) (value, ok bool) {
	switch string(bytes.TrimSpace(o[key])) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// isNull reports whether key is present with the value null.
func (o rawObject) isNull(key string) bool {
	raw, ok := o[key]
	return ok && string(bytes.TrimSpace(raw)) == "null"
}

// obj returns an object member.
func (o rawObject) obj(key string) (rawObject, bool) {
	raw, ok := o[key]
	if !ok {
		return nil, false
	}
	return decodeObject(raw)
}

// arr returns an array member's raw elements.
func (o rawObject) arr(key string) ([]json.RawMessage, bool) {
	raw := bytes.TrimSpace(o[key])
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var out []json.RawMessage
	if json.Unmarshal(raw, &out) != nil {
		return nil, false
	}
	return out, true
}

// number returns a JSON number member.
func (o rawObject) number(key string) (json.Number, bool) {
	raw := bytes.TrimSpace(o[key])
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return "", false
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return n, true
}

// count returns a non-negative integral token count, nil otherwise.
func (o rawObject) count(key string) *int64 {
	n, ok := o.number(key)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil {
		if i < 0 {
			return nil
		}
		return &i
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f < 0 || f > math.MaxInt64/2 || f != math.Trunc(f) {
		return nil
	}
	i := int64(f)
	return &i
}

// cost returns a finite non-negative amount, nil otherwise.
func (o rawObject) cost(key string) *float64 {
	n, ok := o.number(key)
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return nil
	}
	return &f
}

// lineStats are the structural counts of one newline-delimited capture.
type lineStats struct {
	lines     int  // non-blank lines read
	events    int  // JSON objects decoded (lines, or a document's elements)
	firstBad  int  // 1-based index of the first non-blank line that is not a JSON object; 0 when none
	truncated bool // more than maxScanLines non-blank lines; the rest was not read
}

// malformed reports whether a line was not a JSON object.
func (s lineStats) malformed() bool { return s.firstBad != 0 }

// eachLine calls fn with every non-blank, trimmed line of b, up to
// maxScanLines.
func eachLine(b []byte, fn func(line []byte)) (lines int, truncated bool) {
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if lines == maxScanLines {
			return lines, true
		}
		lines++
		fn(line)
	}
	return lines, false
}

// jsonLines decodes b as newline-delimited JSON objects and calls fn with
// each object in order. Lines that are not JSON objects are counted, not
// passed on.
func jsonLines(b []byte, fn func(o rawObject)) lineStats {
	var s lineStats
	n := 0
	s.lines, s.truncated = eachLine(b, func(line []byte) {
		n++
		o, ok := decodeObject(line)
		if !ok {
			s.firstBad = cmp.Or(s.firstBad, n)
			return
		}
		s.events++
		fn(o)
	})
	return s
}

// countCapture counts non-blank lines and JSON-object lines.
func countCapture(b []byte) (lines, events int) {
	lines, _ = eachLine(b, func(line []byte) {
		if line[0] == '{' && json.Valid(line) {
			events++
		}
	})
	return lines, events
}

// documentObjects reads b as one JSON document: the elements of a
// top-level array of objects, or a single (possibly pretty-printed)
// object. ok is false when b is not such a document.
func documentObjects(b []byte) ([]rawObject, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case '[':
		var raws []json.RawMessage
		if json.Unmarshal(b, &raws) != nil {
			return nil, false
		}
		out := make([]rawObject, 0, len(raws))
		for _, r := range raws {
			o, ok := decodeObject(r)
			if !ok {
				return nil, false
			}
			out = append(out, o)
		}
		return out, true
	case '{':
		o, ok := decodeObject(b)
		if !ok {
			return nil, false
		}
		return []rawObject{o}, true
	}
	return nil, false
}

// decodeEvents decodes a capture that is either newline-delimited JSON or one
// JSON document (an array of events or a pretty-printed object). The
// document form is used only when the line form does not hold: the first
// non-blank byte opens an array, or some line was not a JSON object.
func decodeEvents(b []byte) ([]rawObject, lineStats) {
	var out []rawObject
	s := jsonLines(b, func(o rawObject) { out = append(out, o) })
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && (trimmed[0] == '[' || (s.malformed() && trimmed[0] == '{')) {
		if doc, ok := documentObjects(trimmed); ok {
			s.events, s.firstBad, s.truncated = len(doc), 0, false
			return doc, s
		}
	}
	return out, s
}

// lineError describes a capture that is not clean JSON lines.
func lineError(provider string, s lineStats) error {
	if s.truncated {
		return fmt.Errorf("%s output exceeds %d lines; the rest was not read", provider, maxScanLines)
	}
	if s.malformed() {
		return fmt.Errorf("%s emitted a line that is not a JSON object (line %d)", provider, s.firstBad)
	}
	return nil
}

// nonEmptyUsage returns u, nil when no count is set.
func nonEmptyUsage(u policy.Usage) *policy.Usage {
	if u.InputTokens == nil && u.CachedInputTokens == nil && u.CacheCreationInputTokens == nil &&
		u.OutputTokens == nil && u.ReasoningTokens == nil && u.TotalTokens == nil {
		return nil
	}
	return &u
}

// firstCount returns the first present count among keys.
func firstCount(o rawObject, keys ...string) *int64 {
	for _, k := range keys {
		if n := o.count(k); n != nil {
			return n
		}
	}
	return nil
}

// nonBlankID returns a capped, non-blank identifier, nil otherwise.
func nonBlankID(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	s = CapText(s, FieldCap)
	return &s
}

// runeLen counts characters.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
