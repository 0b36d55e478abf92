package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseOpenCodeContract parses a settled OpenCode workload by the contract
// its version banner selected: V1 delivers from the strict streamed
// transcript, V2 from the session export that followed the workload.
func parseOpenCodeContract(req Request, c Capture) Parsed {
	if req.Contract == openCodeContractV2 {
		return parseOpenCodeV2(req, c)
	}
	return parseOpenCode(req, c)
}

// openCodeExportArgv is V2's one post-workload command: `opencode session
// export --standalone <sessionID>` for the single session the stream
// named. V1 never exports; a stream without exactly one session exports
// nothing (delivery then fails closed).
func openCodeExportArgv(req Request, c Capture) []string {
	if req.Contract != openCodeContractV2 {
		return nil
	}
	st := inspectOpenCodeV2Stream(c.Stdout)
	if st.fault != nil || st.session == "" {
		return nil
	}
	return []string{argv0(&Spec{Binaries: []string{"opencode"}}, req), "session", "export", "--standalone", st.session}
}

// openCodeV2Stream is what the V2 JSONL inspection keeps: the one session,
// the assistant message identities in order of first appearance, the last
// typed error, and whether the stream alone shows a strict completion (a
// final tool-free step_finish with reason stop and text), which is the
// conservative replay guard when the export fails.
type openCodeV2Stream struct {
	session    string
	assistants []string
	lastError  rawObject
	strict     bool
	fault      error
	lines      int
	events     int
}

// inspectOpenCodeV2Stream reads the V2 `run --format json` stream. Every
// step-bearing event carries the session; parts carry their message. Tool
// parts are identified by partID on V2 (id is the tool call), other parts
// by id; a repeated identity must repeat identical bytes. Text may arrive
// after its step finished (the CLI's reconciliation of text-only
// messages), and the final step_finish may be missing: the export decides
// delivery.
func inspectOpenCodeV2Stream(stdout []byte) openCodeV2Stream {
	var st openCodeV2Stream
	seen := map[string][]byte{}
	type msgState struct {
		text   strings.Builder
		tool   bool
		reason string
	}
	msgs := map[string]*msgState{}
	lastMsg := ""
	lastWasFinish := false
	failf := func(format string, args ...any) {
		if st.fault == nil {
			st.fault = fmt.Errorf(format, args...)
		}
	}
	ls := jsonLines(stdout, func(e rawObject) {
		typ := e.typ()
		sid := e.text("sessionID")
		if typ == "error" {
			if sid != "" && st.session != "" && sid != st.session {
				failf("opencode error event belongs to another session")
			}
			st.lastError = e
			return
		}
		switch typ {
		case "step_start", "text", "reasoning", "tool_use", "step_finish":
		default:
			return
		}
		if sid == "" {
			failf("opencode %s event carries no sessionID", typ)
			return
		}
		if st.session == "" {
			st.session = sid
		} else if sid != st.session {
			failf("opencode stream mixes sessions")
			return
		}
		part, ok := e.obj("part")
		if !ok {
			failf("opencode %s event carries no part", typ)
			return
		}
		if ps, ok := part.str("sessionID"); ok && ps != sid {
			failf("opencode %s part belongs to another session", typ)
			return
		}
		id := part.text("id")
		if typ == "tool_use" {
			id = part.text("partID")
		}
		message := part.text("messageID")
		if id == "" || message == "" {
			failf("opencode %s part carries no identity or message", typ)
			return
		}
		key := typ + "\x00" + id
		if prev, dup := seen[key]; dup {
			if !bytes.Equal(prev, e["part"]) {
				failf("opencode repeated part %q with different content", CapText(id, 100))
			}
			return
		}
		seen[key] = e["part"]
		m, known := msgs[message]
		if !known {
			m = &msgState{}
			msgs[message] = m
			st.assistants = append(st.assistants, message)
		}
		lastMsg = message
		lastWasFinish = typ == "step_finish"
		switch typ {
		case "text":
			m.text.WriteString(part.text("text"))
		case "tool_use":
			m.tool = true
		case "step_finish":
			m.reason = part.text("reason")
		}
	})
	st.lines, st.events = ls.lines, ls.events
	if err := lineError("opencode", ls); err != nil && st.fault == nil {
		st.fault = err
	}
	if m := msgs[lastMsg]; m != nil && lastWasFinish {
		st.strict = st.fault == nil && st.lastError == nil && m.reason == "stop" && !m.tool && strings.TrimSpace(m.text.String()) != ""
	}
	return st
}

// openCodeV2Export is what a session export establishes.
type openCodeV2Export struct {
	completed bool // the final assistant completed with a tool-free stop and the session and idle outcomes succeeded
	final     string
	usage     policy.Usage
	cost      float64
	costSet   bool
}

