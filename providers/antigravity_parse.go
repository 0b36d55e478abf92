package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// antigravityDeniedActions is the fixed evidence code of an Antigravity
// result that recorded denied actions; the actions themselves are not kept.
const antigravityDeniedActions = "antigravity_denied_actions_present"

// parseAntigravity reads `agy --print= --output-format stream-json`
// (RUNNER.md §2 "antigravity / agy"). Every line is a JSON object naming
// its "event".
//
// Acceptance: init first (a conversation_id and init{model, agent}, the
// agent being this attempt's pstack agent), exactly one init, exactly one
// result and it is last, no error event, num_turns 1, the same
// conversation id throughout, status "SUCCESS" with a non-empty response
// and no denied_actions. Tool step_update events must name a tool of the
// attempt's allowlist. The reported model is the init.model echo, which
// VerifyModel only accepts as pinned-argv. denied_actions is a provider
// failure; a non-empty list of action objects is recorded as a verified
// denial with cause unknown under a fixed code (the actions are not kept).
// A non-success result or an error event is the typed failure and wins over
// stream faults.
func parseAntigravity(req Request, c Capture) Parsed {
	var evs []rawObject
	bad := 0
	st := jsonLines(c.Stdout, func(e rawObject) {
		if _, ok := e.str("event"); !ok && bad == 0 {
			bad = len(evs) + 1
		}
		evs = append(evs, e)
	})
	p := Parsed{Lines: st.lines, Events: st.events}
	result, inits, results, errorsSeen := antigravityShape(evs)
	if result != nil {
		p.TerminalSuccess = antigravitySucceeded(result) && evs[len(evs)-1].text("event") == "result"
		p.Usage = antigravityUsage(result)
	}
	if len(evs) > 0 && evs[0].text("event") == "init" {
		p.SessionID = nonBlankID(evs[0].text("conversation_id"))
		if initEvent, ok := evs[0].obj("init"); ok {
			p.ReportedModel = nonBlankID(initEvent.text("model"))
		}
	}
	if result != nil && !p.TerminalSuccess {
		p.TerminalError = antigravityTerminalError(result)
		if result.has("denied_actions") {
			if actions, ok := result.arr("denied_actions"); ok && len(actions) > 0 && allObjects(actions) {
				p.ToolDenial = &policy.ToolDenial{Verified: true, Cause: policy.DenialUnknown, Evidence: antigravityDeniedActions}
			}
		}
	}
	if errorsSeen > 0 && p.TerminalError == "" {
		p.TerminalError = "antigravity emitted an error event"
		if e := antigravityLastError(evs); e != "" {
			p.TerminalError = e
		}
	}
	if p.TerminalError != "" && !p.TerminalSuccess {
		return p // the typed failure wins over stream faults
	}
	var initEvent rawObject
	if len(evs) > 0 {
		initEvent, _ = evs[0].obj("init")
	}
	switch {
	case lineError("antigravity", st) != nil:
		p.ProtocolError = lineError("antigravity", st)
	case bad != 0:
		p.ProtocolError = fmt.Errorf("antigravity event %d names no event type", bad)
	case len(evs) == 0 || evs[0].text("event") != "init" || initEvent == nil || p.SessionID == nil:
		p.ProtocolError = errors.New("antigravity stream does not begin with an init event carrying a conversation id")
	case inits != 1:
		p.ProtocolError = fmt.Errorf("antigravity emitted %d init events", inits)
	case results != 1 || evs[len(evs)-1].text("event") != "result" || result == nil:
		p.ProtocolError = errors.New("antigravity stream does not end with exactly one result")
	case errorsSeen > 0:
		p.ProtocolError = errors.New("antigravity stream carries an error event")
	case !antigravityOneTurn(result):
		p.ProtocolError = errors.New("antigravity result does not report exactly one turn")
	case !antigravitySameConversation(evs, *p.SessionID):
		p.ProtocolError = errors.New("antigravity conversation id changed within the stream")
	case initEvent.text("agent") != AntigravityAgentName(req):
		p.ProtocolError = errors.New("antigravity init does not name this attempt's agent")
	}
	if p.ProtocolError == nil {
		p.ProtocolError = antigravityAudit(req, evs)
	}
	if p.ProtocolError == nil && p.TerminalError == "" && p.TerminalSuccess {
		p.FinalText = strings.TrimSpace(result.text("response"))
	}
	return p
}

