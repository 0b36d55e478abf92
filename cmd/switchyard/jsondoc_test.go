package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// snakeKey is a key with an underscore between word characters: the style
// the CLI's own JSON documents no longer use (schemaVersion 2).
var snakeKey = regexp.MustCompile(`[a-zA-Z0-9]_[a-zA-Z0-9]`)

// requireJSONDoc decodes out, one JSON document of the CLI's own, fails
// on each of its jsonDocProblems, and returns the decoded document.
func requireJSONDoc(t *testing.T, name, out string, foreign ...string) any {
	t.Helper()
	doc, problems := jsonDocProblems(out, foreign...)
	for _, p := range problems {
		t.Errorf("%s: %s in:\n%s", name, p, out)
	}
	if len(problems) > 0 {
		t.FailNow()
	}
	return doc
}

// jsonDocProblems decodes out, one JSON document of the CLI's own (an
// object, or an array of objects), and says what is wrong with it: the
// object (each element) lacks "schemaVersion": jsonSchemaVersion, or a key
// at any depth is snake_case. foreign names the subtrees that are another
// format's objects, kept as that format spells them, as paths of keys
// with "[]" for "every element" ("providers[].snapshot").
func jsonDocProblems(out string, foreign ...string) (any, []string) {
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, []string{"not JSON: " + err.Error()}
	}
	if dec.More() {
		return doc, []string{"more than one JSON document"}
	}
	tops, prefix := []any{doc}, ""
	if arr, ok := doc.([]any); ok {
		tops, prefix = arr, "[]"
	}
	var problems []string
	for i, top := range tops {
		obj, ok := top.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("document %d is not an object", i))
			continue
		}
		if v, ok := obj["schemaVersion"].(json.Number); !ok || v.String() != fmt.Sprint(jsonSchemaVersion) {
			problems = append(problems, fmt.Sprintf("document %d has schemaVersion %v, want %d", i, obj["schemaVersion"], jsonSchemaVersion))
		}
		for _, bad := range snakeKeys(top, prefix, foreign) {
			problems = append(problems, "snake_case key "+bad)
		}
	}
	return doc, problems
}

// requireJSONLines is requireJSONDoc for each line of a JSON-lines stream.
func requireJSONLines(t *testing.T, name, out string, foreign ...string) []any {
	t.Helper()
	var docs []any
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		docs = append(docs, requireJSONDoc(t, fmt.Sprintf("%s line %d", name, i+1), line, foreign...))
	}
	return docs
}

// snakeKeys walks v and returns the paths of its snake_case keys, skipping
// the subtrees at the foreign paths.
func snakeKeys(v any, path string, foreign []string) []string {
	for _, f := range foreign {
		if path == f {
			return nil
		}
	}
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if snakeKey.MatchString(k) {
				bad = append(bad, p)
			}
			bad = append(bad, snakeKeys(child, p, foreign)...)
		}
	case []any:
		for _, child := range x {
			bad = append(bad, snakeKeys(child, path+"[]", foreign)...)
		}
	}
	return bad
}

// TestVersionedJSON: schemaVersion goes first into an object, into each
// element of an array, and into an empty object; anything that is not an
// object (or an array of them) and a document that sets schemaVersion
// itself are refused; HTML is not escaped.
func TestVersionedJSON(t *testing.T) {
	t.Parallel()
	type row struct {
		A string `json:"a"`
	}
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"object", row{A: "<x&y>"}, `{"schemaVersion":2,"a":"<x&y>"}`},
		{"empty object", struct{}{}, `{"schemaVersion":2}`},
		{"array", []row{{A: "1"}, {A: "2"}}, `[{"schemaVersion":2,"a":"1"},{"schemaVersion":2,"a":"2"}]`},
		{"empty array", []row{}, `[]`},
		{"map", map[string]string{"status": "none"}, `{"schemaVersion":2,"status":"none"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := versionedJSON(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
	for _, tc := range []struct {
		name string
		in   any
	}{
		{"string", "x"},
		{"array of numbers", []int{1}},
		{"null", (*row)(nil)},
		{"own schemaVersion", map[string]int{"schemaVersion": 1}},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			_, err := versionedJSON(tc.in)
			require.Error(t, err)
		})
	}
	var buf bytes.Buffer
	require.NoError(t, writeDoc(&buf, row{A: "b"}))
	require.Equal(t, "{\n  \"schemaVersion\": 2,\n  \"a\": \"b\"\n}\n", buf.String())
}

// TestJSONDocCheckFails: the check the output tests use catches a
// snake_case key at depth (outside the foreign subtrees only), a missing
// or old schemaVersion, and one in an array's element.
func TestJSONDocCheckFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		foreign   []string
		want      []string
	}{
		{"good", `{"schemaVersion":2,"lanes":[{"laneId":"x"}]}`, nil, nil},
		{"snake at depth", `{"schemaVersion":2,"providers":[{"quota_view":{},"snapshot":{"acquired_at":1}}]}`, []string{"providers[].snapshot"},
			[]string{"snake_case key providers[].quota_view"}},
		{"foreign not skipped elsewhere", `{"schemaVersion":2,"snapshot":{"acquired_at":1}}`, []string{"providers[].snapshot"},
			[]string{"snake_case key snapshot.acquired_at"}},
		{"no version", `{"run":"x"}`, nil, []string{"document 0 has schemaVersion <nil>, want 2"}},
		{"version 1", `{"schema_version":1}`, nil, []string{"document 0 has schemaVersion <nil>, want 2", "snake_case key schema_version"}},
		{"array element", `[{"schemaVersion":2},{"run":"x"}]`, nil, []string{"document 1 has schemaVersion <nil>, want 2"}},
		{"not an object", `[1]`, nil, []string{"document 0 is not an object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := jsonDocProblems(tc.doc, tc.foreign...)
			require.Equal(t, tc.want, got)
		})
	}
}
