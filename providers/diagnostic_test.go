package providers

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestCapText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "short", in: "abc", n: 5, want: "abc"},
		{name: "exact", in: "abcde", n: 5, want: "abcde"},
		{name: "cut", in: "abcdef", n: 5, want: "abcde"},
		{name: "runes not bytes", in: "ééééé", n: 3, want: "ééé"},
		{name: "invalid utf-8 is repaired", in: "a\xffb", n: 10, want: "a\uFFFDb"},
		{name: "zero", in: "abc", n: 0, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CapText(tc.in, tc.n)
			require.Equal(t, tc.want, got)
			require.True(t, utf8.ValidString(got))
		})
	}
}

func TestEvidenceRendering(t *testing.T) {
	t.Parallel()
	stdout := []byte("{\"type\":\"a\"}\n\nnot json\n  {\"type\":\"b\"}  \n[1]\n")
	stderr := []byte("warning: x\n{\"e\":1}\n")
	got := Evidence{
		Note:     "claude exited with status 1",
		Code:     "child_exit",
		Terminal: []Field{{Name: "subtype", Value: "error_max_turns"}, {Name: "is_error", Value: "true", Literal: true}, {Name: "n", Value: "41", Literal: true}},
		Stdout:   stdout,
		Stderr:   stderr,
	}.String()
	require.Equal(t, "claude exited with status 1\n"+
		"diagnostic: child_exit\n"+
		`terminal: {"subtype":"error_max_turns","is_error":true,"n":41}`+"\n"+
		"stdout: 4 line(s), 2 JSON event(s); stderr: 2 line(s), 1 JSON event(s)", got)
}

func TestEvidenceCaps(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 2*FieldCap)
	tests := []struct {
		name string
		e    Evidence
	}{
		{name: "long note", e: Evidence{Note: long}},
		{name: "long code", e: Evidence{Code: long}},
		{name: "long field", e: Evidence{Terminal: []Field{{Name: "result", Value: long}}}},
		{name: "many fields", e: Evidence{Note: long, Code: long, Terminal: func() []Field {
			var fs []Field
			for i := 0; i < 20; i++ {
				fs = append(fs, Field{Name: "f", Value: long})
			}
			return fs
		}()}},
		{name: "literal that is not a literal", e: Evidence{Terminal: []Field{{Name: "x", Value: `{"a":1}`, Literal: true}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.e.String()
			require.LessOrEqual(t, utf8.RuneCountInString(got), EvidenceCap)
			for _, line := range strings.Split(got, "\n") {
				if strings.HasPrefix(line, "terminal: ") {
					continue // one rendered object holding several capped fields
				}
				require.LessOrEqual(t, utf8.RuneCountInString(line), FieldCap+len("diagnostic: "), "line %q", line)
			}
			require.NotContains(t, got, strings.Repeat("x", FieldCap+1))
			require.True(t, strings.HasSuffix(got, "JSON event(s)") || utf8.RuneCountInString(got) == EvidenceCap)
		})
	}
	require.Contains(t, Evidence{Terminal: []Field{{Name: "x", Value: `{"a":1}`, Literal: true}}}.String(), `"x":"{\"a\":1}"`,
		"a non-scalar literal is quoted, never spliced in")
}

func TestFailureEvidenceCountsOnly(t *testing.T) {
	t.Parallel()
	got := FailureEvidence("preflight failed", "", nil, []byte("secret-token line\n"), []byte("Not logged in\n"))
	require.Equal(t, "preflight failed\nstdout: 1 line(s), 0 JSON event(s); stderr: 1 line(s), 0 JSON event(s)", got)
}

