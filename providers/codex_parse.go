package providers

import (
	"cmp"
	"errors"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseCodex reads `codex exec --json` (RUNNER.md §2 "codex",
// PROVIDER-PROTOCOLS.md §2).
//
// The terminal outcome is the last turn.completed, turn.failed or error
// event: interim error events (the reconnect notices) are superseded by a
// later turn.completed, and item.completed items of type error are
// non-fatal notices. Acceptance additionally needs valid JSON lines,
// consistent thread and turn framing (framed turns and unframed item
// activity never mix, no turn starts inside an open one), a completed final
// turn and a non-empty final agent message of that turn. A failed terminal
// outcome is the typed failure and wins over stream faults. Codex reports no
// model and no cost; usage comes from the final turn.completed.
func parseCodex(_ Request, c Capture) Parsed {
	var (
		a     codexAssessment
		fault error
	)
	fail := func(err error) {
		if fault == nil {
			fault = err
		}
	}
	st := jsonLines(c.Stdout, func(e rawObject) { a.event(e, fail) })
	p := Parsed{Lines: st.lines, Events: st.events, SessionID: nonBlankID(a.thread), Usage: a.usage}
	if a.terminal != nil {
		p.TerminalSuccess = a.terminal.typ() == "turn.completed"
		if !p.TerminalSuccess {
			p.TerminalError = codexMessage(a.terminal)
			p.TerminalError = cmp.Or(p.TerminalError, "codex reported a failed turn")
			return p // the typed failure wins over stream faults
		}
	}
	switch {
	case lineError("codex", st) != nil:
		p.ProtocolError = lineError("codex", st)
	case fault != nil:
		p.ProtocolError = fault
	case a.open:
		p.ProtocolError = errors.New("codex final turn did not complete")
	case !a.completed:
		p.ProtocolError = errors.New("codex did not complete a turn")
	case strings.TrimSpace(a.final) == "":
		p.ProtocolError = errors.New("codex final turn carries no agent message")
	}
	if p.ProtocolError == nil && p.TerminalSuccess {
		p.FinalText = a.final
	}
	return p
}

// codexAssessment folds the event stream.
type codexAssessment struct {
	thread    string
	framed    bool // a turn.started was seen
	implicit  bool // item or turn activity arrived without turn.started
	open      bool // a turn is in progress
	turnText  string
	final     string // the agent message of the last completed turn
	completed bool   // the last turn completed
	usage     *policy.Usage
	terminal  rawObject // last turn.completed, turn.failed or error event
}

func (a *codexAssessment) event(e rawObject, fail func(error)) {
	switch t := e.typ(); {
	case t == "thread.started":
		if id := e.text("thread_id"); id != "" {
			if a.thread != "" && a.thread != id {
				fail(errors.New("codex reported conflicting thread ids"))
				return
			}
			a.thread = id
		}
	case t == "turn.started":
		switch {
		case a.open:
			fail(errors.New("codex started a turn inside an unfinished turn"))
		case a.implicit:
			fail(errors.New("codex mixed framed and unframed turn activity"))
		default:
			a.framed, a.open, a.turnText, a.completed, a.final = true, true, "", false, ""
		}
	case t == "turn.completed" || t == "turn.failed":
		a.terminal = e
		if a.framed && !a.open {
			fail(errors.New("codex emitted a turn event outside an open turn"))
			return
		}
		if !a.open {
			a.implicit = true
		}
		a.completed = t == "turn.completed"
		a.final = ""
		if a.completed {
			a.final = a.turnText
			if u, ok := e.obj("usage"); ok {
				a.usage = nonEmptyUsage(policy.Usage{
					InputTokens:              u.count("input_tokens"),
					CachedInputTokens:        u.count("cached_input_tokens"),
					CacheCreationInputTokens: u.count("cache_write_input_tokens"),
					OutputTokens:             u.count("output_tokens"),
					ReasoningTokens:          u.count("reasoning_output_tokens"),
				})
			}
		}
		a.open, a.turnText = false, ""
	case t == "error":
		a.terminal = e
	case strings.HasPrefix(t, "item."):
		item, _ := e.obj("item")
		kind := codexItemType(item)
		if t == "item.completed" && kind == "error" {
			return // a non-fatal notice (config warnings, model reroutes)
		}
		if a.framed && !a.open {
			fail(errors.New("codex emitted an item event outside an open turn"))
			return
		}
		if !a.open {
			a.implicit, a.open, a.turnText = true, true, ""
		}
		if t == "item.completed" && (kind == "agent_message" || kind == "assistant_message") {
			a.turnText = item.text("text")
		}
	}
}

// codexItemType accepts both item.type and the older item.item_type.
func codexItemType(item rawObject) string {
	if t := item.text("type"); t != "" {
		return t
	}
	return item.text("item_type")
}

// codexMessage is the error text of a terminal turn.failed or error event.
func codexMessage(e rawObject) string {
	if e.typ() == "turn.failed" {
		errObj, _ := e.obj("error")
		return CapText(strings.TrimSpace(errObj.text("message")), FieldCap)
	}
	return CapText(strings.TrimSpace(e.text("message")), FieldCap)
}

// codexTerminal is the final candidate envelope: the last turn.completed,
// turn.failed or error event, wherever parsing stopped accepting.
func codexTerminal(c Capture) rawObject {
	var terminal rawObject
	jsonLines(c.Stdout, func(e rawObject) {
		switch e.typ() {
		case "turn.completed", "turn.failed", "error":
			terminal = e
		}
	})
	return terminal
}

// codexFullMessage is the uncapped error text of a terminal event, for
// the classifier's prefix match.
func codexFullMessage(e rawObject) string {
	if e.typ() == "turn.failed" {
		errObj, _ := e.obj("error")
		return errObj.text("message")
	}
	if e.typ() == "error" {
		return e.text("message")
	}
	return ""
}

func codexTerminalFields(c Capture) []Field {
	e := codexTerminal(c)
	if e == nil {
		return nil
	}
	out := []Field{{Name: "type", Value: e.typ()}}
	if f, ok := textField("message", codexMessage(e)); ok {
		out = append(out, f)
	}
	return out
}
