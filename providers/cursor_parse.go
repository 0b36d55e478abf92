package providers

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseCursor reads `cursor-agent --print --output-format json` (RUNNER.md
// §2 "cursor", PROVIDER-PROTOCOLS.md §3): one result object. A stream-json
// capture whose last event is the result is accepted too.
//
// Acceptance: every line a JSON object, exactly one result event and it is
// last, with subtype "success", is_error false and a non-empty result.
// session_id, camelCase usage and model come from it; model, when present,
// is the report VerifyModel matches exactly. On failure Cursor prints no
// envelope and explains itself on stderr, which the parser only counts. An
// errored result is the typed failure and wins over stream faults.
func parseCursor(_ Request, c Capture) Parsed {
	evs, st := decodeEvents(c.Stdout)
	p := Parsed{Lines: st.lines, Events: st.events}
	var result rawObject
	results, last := 0, false
	for i, e := range evs {
		if e.typ() == "result" {
			result, results, last = e, results+1, i == len(evs)-1
		}
	}
	if result == nil {
		p.ProtocolError = lineError("cursor", st)
		if p.ProtocolError == nil {
			p.ProtocolError = errors.New("cursor did not emit a result envelope")
		}
		return p
	}
	p.TerminalSuccess = cursorSuccess(result)
	p.SessionID = nonBlankID(result.text("session_id"))
	p.Usage = cursorUsage(result)
	p.CostUSD = result.cost("total_cost_usd")
	if isError, _ := result.boolean("is_error"); isError || (result.text("subtype") != "success" && result.text("subtype") != "") {
		p.TerminalError = CapText(strings.TrimSpace(result.text("result")), FieldCap)
		p.TerminalError = cmp.Or(p.TerminalError, CapText("cursor result "+result.text("subtype"), FieldCap))
		return p
	}
	switch {
	case lineError("cursor", st) != nil:
		p.ProtocolError = lineError("cursor", st)
	case results != 1 || !last:
		p.ProtocolError = fmt.Errorf("cursor must end its output with exactly one result (saw %d, last: %t)", results, last)
	case !p.TerminalSuccess:
		p.ProtocolError = errors.New(`cursor result is not an explicit success (subtype "success", is_error false)`)
	case strings.TrimSpace(result.text("result")) == "":
		p.ProtocolError = errors.New("cursor result carries no final text")
	}
	if p.ProtocolError != nil {
		return p
	}
	p.ReportedModel = nonBlankID(result.text("model"))
	p.FinalText = result.text("result")
	return p
}

// cursorSuccess is Cursor's trusted success envelope.
func cursorSuccess(e rawObject) bool {
	isError, set := e.boolean("is_error")
	return e.typ() == "result" && e.text("subtype") == "success" && set && !isError
}

// cursorStdoutSuccess reports whether any stdout envelope is a success; it
// vetoes the stderr usage diagnostic.
func cursorStdoutSuccess(c Capture) bool {
	evs, _ := decodeEvents(c.Stdout)
	for _, e := range evs {
		if cursorSuccess(e) {
			return true
		}
	}
	return false
}

func cursorUsage(result rawObject) *policy.Usage {
	u, ok := result.obj("usage")
	if !ok {
		return nil
	}
	return nonEmptyUsage(policy.Usage{
		InputTokens:              u.count("inputTokens"),
		CachedInputTokens:        u.count("cacheReadTokens"),
		CacheCreationInputTokens: u.count("cacheWriteTokens"),
		OutputTokens:             u.count("outputTokens"),
	})
}

func cursorTerminalFields(c Capture) []Field {
	evs, _ := decodeEvents(c.Stdout)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].typ() == "result" {
			return fieldsFrom(evs[i], "subtype", "is_error", "result")
		}
	}
	return nil
}