// parseOpenCodeV2 reads a V2 attempt: the stream's identities and errors,
// then the session export, which alone delivers (final text and usage are
// taken from it, once). A completed export keeps terminal success even
// when delivery fails (nonzero workload exit, a mismatch), so a finished
// attempt is never replayed; without one, the stream's strict completion
// is the conservative guard.
func parseOpenCodeV2(req Request, c Capture) Parsed {
	st := inspectOpenCodeV2Stream(c.Stdout)
	p := Parsed{Lines: st.lines, Events: st.events, SessionID: nonBlankID(st.session)}
	if st.lastError != nil {
		p.TerminalError = openCodeErrorText(st.lastError)
	}
	var exp openCodeV2Export
	var err error
	switch {
	case st.fault != nil:
		err = st.fault
	case st.session == "":
		err = errors.New("opencode stream named no session to export")
	case c.Export == nil:
		err = errors.New("opencode session export did not run to completion")
	case !exited0(*c.Export):
		err = fmt.Errorf("opencode session export failed (%s)", exitText(*c.Export))
	default:
		exp, err = readOpenCodeV2Export(req, st, c.Export.Stdout)
	}
	p.TerminalSuccess = exp.completed || st.strict
	if err != nil {
		p.ProtocolError = err
		if st.lastError != nil && !p.TerminalSuccess {
			p.ProtocolError = nil // the typed failure wins over delivery faults
		}
		return p
	}
	p.FinalText = exp.final
	p.Usage = nonEmptyUsage(exp.usage)
	if exp.costSet {
		cost := exp.cost
		p.CostUSD = &cost
	}
	return p
}

// openCodeV2ExportKeys are the export document's members; anything else
// is unknown and fails closed.
var openCodeV2ExportKeys = []string{"session", "messages", "idle"}

// readOpenCodeV2Export validates a V2 session export against the attempt:
// the stream's session, fresh (no parent, no earlier messages: exactly one
// user message, first, carrying the prompt), the expected cwd, every
// assistant on the attempt agent and configured model, the stream's
// assistants in the same order with the export's final assistant being
// the final one observed, earlier tools settled, the final assistant
// completed with a tool-free stop and non-empty text, and both the session
// outcome and the trailing idle record succeeded. It returns completion
// separately so a delivery failure can still veto replay.
func readOpenCodeV2Export(req Request, st openCodeV2Stream, out []byte) (openCodeV2Export, error) {
	var exp openCodeV2Export
	v, err := decodeOrdered(out)
	doc, ok := v.(jsonObject)
	if err != nil || !ok {
		return exp, errors.New("opencode session export is not one JSON object")
	}
	if dup := duplicateKey(doc); dup != "" {
		return exp, fmt.Errorf("opencode session export repeats %q", dup)
	}
	for _, m := range doc {
		if !containsString(openCodeV2ExportKeys, m.Key) {
			return exp, fmt.Errorf("opencode session export has an unknown member %q", CapText(m.Key, 50))
		}
	}
	session, _ := objectAt(doc, "session")
	idle, _ := objectAt(doc, "idle")
	msgsV, _ := doc.get("messages")
	msgs, ok := msgsV.([]any)
	if session == nil || idle == nil || !ok {
		return exp, errors.New("opencode session export lacks its session, messages or idle record")
	}
	// Completion first: it vetoes replay even when delivery fails below.
	var assistants []jsonObject
	for _, raw := range msgs {
		m, ok := raw.(jsonObject)
		if !ok || duplicateKey(m) != "" {
			return exp, errors.New("opencode session export holds a malformed message")
		}
		if t, _ := m.get("type"); t == "assistant" {
			assistants = append(assistants, m)
		}
	}
	sid, _ := session.get("id")
	succeeded := stringAt(session, "outcome") == "succeeded" && stringAt(idle, "outcome") == "succeeded"
	var final jsonObject
	if n := len(assistants); n > 0 {
		final = assistants[n-1]
	}
	finalText, finalTool := openCodeV2Content(final)
	exp.completed = sid == st.session && succeeded && final != nil && stringAt(final, "finish") == "stop" &&
		openCodeV2Completed(final) && !finalTool && strings.TrimSpace(finalText) != "" && !final.has("error")

	switch {
	case sid != st.session:
		return exp, errors.New("opencode session export is for another session than the stream")
	case session.has("parentID") && !isJSONNull(session.mustGet("parentID")):
		return exp, errors.New("opencode session export is a forked or child session, not a fresh one")
	case stringAt(session, "directory") != req.Cwd:
		return exp, errors.New("opencode session export ran in another directory than the attempt's cwd")
	case !succeeded:
		return exp, errors.New("opencode session outcome or its trailing idle record is not succeeded")
	case len(msgs) == 0:
		return exp, errors.New("opencode session export holds no messages")
	}
	first, _ := msgs[0].(jsonObject)
	if stringAt(first, "type") != "user" || stringAt(first, "text") != string(req.Prompt) {
		return exp, errors.New("opencode session export does not start with the attempt's prompt")
	}
	wantModel := openCodeV2Model(req.CLIModel)
	var ids []string
	for i, raw := range msgs[1:] {
		m := raw.(jsonObject)
		switch stringAt(m, "type") {
		case "assistant":
		case "user":
			return exp, errors.New("opencode session export holds more than one user message")
		default:
			return exp, fmt.Errorf("opencode session export message %d has an unknown type", i+2)
		}
		id := stringAt(m, "id")
		if id == "" || containsString(ids, id) {
			return exp, errors.New("opencode session export repeats or omits an assistant identity")
		}
		ids = append(ids, id)
		if stringAt(m, "agent") != OpenCodeAgentName(req) {
			return exp, errors.New("opencode session export shows another agent than the attempt's")
		}
		model, _ := objectAt(m, "model")
		if model == nil || stringAt(model, "providerID") != stringAt(wantModel, "providerID") || stringAt(model, "id") != stringAt(wantModel, "model") || len(model) != 2 {
			return exp, errors.New("opencode session export shows another model than the configured one")
		}
		if err := openCodeV2Settled(m, i == len(msgs)-2); err != nil {
			return exp, err
		}
		exp.add(m)
	}
	if !subsequence(st.assistants, ids) || len(st.assistants) == 0 || st.assistants[len(st.assistants)-1] != ids[len(ids)-1] {
		return exp, errors.New("opencode session export does not hold the streamed assistants in order ending with the final one")
	}
	if !exp.completed {
		return exp, errors.New("opencode final assistant did not complete with a tool-free stop and text")
	}
	exp.final = strings.TrimSpace(finalText)
	return exp, nil
}

