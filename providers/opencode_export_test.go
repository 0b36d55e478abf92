package providers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

const v2Session = "ses_0a1b2c"

// v2Event renders one V2 stream line for message msg.
func v2Event(typ, id, msg, extra string) string {
	idKey := "id"
	if typ == "tool_use" {
		idKey = "partID"
	}
	return fmt.Sprintf(`{"type":%q,"timestamp":1,"sessionID":%q,"part":{%q:%q,"sessionID":%q,"messageID":%q%s}}`,
		typ, v2Session, idKey, id, v2Session, msg, extra)
}

// v2Stream is a V2 stream: a tool step, then a text step finishing stop.
func v2Stream() []string {
	return []string{
		v2Event("step_start", "p1", "msg_a1", ""),
		v2Event("tool_use", "p2", "msg_a1", `,"id":"call_1","tool":"read","state":{"status":"completed"}`),
		v2Event("step_finish", "p3", "msg_a1", `,"reason":"tool-calls"`),
		v2Event("step_start", "p4", "msg_a2", ""),
		v2Event("text", "p5", "msg_a2", `,"text":"Done."`),
		v2Event("step_finish", "p6", "msg_a2", `,"reason":"stop"`),
	}
}

// v2ExportDoc renders a session export for req; edit rewrites it.
func v2ExportDoc(req Request) string {
	agent := OpenCodeAgentName(req)
	asst := func(id, finish, content string, completed bool) string {
		done := `,"completed":20`
		if !completed {
			done = ""
		}
		return fmt.Sprintf(`{"type":"assistant","id":%q,"agent":%q,"model":{"providerID":"openai","id":"gpt-6.1-sol"},"finish":%q,"time":{"created":10%s},"content":[%s],"tokens":{"input":5,"output":2,"cache":{"read":1,"write":0}},"cost":0.5}`,
			id, agent, finish, done, content)
	}
	return fmt.Sprintf(`{"session":{"id":%q,"directory":%q,"outcome":"succeeded"},"messages":[{"type":"user","id":"msg_u","text":%q},%s,%s],"idle":{"type":"session.idle","outcome":"succeeded"}}`,
		v2Session, req.Cwd, string(req.Prompt),
		asst("msg_a1", "tool-calls", `{"type":"tool","id":"call_1","name":"read","state":{"status":"completed"}}`, true),
		asst("msg_a2", "stop", `{"type":"text","text":"Done."}`, true))
}

