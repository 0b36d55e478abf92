package providers

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseOpenCode reads `opencode run --format json` (RUNNER.md §2
// "opencode", PROVIDER-PROTOCOLS.md §5; the V1 streamed delivery).
//
// Events carry sessionID and a part with id, messageID and sessionID.
// A repeated part (same event type and id, identical bytes) counts once; a
// conflicting repeat is rejected. Steps open with step_start and close with
// step_finish; text, reasoning and tool_use belong to the open step. The
// final step must be finished with reason "stop", carry non-blank text and
// no tool use, and nothing step-bearing may follow it. One session only.
// Usage and cost are summed over distinct step_finish parts. Any error
// event (older NamedError and newer typed shapes alike) is the terminal
// failure and removes terminal success. OpenCode reports no model.
func parseOpenCode(_ Request, c Capture) Parsed {
	t := openCodeTranscript{seen: map[string][]byte{}}
	st := jsonLines(c.Stdout, t.event)
	p := Parsed{Lines: st.lines, Events: st.events, SessionID: nonBlankID(t.session)}
	p.Usage = nonEmptyUsage(t.usage)
	if t.costSet {
		cost := t.cost
		p.CostUSD = &cost
	}
	if t.lastError != nil {
		p.TerminalError = openCodeErrorText(t.lastError)
	}
	var final *openCodeStep
	if n := len(t.steps); n > 0 {
		final = &t.steps[n-1]
	}
	switch {
	case lineError("opencode", st) != nil:
		p.ProtocolError = lineError("opencode", st)
	case t.fault != nil:
		p.ProtocolError = t.fault
	case final == nil:
		p.ProtocolError = errors.New("opencode emitted no step")
	case t.open:
		p.ProtocolError = errors.New("opencode final step did not finish")
	case final.reason != "stop":
		p.ProtocolError = fmt.Errorf("opencode final step finished with reason %q, not stop", CapText(final.reason, 50))
	case final.tool:
		p.ProtocolError = errors.New("opencode final step used tools")
	case strings.TrimSpace(strings.Join(final.text, "")) == "":
		p.ProtocolError = errors.New("opencode final step carries no text")
	}
	p.TerminalSuccess = p.ProtocolError == nil && t.lastError == nil
	if p.TerminalSuccess {
		p.FinalText = strings.Join(final.text, "\n")
	}
	if t.lastError != nil {
		p.ProtocolError = nil // the typed failure wins over stream faults
	}
	return p
}

// openCodeStep is one model step of the stream.
type openCodeStep struct {
	message string
	text    []string
	tool    bool
	reason  string
}

// openCodeTranscript folds the event stream.
type openCodeTranscript struct {
	session   string
	seen      map[string][]byte // event type + part id → part bytes
	steps     []openCodeStep
	open      bool
	usage     policy.Usage
	cost      float64
	costSet   bool
	lastError rawObject
	fault     error
}

func (t *openCodeTranscript) fail(format string, args ...any) {
	if t.fault == nil {
		t.fault = fmt.Errorf(format, args...)
	}
}

func (t *openCodeTranscript) event(e rawObject) {
	typ := e.typ()
	sid := e.text("sessionID")
	if typ == "error" {
		if sid != "" && t.session != "" && sid != t.session {
			t.fail("opencode error event belongs to another session")
		}
		t.lastError = e
		return
	}
	switch typ {
	case "step_start", "text", "reasoning", "tool_use", "step_finish":
	default:
		return // unknown or informational events (done, newer additions)
	}
	if sid == "" {
		t.fail("opencode %s event carries no sessionID", typ)
		return
	}
	if t.session == "" {
		t.session = sid
	} else if sid != t.session {
		t.fail("opencode stream mixes sessions")
		return
	}
	part, ok := e.obj("part")
	if !ok {
		t.fail("opencode %s event carries no part", typ)
		return
	}
	if ps, ok := part.str("sessionID"); ok && ps != sid {
		t.fail("opencode %s part belongs to another session", typ)
		return
	}
	id := part.text("id")
	if id == "" {
		t.fail("opencode %s part carries no id", typ)
		return
	}
	key := typ + "\x00" + id
	if prev, dup := t.seen[key]; dup {
		if !bytes.Equal(prev, e["part"]) {
			t.fail("opencode repeated part %q with different content", CapText(id, 100))
		}
		return
	}
	t.seen[key] = e["part"]
	message := part.text("messageID")
	if typ == "step_start" {
		if t.open {
			t.fail("opencode started a step inside an unfinished step")
			return
		}
		t.steps = append(t.steps, openCodeStep{message: message})
		t.open = true
		return
	}
	if !t.open {
		t.fail("opencode %s event outside a step", typ)
		return
	}
	step := &t.steps[len(t.steps)-1]
	if message != step.message {
		t.fail("opencode %s event belongs to another message than its step", typ)
		return
	}
	switch typ {
	case "text":
		step.text = append(step.text, part.text("text"))
	case "tool_use":
		step.tool = true
	case "step_finish":
		step.reason = part.text("reason")
		t.open = false
		t.addUsage(part)
	}
}

func (t *openCodeTranscript) addUsage(part rawObject) {
	addOpenCodeSpend(&t.usage, &t.cost, &t.costSet, part)
}

// addOpenCodeSpend adds a step's or an assistant's cost and tokens (both
// shapes carry cost and tokens{input, output, reasoning, total,
// cache{read, write}}) to the totals.
func addOpenCodeSpend(usage *policy.Usage, cost *float64, costSet *bool, part rawObject) {
	if c := part.cost("cost"); c != nil {
		*cost += *c
		*costSet = true
	}
	tokens, ok := part.obj("tokens")
	if !ok {
		return
	}
	cache, _ := tokens.obj("cache")
	add := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	add(&usage.InputTokens, tokens.count("input"))
	add(&usage.OutputTokens, tokens.count("output"))
	add(&usage.ReasoningTokens, tokens.count("reasoning"))
	add(&usage.TotalTokens, tokens.count("total"))
	add(&usage.CachedInputTokens, cache.count("read"))
	add(&usage.CacheCreationInputTokens, cache.count("write"))
}

// openCodeErrorFields reads both error shapes: NamedError
// {name, data{message, statusCode}} and typed {type, message, status}.
func openCodeErrorFields(e rawObject) (kind, message string) {
	errObj, _ := e.obj("error")
	data, _ := errObj.obj("data")
	kind = errObj.text("name")
	if kind == "" {
		kind = errObj.text("type")
	}
	message = errObj.text("message")
	if message == "" {
		message = data.text("message")
	}
	if message == "" {
		message = e.text("message")
	}
	return strings.TrimSpace(kind), strings.TrimSpace(message)
}

func openCodeErrorText(e rawObject) string {
	kind, message := openCodeErrorFields(e)
	switch {
	case kind != "" && message != "":
		return CapText(kind+": "+message, FieldCap)
	case message != "":
		return CapText(message, FieldCap)
	case kind != "":
		return CapText(kind, FieldCap)
	}
	return "opencode reported an error"
}

func openCodeTerminalFields(c Capture) []Field {
	var last rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		if e.typ() == "error" {
			last = e
		}
	})
	if last == nil {
		return nil
	}
	kind, message := openCodeErrorFields(last)
	var out []Field
	if f, ok := textField("error", kind); ok {
		out = append(out, f)
	}
	if f, ok := textField("message", message); ok {
		out = append(out, f)
	}
	errObj, _ := last.obj("error")
	data, _ := errObj.obj("data")
	out = append(out, fieldsFrom(errObj, "status")...)
	out = append(out, fieldsFrom(data, "statusCode")...)
	return out
}
