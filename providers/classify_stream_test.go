package providers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

const (
	dStart    = DispositionStart
	dProgress = DispositionProgress
	dTerminal = DispositionTerminal
	dNone     = DispositionNone
)

// TestStreamClassifySuccessTranscripts classifies every line of each
// provider's recorded success workload stream.
func TestStreamClassifySuccessTranscripts(t *testing.T) {
	t.Parallel()
	want := map[policy.Provider][]Disposition{
		policy.Claude:      {dStart, dProgress, dProgress, dProgress, dNone, dProgress, dTerminal}, // rate_limit_event is metadata
		policy.Codex:       {dStart, dProgress, dProgress, dProgress, dProgress, dTerminal},
		policy.Grok:        {dStart, dProgress, dProgress, dProgress, dTerminal},
		policy.Devin:       {dProgress},
		policy.Cursor:      {dTerminal},
		policy.Antigravity: {dStart, dProgress, dProgress, dProgress, dTerminal},
		policy.OpenCode:    {dProgress, dProgress, dProgress, dProgress, dProgress, dTerminal},     // step_finish tool-calls is non-terminal usage
		policy.Gemini:      {dStart, dNone, dProgress, dProgress, dProgress, dProgress, dTerminal}, // the user echo is none
	}
	for _, p := range Names() {
		t.Run(string(p), func(t *testing.T) {
			s, err := Lookup(p)
			require.NoError(t, err)
			require.NotNil(t, s.Classify, "every spec classifies its stream")
			b, err := os.ReadFile(filepath.Join("..", "testdata", "transcripts", string(p), "success", "workload", "stdout"))
			require.NoError(t, err)
			var got []Disposition
			for _, l := range bytes.Split(b, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					got = append(got, s.Classify(l))
				}
			}
			require.Equal(t, want[p], got)
		})
	}
}

// TestStreamClassifyCases covers terminal errors (checked before usage),
// interim errors, blank, non-JSON and unknown lines per provider.
func TestStreamClassifyCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p    policy.Provider
		line string
		want Disposition
	}{
		{policy.Claude, `{"type":"result","subtype":"error_during_execution","is_error":true,"usage":{"output_tokens":3}}`, dTerminal},
		{policy.Claude, `{"type":"system","subtype":"compact_boundary"}`, dNone},
		{policy.Claude, `{"type":"stream_event","event":{"type":"content_block_delta"}}`, dProgress},
		{policy.Codex, `{"type":"turn.failed","error":{"message":"unauthorized"}}`, dTerminal},
		{policy.Codex, `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`, dTerminal},
		{policy.Codex, `{"type":"error","message":"Reconnecting... 1/5"}`, dProgress},
		{policy.Codex, `{"type":"error"}`, dNone},
		{policy.Codex, `panic: runtime error`, dNone},
		{policy.Codex, `{"type":"item.started","item":{"type":"command_execution"}}`, dProgress},
		{policy.Grok, `{"type":"result","subtype":"error_during_execution","is_error":true}`, dTerminal},
		{policy.Grok, `{"type":"end"}`, dTerminal},
		{policy.Grok, `{"type":"telemetry"}`, dNone},
		{policy.Devin, `   `, dNone},
		{policy.Devin, `Error: Quota exhausted`, dProgress},
		{policy.Cursor, `{"type":"result","subtype":"error","is_error":true}`, dTerminal},
		{policy.Cursor, `{"not":"typed"}`, dNone},
		{policy.Antigravity, `{"event":"result","result":{"status":"ERROR"}}`, dTerminal},
		{policy.Antigravity, `{"event":"error","error":{"message":"429"}}`, dProgress},
		{policy.Antigravity, `{"event":"heartbeat"}`, dNone},
		{policy.OpenCode, `{"type":"error","error":{"name":"APIError"}}`, dTerminal},
		{policy.OpenCode, `{"type":"step_finish","part":{"reason":"stop","tokens":{"total":3}}}`, dTerminal},
		{policy.OpenCode, `{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"total":3}}}`, dProgress},
		{policy.OpenCode, `{"type":"done"}`, dNone},
		{policy.Gemini, `{"type":"result","status":"error","error":{"type":"TerminalQuotaError"}}`, dTerminal},
		{policy.Gemini, `{"type":"message","role":"assistant","content":"","delta":true}`, dNone},
		{policy.Gemini, `{"type":"message","role":"assistant","content":"hi","delta":true}`, dProgress},
	}
	for _, p := range Names() {
		s, err := Lookup(p)
		require.NoError(t, err)
		for _, blank := range []string{"", "   ", "\t", "{", "null", "[1]", "\x00\xff"} {
			if p == policy.Devin && len(bytes.TrimSpace([]byte(blank))) > 0 {
				require.Equal(t, dProgress, s.Classify([]byte(blank)), "%s %q", p, blank)
				continue
			}
			require.Equal(t, dNone, s.Classify([]byte(blank)), "%s %q", p, blank)
		}
	}
	for _, tc := range cases {
		s, err := Lookup(tc.p)
		require.NoError(t, err)
		require.Equal(t, tc.want, s.Classify([]byte(tc.line)), "%s %s", tc.p, tc.line)
	}
}

func FuzzStreamClassify(f *testing.F) {
	f.Add([]byte(`{"type":"result"}`))
	f.Add([]byte(`{"event":"init"}`))
	f.Add([]byte(`{"type":"step_finish","part":7}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, p := range Names() {
			s, _ := Lookup(p)
			switch d := s.Classify(line); d {
			case dStart, dProgress, dTerminal, dNone:
			default:
				t.Fatalf("%s: disposition %q", p, d)
			}
		}
	})
}

func TestHasSignInProbe(t *testing.T) {
	t.Parallel()
	want := map[policy.Provider]bool{policy.Codex: true, policy.Grok: true, policy.Devin: true, policy.Cursor: true,
		policy.Claude: false, policy.Gemini: false, policy.OpenCode: false, policy.Antigravity: false}
	for _, p := range Names() {
		s, err := Lookup(p)
		require.NoError(t, err)
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			req := Request{Provider: p, Mode: mode, CLIModel: "m", Executable: "/bin/" + string(p)}
			require.Equal(t, want[p], HasSignInProbe(s, req), "%s %s", p, mode)
		}
	}
	cursor, err := Lookup(policy.Cursor)
	require.NoError(t, err)
	withKey := Request{Provider: policy.Cursor, Mode: policy.ReadOnly, Executable: "/bin/cursor-agent", ParentEnv: map[string]string{"CURSOR_API_KEY": "x"}}
	require.False(t, HasSignInProbe(cursor, withKey), "an API key defers cursor's authentication")
	require.False(t, HasSignInProbe(nil, withKey))
}