func TestParseOpenCodeV2(t *testing.T) {
	t.Parallel()
	req := baseRequest(policy.OpenCode)
	req.Contract = "v2"
	good := v2ExportDoc(req)
	zero, one := 0, 1
	type row struct {
		name       string
		stream     []string
		export     *string // nil: the export did not run
		exportExit int
		exit       int
		protocol   string // "" when delivered
		success    bool
		terminal   string
	}
	str := func(s string) *string { return &s }
	edit := func(old, new string) *string {
		require.Contains(t, good, old)
		return str(strings.Replace(good, old, new, 1))
	}
	rows := []row{
		{name: "delivered", stream: v2Stream(), export: &good, success: true},
		{name: "the final step_finish missing from the stream", stream: v2Stream()[:5], export: &good, success: true},
		{name: "text reconciled after its step finished", stream: append(v2Stream(), v2Event("text", "prt_msg_a2_text-1", "msg_a2", `,"text":" More."`)), export: &good, success: true},
		{name: "no export ran", stream: v2Stream(), protocol: "did not run", success: true},
		{name: "the export failed", stream: v2Stream(), export: str(""), exportExit: 1, protocol: "session export failed", success: true},
		{name: "a truncated export", stream: v2Stream(), export: str(good[:len(good)/2]), protocol: "not one JSON object", success: true},
		{name: "another session", stream: v2Stream(), export: edit(`"id":"`+v2Session+`"`, `"id":"ses_stale"`), protocol: "another session", success: true},
		{name: "a forked session", stream: v2Stream(), export: edit(`"outcome":"succeeded"},"messages"`, `"outcome":"succeeded","parentID":"ses_parent"},"messages"`), protocol: "forked", success: true},
		{name: "another directory", stream: v2Stream(), export: edit(`"directory":"`, `"directory":"/elsewhere`), protocol: "another directory", success: true},
		{name: "another prompt", stream: v2Stream(), export: edit(`"text":"## Worker`, `"text":"## Other`), protocol: "prompt", success: true},
		{name: "a second user message", stream: v2Stream(), export: edit(`,{"type":"assistant","id":"msg_a2"`, `,{"type":"user","id":"msg_u2","text":"more"},{"type":"assistant","id":"msg_a2"`), protocol: "more than one user message", success: true},
		{name: "another model", stream: v2Stream(), export: edit(`"id":"gpt-6.1-sol"`, `"id":"gpt-5.5"`), protocol: "another model", success: true},
		{name: "an unknown message type", stream: v2Stream(), export: edit(`,{"type":"assistant","id":"msg_a2"`, `,{"type":"system","id":"m"},{"type":"assistant","id":"msg_a2"`), protocol: "unknown type", success: true},
		{name: "an unknown member", stream: v2Stream(), export: str(strings.Replace(good, `"idle"`, `"extra":1,"idle"`, 1)), protocol: "unknown member", success: true},
		{name: "a session outcome that failed", stream: v2Stream()[:5], export: edit(`"outcome":"succeeded"}`, `"outcome":"failed"}`), protocol: "not succeeded"},
		{name: "an idle record that failed", stream: v2Stream()[:5], export: str(strings.Replace(good, `"session.idle","outcome":"succeeded"`, `"session.idle","outcome":"interrupted"`, 1)), protocol: "not succeeded"},
		{name: "an unsettled earlier tool", stream: v2Stream(), export: edit(`"state":{"status":"completed"}`, `"state":{"status":"running"}`), protocol: "unsettled tool", success: true},
		{name: "the final assistant used a tool", stream: v2Stream()[:5], export: edit(`{"type":"text","text":"Done."}`, `{"type":"text","text":"Done."},{"type":"tool","id":"c2","name":"edit","state":{"status":"completed"}}`), protocol: "tool-free stop"},
		{name: "the final assistant incomplete", stream: v2Stream()[:5], export: str(strings.Replace(good, `"finish":"stop","time":{"created":10,"completed":20}`, `"finish":"stop","time":{"created":10}`, 1)), protocol: "tool-free stop"},
		{name: "a streamed assistant missing from the export", stream: append(v2Stream(), v2Event("step_start", "p7", "msg_a3", "")), export: &good, protocol: "in order", success: true},
		{name: "assistants out of order", stream: v2Stream(), export: str(strings.Replace(strings.Replace(good, `"msg_a1"`, `"msg_tmp"`, 1), `"msg_a2"`, `"msg_a1"`, 1)), protocol: "in order", success: true},
		{name: "a stream mixing sessions", stream: append(v2Stream(), strings.Replace(v2Event("text", "p9", "msg_a2", `,"text":"x"`), v2Session, "ses_other", -1)), export: &good, protocol: "mixes sessions"},
		{name: "a conflicting repeated part", stream: append(v2Stream(), v2Event("text", "p5", "msg_a2", `,"text":"Other."`)), export: &good, protocol: "different content"},
		{name: "a nonzero exit after completion keeps the proof", stream: v2Stream(), export: &good, exit: 1, success: true},
		{name: "a typed error without completion", stream: append(v2Stream()[:4], `{"type":"error","timestamp":1,"sessionID":"`+v2Session+`","error":{"type":"provider.rate-limit","message":"Error 429","status":429}}`), export: edit(`"outcome":"succeeded"}`, `"outcome":"failed"}`), exit: 1, terminal: "provider.rate-limit: Error 429"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exitCode := zero
			if tc.exit != 0 {
				exitCode = one
			}
			c := Capture{Stdout: []byte(strings.Join(tc.stream, "\n") + "\n"), ExitCode: &exitCode}
			if tc.export != nil {
				ec := tc.exportExit
				c.Export = &Capture{Stdout: []byte(*tc.export), ExitCode: &ec}
			}
			p := parseOpenCodeContract(req, c)
			require.Equal(t, tc.success || (tc.protocol == "" && tc.terminal == ""), p.TerminalSuccess, "terminal success")
			if tc.terminal != "" {
				require.Equal(t, tc.terminal, p.TerminalError)
				require.NoError(t, p.ProtocolError, "the typed failure wins")
				return
			}
			if tc.protocol == "" {
				require.NoError(t, p.ProtocolError)
				require.Contains(t, p.FinalText, "Done.")
				require.Equal(t, v2Session, *p.SessionID)
				require.EqualValues(t, 10, *p.Usage.InputTokens, "usage from the export, once")
				require.EqualValues(t, 2, *p.Usage.CachedInputTokens)
				require.InDelta(t, 1.0, *p.CostUSD, 1e-9)
				return
			}
			require.ErrorContains(t, p.ProtocolError, tc.protocol)
			require.Empty(t, p.FinalText, "no output without delivery")
		})
	}
	t.Run("export argv", func(t *testing.T) {
		t.Parallel()
		c := Capture{Stdout: []byte(strings.Join(v2Stream(), "\n"))}
		require.Equal(t, []string{"/opt/bin/opencode", "session", "export", "--standalone", v2Session}, openCodeExportArgv(req, c))
		v1 := req
		v1.Contract = "v1"
		require.Nil(t, openCodeExportArgv(v1, c), "V1 never exports")
		require.Nil(t, openCodeExportArgv(req, Capture{Stdout: []byte(`{"type":"error","error":{"message":"x"}}`)}), "no session, no export")
	})
}

// FuzzParseOpenCodeV2 feeds arbitrary stream and export bytes: the V2
// parser never panics and delivers only with a completed export.
func FuzzParseOpenCodeV2(f *testing.F) {
	req := baseRequest(policy.OpenCode)
	req.Contract = "v2"
	f.Add([]byte(strings.Join(v2Stream(), "\n")), []byte(v2ExportDoc(req)))
	f.Add([]byte("{}"), []byte("[]"))
	f.Fuzz(func(t *testing.T, stream, export []byte) {
		zero := 0
		p := parseOpenCodeContract(req, Capture{Stdout: stream, ExitCode: &zero, Export: &Capture{Stdout: export, ExitCode: &zero}})
		if p.ProtocolError == nil && p.TerminalError == "" {
			require.True(t, p.TerminalSuccess)
			require.NotEmpty(t, strings.TrimSpace(p.FinalText))
		}
	})
}