func TestTerminalFields(t *testing.T) {
	t.Parallel()
	one := 1
	tests := []struct {
		provider policy.Provider
		fixture  string
		want     []Field
	}{
		{policy.Claude, "usage-exhausted", []Field{
			{Name: "subtype", Value: "success"}, {Name: "is_error", Value: "true", Literal: true},
			{Name: "terminal_reason", Value: "api_error"}, {Name: "api_error_status", Value: "429", Literal: true},
			{Name: "result", Value: "You've hit your session limit · resets 11pm (Asia/Nicosia)"}}},
		{policy.Codex, "bad-model", []Field{{Name: "type", Value: "turn.failed"},
			{Name: "message", Value: "unexpected status 404 Not Found: The model `gpt-5.5` does not exist or you do not have access to it."}}},
		{policy.Grok, "max-turns", []Field{{Name: "type", Value: "result"}, {Name: "subtype", Value: "error_max_turns"},
			{Name: "is_error", Value: "true", Literal: true}, {Name: "errors[0]", Value: "Reached maximum number of turns (5)"}}},
		{policy.Cursor, "error-envelope", []Field{{Name: "subtype", Value: "error"}, {Name: "is_error", Value: "true", Literal: true},
			{Name: "result", Value: "model stream failed"}}},
		{policy.OpenCode, "insufficient-balance", []Field{{Name: "error", Value: "APIError"},
			{Name: "message", Value: "Insufficient balance. Manage your billing here: https://opencode.ai/workspace/wrk_01KZ/billing"},
			{Name: "statusCode", Value: "401", Literal: true}}},
		{policy.Gemini, "json-auth", []Field{{Name: "type", Value: "FatalAuthenticationError"},
			{Name: "message", Value: "Please set an Auth method."}, {Name: "code", Value: "41", Literal: true}}},
		{policy.Antigravity, "denied", []Field{{Name: "status", Value: "ERROR"}, {Name: "num_turns", Value: "1", Literal: true},
			{Name: "denied_actions", Value: "present"}}},
		{policy.Devin, "usage-exhausted", nil},
	}
	for _, tc := range tests {
		t.Run(string(tc.provider), func(t *testing.T) {
			t.Parallel()
			req := testRequest(tc.provider, "m", policy.ReadOnly)
			c := fixtureCapture(t, tc.provider, req, tc.fixture, one)
			require.Equal(t, tc.want, TerminalFields(&Spec{Provider: tc.provider}, req, c))
		})
	}
}

func TestJSONLines(t *testing.T) {
	t.Parallel()
	var types []string
	s := jsonLines([]byte("{\"type\":\"a\"}\r\n\n  \nnot json\n{\"type\":\"b\"}\n{\"type\":"), func(o rawObject) {
		types = append(types, o.typ())
	})
	require.Equal(t, []string{"a", "b"}, types)
	require.Equal(t, 4, s.lines)
	require.Equal(t, 2, s.events)
	require.Equal(t, 2, s.firstBad)
	require.False(t, s.truncated)
}

func TestRawObjectTypes(t *testing.T) {
	t.Parallel()
	o, ok := decodeObject([]byte(`{"s":"x","b":true,"n":12,"f":1.5,"neg":-1,"big":1e400,"int":3.0,"null":null,"str_num":"7"}`))
	require.True(t, ok)
	_, isString := o.str("b")
	require.False(t, isString)
	v, isBool := o.boolean("b")
	require.True(t, v && isBool)
	_, isBool = o.boolean("s")
	require.False(t, isBool)
	require.Equal(t, int64(12), *o.count("n"))
	require.Equal(t, int64(3), *o.count("int"))
	require.Nil(t, o.count("f"), "a fractional token count is not a count")
	require.Nil(t, o.count("neg"))
	require.Nil(t, o.count("str_num"))
	require.Nil(t, o.cost("big"))
	require.Nil(t, o.cost("neg"))
	require.InDelta(t, 1.5, *o.cost("f"), 0)
	require.True(t, o.isNull("null"))
	require.False(t, o.isNull("missing"))
	_, ok = decodeObject([]byte(`null`))
	require.False(t, ok)
	_, ok = decodeObject([]byte(`{"a":1} trailing`))
	require.False(t, ok)
}
