package providers

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseGrok reads `grok --output-format streaming-messages-json`
// (RUNNER.md §2 "grok", PROVIDER-PROTOCOLS.md §6).
//
// The terminal record is the last result event; a later success supersedes
// an earlier error. Acceptance needs valid JSON lines and a last result
// with subtype "success", is_error false and a non-empty result string.
// session_id, usage and total_cost_usd come from that result. The reported
// model is read from the modelUsage keys of the result (or of an end
// envelope after it): one key is the report; with several, the key with
// strictly the most output tokens (else model calls) is the main model,
// and a tie is an ambiguous report, rejected. An errored result (or, with
// no result, an error event) is the typed failure and wins over stream
// faults.
func parseGrok(_ Request, c Capture) Parsed {
	var result, end, lastError rawObject
	st := jsonLines(c.Stdout, func(e rawObject) {
		switch e.typ() {
		case "result":
			result, end = e, nil
		case "end":
			end = e
		case "error":
			lastError = e
		}
	})
	p := Parsed{Lines: st.lines, Events: st.events}
	if result == nil {
		p.ProtocolError = lineError("grok", st)
		if p.ProtocolError == nil {
			p.ProtocolError = errors.New("grok did not emit a terminal result event")
		}
		if lastError != nil {
			// The typed failure wins over stream faults.
			p.ProtocolError = nil
			p.TerminalError = CapText(strings.TrimSpace(lastError.text("message")), FieldCap)
			p.TerminalError = cmp.Or(p.TerminalError, "grok emitted an error event")
		}
		return p
	}
	p.SessionID = nonBlankID(result.text("session_id"))
	if p.SessionID == nil {
		p.SessionID = nonBlankID(result.text("sessionId"))
	}
	p.Usage = grokUsage(result)
	p.CostUSD = result.cost("total_cost_usd")
	isError, isErrorSet := result.boolean("is_error")
	p.TerminalSuccess = result.text("subtype") == "success" && isErrorSet && !isError
	if isError || (result.text("subtype") != "success" && result.text("subtype") != "") {
		p.TerminalError = grokTerminalError(result)
		return p
	}
	switch {
	case lineError("grok", st) != nil:
		p.ProtocolError = lineError("grok", st)
	case !p.TerminalSuccess:
		p.ProtocolError = errors.New(`grok result is not an explicit success (subtype "success", is_error false)`)
	case strings.TrimSpace(result.text("result")) == "":
		p.ProtocolError = errors.New("grok result carries no final text")
	}
	if p.ProtocolError != nil {
		return p
	}
	usage, ok := result.obj("modelUsage")
	if !ok && end != nil {
		usage, ok = end.obj("modelUsage")
	}
	if ok {
		model, err := mainModel(usage, func(o rawObject) *int64 {
			return firstCount(o, "outputTokens", "output_tokens", "modelCalls")
		})
		if err != nil {
			p.ProtocolError = fmt.Errorf("grok modelUsage: %w", err)
			return p
		}
		p.ReportedModel = model
	}
	p.FinalText = result.text("result")
	return p
}

func grokUsage(result rawObject) *policy.Usage {
	u, ok := result.obj("usage")
	if !ok {
		return nil
	}
	return nonEmptyUsage(policy.Usage{
		InputTokens:              u.count("input_tokens"),
		CachedInputTokens:        firstCount(u, "cache_read_input_tokens", "cached_input_tokens"),
		CacheCreationInputTokens: u.count("cache_creation_input_tokens"),
		OutputTokens:             u.count("output_tokens"),
		ReasoningTokens:          firstCount(u, "reasoning_tokens", "reasoning_output_tokens"),
		TotalTokens:              u.count("total_tokens"),
	})
}

// grokTerminalError is the typed failure of an errored result.
func grokTerminalError(result rawObject) string {
	if errs := stringItems(result, "errors", 3); len(errs) > 0 {
		return CapText(strings.Join(errs, "; "), FieldCap)
	}
	if s := strings.TrimSpace(result.text("result")); s != "" {
		return CapText(s, FieldCap)
	}
	if e, ok := result.obj("error"); ok && strings.TrimSpace(e.text("message")) != "" {
		return CapText(strings.TrimSpace(e.text("message")), FieldCap)
	}
	return CapText("grok result "+result.text("subtype"), FieldCap)
}

// grokLastResult is the last result event of a capture.
func grokLastResult(c Capture) rawObject {
	var result rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		if e.typ() == "result" {
			result = e
		}
	})
	return result
}

func grokTerminalFields(c Capture) []Field {
	var last rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		if t := e.typ(); t == "result" || t == "error" {
			last = e
		}
	})
	if last == nil {
		return nil
	}
	out := fieldsFrom(last, "type", "subtype", "is_error", "result", "message")
	for i, e := range stringItems(last, "errors", 3) {
		if f, ok := textField(fmt.Sprintf("errors[%d]", i), e); ok {
			out = append(out, f)
		}
	}
	return out
}