// antigravityShape finds the last result object and counts the framing
// events.
func antigravityShape(evs []rawObject) (result rawObject, inits, results, errs int) {
	for _, e := range evs {
		switch e.text("event") {
		case "init":
			inits++
		case "result":
			results++
			result, _ = e.obj("result")
		case "error":
			errs++
		}
	}
	return result, inits, results, errs
}

// antigravitySucceeded is Antigravity's trusted success: status SUCCESS, a
// non-empty response and no denied_actions.
func antigravitySucceeded(result rawObject) bool {
	return result.text("status") == "SUCCESS" && strings.TrimSpace(result.text("response")) != "" &&
		!result.has("denied_actions")
}

func antigravityOneTurn(result rawObject) bool {
	n := result.count("num_turns")
	return n != nil && *n == 1
}

// antigravitySameConversation checks every conversation id the stream
// carries against the init's.
func antigravitySameConversation(evs []rawObject, id string) bool {
	for _, e := range evs {
		if e.has("conversation_id") && e.text("conversation_id") != id {
			return false
		}
		if r, ok := e.obj("result"); ok && r.has("conversation_id") && r.text("conversation_id") != id {
			return false
		}
	}
	return true
}

// antigravityAudit checks tool steps against the attempt's allowlist.
func antigravityAudit(req Request, evs []rawObject) error {
	allowed := antigravityTools(req.Mode)
	for i, e := range evs {
		if e.text("event") != "step_update" {
			continue
		}
		step, ok := e.obj("step_update")
		if !ok {
			return fmt.Errorf("antigravity step_update %d is malformed", i+1)
		}
		if step.text("step_type") != "tool" {
			continue
		}
		name := step.text("tool_name")
		found := false
		for _, t := range allowed {
			found = found || t == name
		}
		if !found {
			return fmt.Errorf("antigravity used tool %q outside the %s allowlist", CapText(name, 100), req.Mode)
		}
	}
	return nil
}

func antigravityUsage(result rawObject) *policy.Usage {
	u, ok := result.obj("usage")
	if !ok {
		return nil
	}
	return nonEmptyUsage(policy.Usage{
		InputTokens:       u.count("input_tokens"),
		CachedInputTokens: u.count("cache_read_tokens"),
		OutputTokens:      u.count("output_tokens"),
		ReasoningTokens:   u.count("thinking_tokens"),
		TotalTokens:       u.count("total_tokens"),
	})
}

func antigravityTerminalError(result rawObject) string {
	if result.has("denied_actions") {
		return "antigravity reported denied actions"
	}
	if e, ok := result.obj("error"); ok && strings.TrimSpace(e.text("message")) != "" {
		return CapText(strings.TrimSpace(e.text("message")), FieldCap)
	}
	if s := strings.TrimSpace(result.text("error")); s != "" {
		return CapText(s, FieldCap)
	}
	if s := result.text("status"); s != "" {
		return CapText("antigravity result status "+s, FieldCap)
	}
	return "antigravity did not report a successful result"
}

// antigravityLastError is the message of the last error event.
func antigravityLastError(evs []rawObject) string {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].text("event") != "error" {
			continue
		}
		if e, ok := evs[i].obj("error"); ok && strings.TrimSpace(e.text("message")) != "" {
			return CapText(strings.TrimSpace(e.text("message")), FieldCap)
		}
		return CapText(strings.TrimSpace(evs[i].text("message")), FieldCap)
	}
	return ""
}

func allObjects(raws []json.RawMessage) bool {
	for _, r := range raws {
		if _, ok := decodeObject(r); !ok {
			return false
		}
	}
	return true
}

func antigravityTerminalFields(c Capture) []Field {
	var last rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		switch e.text("event") {
		case "result":
			last, _ = e.obj("result")
		case "error":
			last = e
		}
	})
	if last == nil {
		return nil
	}
	out := fieldsFrom(last, "event", "status", "num_turns", "response", "message")
	if last.has("denied_actions") {
		out = append(out, Field{Name: "denied_actions", Value: "present"})
	}
	return out
}
