package providers

import (
	"errors"
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// devinATIFVersion is the only export schema the Devin parser accepts.
const devinATIFVersion = "ATIF-v1.7"

// Fixed evidence codes of Devin tool denials; receipts keep the code, never
// the denied arguments.
const (
	devinConfirmationDenied = "devin_tool_confirmation_rejected"
	devinWriteDenied        = "devin_atif_write_permission_denied"
)

// devinRejection is Devin's headless stderr notice that a tool call needed a
// confirmation nobody could give.
var devinRejection = regexp.MustCompile(`(?im)^warning: rejected a tool call that requires confirmation\.`)

// devinExportPath is where the Devin invocation writes its ATIF export
// (--export) and where the parser reads it from Capture.Files.
func devinExportPath(req Request) string { return req.Receipt + ".devin-export/turn.json" }

// parseDevin reads Devin's ATIF-v1.7 conversation export (RUNNER.md §2
// "devin"); --print stdout is plain text and only counted.
//
// Delivery is a last step from source "agent" with a non-empty message and
// no tool calls; that final message is the only text taken, and it wins
// over any earlier refusal. An undelivered export is a protocol error; when
// provider-owned evidence explains it, ToolDenial records a verified
// permission cause under a fixed code only for a final direct write whose
// single observation is Devin's own write-access denial for the requested
// path. The stderr confirmation-rejection notice is kept as an unverified
// denial of unknown cause: it names no call and proves no permission
// denial. No model, session, usage or
// cost is taken (model proof is pinned-argv).
func parseDevin(req Request, c Capture) Parsed {
	lines, events := countCapture(c.Stdout)
	p := Parsed{Lines: lines, Events: events}
	final, last, err := devinExport(req, c)
	if err == nil {
		p.FinalText, p.TerminalSuccess = final, true
		return p
	}
	p.ProtocolError = err
	switch {
	case last != nil && devinFinalWriteDenied(last):
		tool := "write"
		p.ToolDenial = &policy.ToolDenial{Verified: true, Cause: policy.DenialPermission, Tool: &tool, Evidence: devinWriteDenied}
	case devinRejection.Match(c.Stderr):
		// The notice says some tool call needing confirmation was
		// rejected, not which call or why: it is no proof of a
		// permission denial, so it is recorded unverified with an
		// unknown cause and can never enable a continuation.
		p.ToolDenial = &policy.ToolDenial{Verified: false, Cause: policy.DenialUnknown, Evidence: devinConfirmationDenied}
	}
	return p
}

// devinExport returns the delivered final message, or the last step and why
// the export does not deliver one.
func devinExport(req Request, c Capture) (final string, last rawObject, err error) {
	raw, ok := c.Files[devinExportPath(req)]
	if !ok {
		return "", nil, errors.New("devin did not write its conversation export")
	}
	doc, ok := decodeObject(raw)
	if !ok {
		return "", nil, errors.New("devin export is not a JSON object")
	}
	if doc.text("schema_version") != devinATIFVersion {
		return "", nil, errors.New("devin export is not " + devinATIFVersion)
	}
	steps, ok := doc.arr("steps")
	if !ok || len(steps) == 0 {
		return "", nil, errors.New("devin export has no steps")
	}
	last, ok = decodeObject(steps[len(steps)-1])
	if !ok {
		return "", nil, errors.New("devin export's last step is not an object")
	}
	msg, isString := last.str("message")
	calls, callsOK := last.arr("tool_calls")
	switch {
	case last.text("source") != "agent":
		return "", last, errors.New("devin export does not end with an agent step")
	case last.has("tool_calls") && !last.isNull("tool_calls") && (!callsOK || len(calls) != 0):
		return "", last, errors.New("devin export ends with pending tool calls")
	case !isString || strings.TrimSpace(msg) == "":
		return "", last, errors.New("devin export's final agent step has no message")
	}
	return strings.TrimSpace(msg), last, nil
}

// devinFinalWriteDenied recognizes exactly one direct write call whose one
// observation carries the matching call id and Devin's own write-access
// denial for the path the call requested.
func devinFinalWriteDenied(step rawObject) bool {
	calls, ok := step.arr("tool_calls")
	if !ok || len(calls) != 1 || step.text("source") != "agent" {
		return false
	}
	call, ok := decodeObject(calls[0])
	if !ok || call.text("function_name") != "write" || call.text("tool_call_id") == "" {
		return false
	}
	args, _ := call.obj("arguments")
	path := args.text("file_path")
	if path == "" {
		return false
	}
	obs, _ := step.obj("observation")
	results, ok := obs.arr("results")
	if !ok || len(results) != 1 {
		return false
	}
	r, ok := decodeObject(results[0])
	if !ok || r.text("source_call_id") != call.text("tool_call_id") {
		return false
	}
	want := "Write access to '" + path + "' was denied. The user needs to grant write permission for this directory — ask them to approve the write access request or add the directory to the workspace."
	return r.text("content") == want
}

// devinDelivered reports whether the export delivered a final answer: the
// trusted success that vetoes a stderr diagnostic.
func devinDelivered(req Request, c Capture) bool {
	_, _, err := devinExport(req, c)
	return err == nil
}
