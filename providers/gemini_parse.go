package providers

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseGemini reads the Gemini CLI's headless output (PROVIDER-PROTOCOLS.md
// §4), a Switchyard addition. The spec runs `--output-format stream-json`;
// the `--output-format json` object is accepted too.
//
// stream-json acceptance: init first and once, exactly one result and it
// is last, with status "success" and non-blank concatenated assistant
// message text (the CLI's own response is that concatenation). error
// events are non-fatal warnings. A result with status "error" is the typed
// failure. json acceptance: one object with a non-blank response and no
// error member (an INVALID_STREAM error still writes the response). A
// failed json-mode run writes its error object to stderr, read as the
// typed failure. The reported model is the main key of stats.models (the
// only served-model report; init.model is the configured value), ranked by
// output tokens when several models served the run.
func parseGemini(_ Request, c Capture) Parsed {
	var evs []rawObject
	st := jsonLines(c.Stdout, func(e rawObject) { evs = append(evs, e) })
	p := Parsed{Lines: st.lines, Events: st.events}
	if doc, ok := geminiJSONDocument(c.Stdout, evs); ok {
		return geminiJSONMode(p, doc)
	}
	var initEvent, result rawObject
	inits, results := 0, 0
	var text strings.Builder
	for _, e := range evs {
		switch e.typ() {
		case "init":
			inits++
			initEvent = e
		case "result":
			results++
			result = e
		case "message":
			if e.text("role") == "assistant" {
				text.WriteString(e.text("content"))
			}
		}
	}
	if initEvent != nil {
		p.SessionID = nonBlankID(initEvent.text("session_id"))
	}
	if result == nil {
		p.ProtocolError = lineError("gemini", st)
		if p.ProtocolError == nil {
			p.ProtocolError = errors.New("gemini did not emit a terminal result event")
		}
		if e := geminiStderrError(c); e != nil {
			// The typed failure wins over stream faults.
			p.ProtocolError = nil
			p.TerminalError = geminiErrorText(e)
			p.TerminalError = cmp.Or(p.TerminalError, "gemini reported an error")
		}
		return p
	}
	stats, _ := result.obj("stats")
	p.Usage = nonEmptyUsage(policy.Usage{
		InputTokens:       stats.count("input_tokens"),
		CachedInputTokens: stats.count("cached"),
		OutputTokens:      stats.count("output_tokens"),
		TotalTokens:       stats.count("total_tokens"),
	})
	p.TerminalSuccess = result.text("status") == "success"
	if !p.TerminalSuccess {
		errObj, _ := result.obj("error")
		p.TerminalError = geminiErrorText(errObj)
		p.TerminalError = cmp.Or(p.TerminalError, CapText("gemini result status "+result.text("status"), FieldCap))
		return p
	}
	switch {
	case lineError("gemini", st) != nil:
		p.ProtocolError = lineError("gemini", st)
	case len(evs) == 0 || evs[0].typ() != "init" || inits != 1:
		p.ProtocolError = errors.New("gemini stream does not begin with exactly one init event")
	case results != 1 || evs[len(evs)-1].typ() != "result":
		p.ProtocolError = fmt.Errorf("gemini must end its stream with exactly one result (saw %d)", results)
	case strings.TrimSpace(text.String()) == "":
		p.ProtocolError = errors.New("gemini emitted no assistant text")
	}
	if p.ProtocolError != nil {
		return p
	}
	if models, ok := stats.obj("models"); ok {
		model, err := mainModel(models, func(o rawObject) *int64 {
			if n := o.count("output_tokens"); n != nil {
				return n
			}
			tokens, _ := o.obj("tokens")
			return tokens.count("candidates")
		})
		if err != nil {
			p.ProtocolError = fmt.Errorf("gemini stats.models: %w", err)
			return p
		}
		p.ReportedModel = model
	}
	p.FinalText = text.String()
	return p
}

// geminiJSONDocument recognizes the json output mode: one object without a
// "type", pretty-printed or on one line.
func geminiJSONDocument(stdout []byte, evs []rawObject) (rawObject, bool) {
	if len(evs) == 1 && !evs[0].has("type") {
		return evs[0], true
	}
	docs, ok := documentObjects(stdout)
	if !ok || len(docs) != 1 || docs[0].has("type") {
		return nil, false
	}
	return docs[0], true
}

func geminiJSONMode(p Parsed, doc rawObject) Parsed {
	p.SessionID = nonBlankID(doc.text("session_id"))
	stats, _ := doc.obj("stats")
	models, hasModels := stats.obj("models")
	var u policy.Usage
	for name := range models {
		m, _ := models.obj(name)
		tokens, _ := m.obj("tokens")
		for _, f := range []struct {
			dst **int64
			key string
		}{{&u.InputTokens, "prompt"}, {&u.OutputTokens, "candidates"}, {&u.TotalTokens, "total"},
			{&u.CachedInputTokens, "cached"}, {&u.ReasoningTokens, "thoughts"}} {
			if v := tokens.count(f.key); v != nil {
				if *f.dst == nil {
					*f.dst = new(int64)
				}
				**f.dst += *v
			}
		}
	}
	p.Usage = nonEmptyUsage(u)
	if errObj, ok := doc.obj("error"); ok || (doc.has("error") && !doc.isNull("error")) {
		p.TerminalError = geminiErrorText(errObj)
		p.TerminalError = cmp.Or(p.TerminalError, "gemini reported an error")
		return p
	}
	response, _ := doc.str("response")
	p.TerminalSuccess = strings.TrimSpace(response) != ""
	if !p.TerminalSuccess {
		p.ProtocolError = errors.New("gemini json output carries no response")
		return p
	}
	if hasModels {
		model, err := mainModel(models, func(o rawObject) *int64 {
			tokens, _ := o.obj("tokens")
			return tokens.count("candidates")
		})
		if err != nil {
			p.ProtocolError = fmt.Errorf("gemini stats.models: %w", err)
			return p
		}
		p.ReportedModel = model
	}
	p.FinalText = response
	return p
}

// geminiStderrError is the error object of a json-mode failure written to
// stderr as one JSON object; nil otherwise.
func geminiStderrError(c Capture) rawObject {
	docs, ok := documentObjects(c.Stderr)
	if !ok || len(docs) != 1 {
		return nil
	}
	e, _ := docs[0].obj("error")
	return e
}

// geminiTerminalError is the typed error object of the run's terminal
// frame: the stream result's, the json object's, or the stderr object's.
func geminiTerminalError(c Capture) rawObject {
	var result rawObject
	var evs []rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		evs = append(evs, e)
		if e.typ() == "result" {
			result = e
		}
	})
	if doc, ok := geminiJSONDocument(c.Stdout, evs); ok {
		e, _ := doc.obj("error")
		return e
	}
	if result != nil {
		if result.text("status") == "success" {
			return nil
		}
		e, _ := result.obj("error")
		return e
	}
	return geminiStderrError(c)
}

func geminiErrorText(e rawObject) string {
	kind, message := strings.TrimSpace(e.text("type")), strings.TrimSpace(e.text("message"))
	switch {
	case kind != "" && message != "":
		return CapText(kind+": "+message, FieldCap)
	case message != "":
		return CapText(message, FieldCap)
	}
	return CapText(kind, FieldCap)
}

func geminiTerminalFields(c Capture) []Field {
	e := geminiTerminalError(c)
	if e == nil {
		return nil
	}
	return fieldsFrom(e, "type", "message", "code")
}
