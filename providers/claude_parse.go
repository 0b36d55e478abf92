package providers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// claudeSynthetic is the model Claude Code puts on the assistant banners it
// writes itself (API errors, limit notices); it never names a served model.
const claudeSynthetic = "<synthetic>"

// parseClaude reads `claude -p --output-format stream-json --verbose`
// (RUNNER.md §2 "claude", PROVIDER-PROTOCOLS.md §1). It also accepts the
// JSON-array form that verbose settings force on `--output-format json`
// and a single result object, and it never depends on key order.
//
// Acceptance: exactly one result event, last, with subtype "success",
// is_error false, a non-empty result and a session_id. The reported model
// is the single distinct message.model of main-thread assistant events
// (parent_tool_use_id explicitly null, same session); helper events (a
// string parent_tool_use_id), <synthetic> banners, modelUsage and
// init.model never count. A result with is_error true is the provider's
// typed failure and wins over stream-structure faults.
func parseClaude(_ Request, c Capture) Parsed {
	evs, st := decodeEvents(c.Stdout)
	p := Parsed{Lines: st.lines, Events: st.events}
	result, results, last := claudeResult(evs)
	if result == nil {
		p.ProtocolError = lineError("claude", st)
		if p.ProtocolError == nil {
			p.ProtocolError = errors.New("claude did not emit a terminal result event")
		}
		return p
	}
	p.SessionID = nonBlankID(result.text("session_id"))
	p.Usage = claudeUsage(result)
	p.CostUSD = result.cost("total_cost_usd")
	isError, isErrorSet := result.boolean("is_error")
	p.TerminalSuccess = result.text("subtype") == "success" && isErrorSet && !isError
	if isError {
		p.TerminalError = claudeTerminalError(result)
		return p
	}
	switch {
	case lineError("claude", st) != nil:
		p.ProtocolError = lineError("claude", st)
	case results != 1 || !last:
		p.ProtocolError = fmt.Errorf("claude must end its stream with exactly one result event (saw %d, last: %t)", results, last)
	case !p.TerminalSuccess:
		p.ProtocolError = errors.New(`claude result is not an explicit success (subtype "success", is_error false)`)
	case strings.TrimSpace(result.text("result")) == "":
		p.ProtocolError = errors.New("claude result carries no final text")
	case p.SessionID == nil:
		p.ProtocolError = errors.New("claude result carries no session_id")
	}
	if p.ProtocolError != nil {
		return p
	}
	model, err := claudePrimaryModel(evs, result.text("session_id"))
	if err != nil {
		p.ProtocolError = err
		return p
	}
	p.ReportedModel = model
	p.FinalText = result.text("result")
	return p
}

// claudeResult returns the last result event, how many there were, and
// whether the last one ends the stream.
func claudeResult(evs []rawObject) (result rawObject, n int, last bool) {
	for i, e := range evs {
		if e.typ() == "result" {
			result, n, last = e, n+1, i == len(evs)-1
		}
	}
	return result, n, last
}

// claudeLastResult is the final candidate envelope of a capture: the last
// result event, whatever surrounds it.
func claudeLastResult(c Capture) rawObject {
	evs, _ := decodeEvents(c.Stdout)
	r, _, _ := claudeResult(evs)
	return r
}

// claudePrimaryModel returns the one distinct main-thread model, nil when
// only helpers or synthetic banners reported one.
func claudePrimaryModel(evs []rawObject, session string) (*string, error) {
	var model string
	for _, e := range evs {
		if e.typ() != "assistant" {
			continue
		}
		if !e.has("parent_tool_use_id") {
			return nil, errors.New("claude assistant event has no parent_tool_use_id, so its owner is unknown")
		}
		if !e.isNull("parent_tool_use_id") {
			if owner, ok := e.str("parent_tool_use_id"); ok && owner != "" {
				continue // a helper or subagent event
			}
			return nil, errors.New("claude assistant event has a parent_tool_use_id that is neither null nor a tool id")
		}
		if e.text("session_id") != session {
			return nil, errors.New("claude main-thread assistant event belongs to another session")
		}
		msg, _ := e.obj("message")
		m := strings.TrimSpace(msg.text("model"))
		switch {
		case m == "":
			return nil, errors.New("claude main-thread assistant event did not report a model")
		case m == claudeSynthetic:
			continue
		case model == "":
			model = m
		case model != m:
			return nil, fmt.Errorf("claude reported multiple primary models (%s, %s)", CapText(model, 100), CapText(m, 100))
		}
	}
	return nonBlankID(model), nil
}

func claudeUsage(result rawObject) *policy.Usage {
	u, ok := result.obj("usage")
	if !ok {
		return nil
	}
	out := policy.Usage{
		InputTokens:              u.count("input_tokens"),
		CachedInputTokens:        u.count("cache_read_input_tokens"),
		CacheCreationInputTokens: u.count("cache_creation_input_tokens"),
		OutputTokens:             u.count("output_tokens"),
	}
	if d, ok := u.obj("output_tokens_details"); ok {
		out.ReasoningTokens = d.count("thinking_tokens")
	}
	return nonEmptyUsage(out)
}

// claudeTerminalError is the typed failure of an errored result: its
// result text, else its errors, else its subtype.
func claudeTerminalError(result rawObject) string {
	if s := strings.TrimSpace(result.text("result")); s != "" {
		return CapText(s, FieldCap)
	}
	if errs := stringItems(result, "errors", 3); len(errs) > 0 {
		return CapText(strings.Join(errs, "; "), FieldCap)
	}
	if s := result.text("subtype"); s != "" {
		return CapText("claude result "+s, FieldCap)
	}
	return "claude reported an error result"
}

func claudeTerminalFields(c Capture) []Field {
	r := claudeLastResult(c)
	if r == nil {
		return nil
	}
	out := fieldsFrom(r, "subtype", "is_error", "terminal_reason", "api_error_status", "result")
	for i, e := range stringItems(r, "errors", 3) {
		if f, ok := textField(fmt.Sprintf("errors[%d]", i), e); ok {
			out = append(out, f)
		}
	}
	return out
}

// stringItems returns up to limit non-blank string elements of an array
// member, each capped at FieldCap.
func stringItems(o rawObject, key string, limit int) []string {
	items, _ := o.arr(key)
	var out []string
	for _, raw := range items {
		if len(out) == limit {
			break
		}
		e := rawObject{"v": raw}
		if s, ok := e.str("v"); ok && strings.TrimSpace(s) != "" {
			out = append(out, CapText(strings.TrimSpace(s), FieldCap))
		}
	}
	return out
}
