package providers

import (
	"bytes"
)

// Stream classification for the stall watchdog: each provider's Classify
// sorts one stdout line of its workload stream into a disposition, as the
// execution-runtime contract's ClassifyRuntimeEvent does. A start event is
// start; output, tool activity and non-terminal usage are progress; the
// provider's terminal result (success, error or cancellation) is terminal
// and is checked first; blank lines, lines that are not the provider's
// JSON and unknown event types are none (they never keep a stalled stream
// alive). Plain-text output (Devin) treats any non-blank line as progress.
// Classifiers never panic and never keep the line.

// classifyTextStream: any non-blank line is progress.
func classifyTextStream(line []byte) Disposition {
	if len(bytes.TrimSpace(line)) == 0 {
		return DispositionNone
	}
	return DispositionProgress
}

// streamEvent decodes one JSON object line; ok is false for anything else.
func streamEvent(line []byte) (rawObject, bool) {
	return decodeObject(line)
}

// classifyClaudeStream reads Claude's stream-json: system/init starts,
// assistant and user (tool result) frames and partial stream events are
// progress, result is terminal. Rate-limit and other system frames are
// metadata (none).
func classifyClaudeStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch e.typ() {
	case "result":
		return DispositionTerminal
	case "system":
		if e.text("subtype") == "init" {
			return DispositionStart
		}
	case "assistant", "user", "stream_event":
		return DispositionProgress
	}
	return DispositionNone
}

// classifyCodexStream reads `codex exec --json`: thread.started starts,
// turn and item events are progress, turn.completed and turn.failed are
// terminal. An "error" event is an interim reconnect notice (the terminal
// is the turn.failed after it): progress, since the CLI is working.
func classifyCodexStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch t := e.typ(); t {
	case "turn.completed", "turn.failed":
		return DispositionTerminal
	case "thread.started":
		return DispositionStart
	case "turn.started", "item.started", "item.updated", "item.completed":
		return DispositionProgress
	case "error":
		if e.text("message") != "" {
			return DispositionProgress
		}
	}
	return DispositionNone
}

// classifyGrokStream reads streaming-messages-json: system/init starts,
// assistant and user frames are progress, result and end are terminal.
// An error event is followed by the result: progress.
func classifyGrokStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch e.typ() {
	case "result", "end":
		return DispositionTerminal
	case "system":
		if e.text("subtype") == "init" {
			return DispositionStart
		}
	case "assistant", "user":
		return DispositionProgress
	case "error":
		if e.text("message") != "" {
			return DispositionProgress
		}
	}
	return DispositionNone
}

// classifyCursorStream reads cursor-agent's json output: the single result
// envelope is terminal; any other typed event is progress. (The json
// format prints nothing before the result, so a Cursor workload shows no
// progress until it ends.)
func classifyCursorStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch t := e.typ(); {
	case t == "result":
		return DispositionTerminal
	case t == "system" && e.text("subtype") == "init":
		return DispositionStart
	case t != "":
		return DispositionProgress
	}
	return DispositionNone
}

// classifyAntigravityStream reads events keyed by "event": init starts,
// step_update is progress, result is terminal; an error event precedes
// the result and is progress.
func classifyAntigravityStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch e.text("event") {
	case "result":
		return DispositionTerminal
	case "init":
		return DispositionStart
	case "step_update", "error":
		return DispositionProgress
	}
	return DispositionNone
}

// classifyOpenCodeStream reads V1 JSON events: a typed error ends the run
// (terminal), as does a step_finish with reason "stop"; step_start,
// text, reasoning, tool_use and a tool-calls step_finish (non-terminal
// usage) are progress.
func classifyOpenCodeStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch e.typ() {
	case "error":
		return DispositionTerminal
	case "step_finish":
		part, _ := e.obj("part")
		if part.text("reason") == "stop" {
			return DispositionTerminal
		}
		return DispositionProgress
	case "step_start", "text", "reasoning", "tool_use":
		return DispositionProgress
	}
	return DispositionNone
}

// classifyGeminiStream reads stream-json: init starts, assistant messages
// with content and tool events are progress, result is terminal. The
// user echo is none.
func classifyGeminiStream(line []byte) Disposition {
	e, ok := streamEvent(line)
	if !ok {
		return DispositionNone
	}
	switch e.typ() {
	case "result":
		return DispositionTerminal
	case "init":
		return DispositionStart
	case "message":
		if e.text("role") == "assistant" && e.text("content") != "" {
			return DispositionProgress
		}
	case "tool_use", "tool_result":
		return DispositionProgress
	case "error":
		if e.text("message") != "" {
			return DispositionProgress
		}
	}
	return DispositionNone
}

// HasSignInProbe reports whether s's preflight probes for req prove the
// sign-in state, so the stall watchdog's health probe may run them. Without
// one the health is unknown and nothing runs.
func HasSignInProbe(s *Spec, req Request) bool {
	if s == nil || !s.SignInProbe || s.Preflight == nil || len(s.Preflight(req)) == 0 {
		return false
	}
	return s.SignInDeferred == nil || !s.SignInDeferred(req)
}