// openCodeV2Content joins an assistant's text items and reports whether it
// holds a tool item.
func openCodeV2Content(m jsonObject) (text string, tool bool) {
	items, _ := m.get("content")
	list, _ := items.([]any)
	var parts []string
	for _, raw := range list {
		item, _ := raw.(jsonObject)
		switch stringAt(item, "type") {
		case "text":
			parts = append(parts, stringAt(item, "text"))
		case "tool":
			tool = true
		}
	}
	return strings.Join(parts, "\n"), tool
}

// openCodeV2Completed reports whether an assistant carries a completion
// time.
func openCodeV2Completed(m jsonObject) bool {
	t, _ := objectAt(m, "time")
	v, ok := t.get("completed")
	_, isNum := v.(json.Number)
	return ok && isNum
}

// openCodeV2Settled checks one assistant: known content items only, every
// tool settled (completed or error), and a non-final assistant completed.
func openCodeV2Settled(m jsonObject, final bool) error {
	items, _ := m.get("content")
	list, ok := items.([]any)
	if !ok {
		return errors.New("opencode session export assistant has no content list")
	}
	for _, raw := range list {
		item, _ := raw.(jsonObject)
		switch stringAt(item, "type") {
		case "text", "reasoning":
		case "tool":
			state, _ := objectAt(item, "state")
			if s := stringAt(state, "status"); s != "completed" && s != "error" {
				return errors.New("opencode session export holds an unsettled tool")
			}
		default:
			return errors.New("opencode session export holds an unknown content item")
		}
	}
	if !final && !openCodeV2Completed(m) {
		return errors.New("opencode session export holds an incomplete earlier assistant")
	}
	return nil
}

// add sums an assistant's tokens and cost.
func (e *openCodeV2Export) add(m jsonObject) {
	addOpenCodeSpend(&e.usage, &e.cost, &e.costSet, rawFromOrdered(m))
}

// subsequence reports whether every element of sub appears in all, in
// order.
func subsequence(sub, all []string) bool {
	i := 0
	for _, s := range all {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// objectAt returns a member that is an object (nil otherwise).
func objectAt(o jsonObject, key string) (jsonObject, bool) {
	v, _ := o.get(key)
	obj, ok := v.(jsonObject)
	return obj, ok
}

// stringAt returns a member that is a string ("" otherwise).
func stringAt(o jsonObject, key string) string {
	v, _ := o.get(key)
	s, _ := v.(string)
	return s
}

// has reports whether the object has a member named key.
func (o jsonObject) has(key string) bool {
	_, ok := o.get(key)
	return ok
}

// isJSONNull reports whether a decoded value is JSON null.
func isJSONNull(v any) bool { return v == nil }

// rawFromOrdered re-reads an ordered object as a rawObject, for the shared
// count and cost readers (a malformed value reads as absent).
func rawFromOrdered(o jsonObject) rawObject {
	b, err := o.MarshalJSON()
	if err != nil {
		return rawObject{}
	}
	raw, ok := decodeObject(b)
	if !ok {
		return rawObject{}
	}
	return raw
}
