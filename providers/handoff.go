package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// handoffFence opens the reserved block a worker ends its final response
// with to request a parent-only operation (provider-dispatch.md "Worker
// handoffs and parent operations").
const handoffFence = "```pstack-handoff"

// Bounds of an accepted handoff request.
const (
	handoffMaxPayload = 64 << 10
	handoffMaxID      = 200  // task, checkpoint, each file and check
	handoffMaxSummary = 1000 // summary
	handoffMaxFiles   = 200
	handoffMaxChecks  = 50
)

// handoffKeys are the members of the block's JSON object, all required.
var handoffKeys = []string{"task", "checkpoint", "operation", "files", "checks", "summary"}

// ParseHandoff reads the pstack-handoff block of a final response. present
// is false when the response carries no reserved marker (an ordinary
// response). Otherwise exactly one block must end the response: the fence
// "```pstack-handoff" starting a line, one strict JSON object with exactly
// task, checkpoint, operation (commit-checkpoint or run-checks), files
// (repository-relative paths), checks and summary, then a closing fence
// line and nothing but whitespace. A repeated, truncated, trailing or
// malformed block returns present with an error: it fails closed and never
// widens what the parent does. The handoff is an untrusted request.
func ParseHandoff(final string) (h *policy.ReceiptHandoff, present bool, err error) {
	markers := handoffMarkers(final)
	switch {
	case len(markers) == 0:
		return nil, false, nil
	case len(markers) > 1:
		return nil, true, fmt.Errorf("final response carries %d pstack-handoff markers; exactly one block is allowed", len(markers))
	}
	at := markers[0]
	if at > 0 && final[at-1] != '\n' {
		return nil, true, errors.New("the pstack-handoff fence does not start a line")
	}
	rest := final[at+len(handoffFence):]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return nil, true, errors.New("the pstack-handoff block is truncated after its fence")
	}
	if strings.TrimSpace(rest[:nl]) != "" {
		return nil, true, errors.New("the pstack-handoff fence carries extra text")
	}
	body := rest[nl+1:]
	payload, after, closed := cutClosingFence(body)
	if !closed {
		return nil, true, errors.New("the pstack-handoff block is truncated: no closing fence")
	}
	if strings.TrimSpace(after) != "" {
		return nil, true, errors.New("the pstack-handoff block does not end the final response")
	}
	if len(payload) > handoffMaxPayload {
		return nil, true, fmt.Errorf("the pstack-handoff payload exceeds %d bytes", handoffMaxPayload)
	}
	h, err = decodeHandoff([]byte(payload))
	if err != nil {
		return nil, true, fmt.Errorf("the pstack-handoff payload is invalid: %w", err)
	}
	return h, true, nil
}

// handoffMarkers returns the offsets of every reserved marker: the fence
// text not continued by a word character, wherever it appears.
func handoffMarkers(s string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], handoffFence)
		if j < 0 {
			return out
		}
		at := i + j
		end := at + len(handoffFence)
		if end == len(s) || !isWordByte(s[end]) {
			out = append(out, at)
		}
		i = end
	}
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// cutClosingFence splits body at its first line that is only "```".
func cutClosingFence(body string) (payload, after string, ok bool) {
	for off := 0; off <= len(body); {
		end := strings.IndexByte(body[off:], '\n')
		line := body[off:]
		next := len(body) + 1
		if end >= 0 {
			line, next = body[off:off+end], off+end+1
		}
		if strings.TrimSpace(line) == "```" {
			if next > len(body) {
				return body[:off], "", true
			}
			return body[:off], body[next:], true
		}
		if end < 0 {
			break
		}
		off = next
	}
	return "", "", false
}

// decodeHandoff strictly decodes and validates the block's JSON object.
func decodeHandoff(payload []byte) (*policy.ReceiptHandoff, error) {
	members, err := strictMembers(payload)
	if err != nil {
		return nil, err
	}
	for _, k := range handoffKeys {
		if _, ok := members[k]; !ok {
			return nil, fmt.Errorf("missing %q", k)
		}
	}
	var h policy.ReceiptHandoff
	if h.Task, err = boundedMember(members, "task", handoffMaxID); err != nil {
		return nil, err
	}
	if h.Checkpoint, err = boundedMember(members, "checkpoint", handoffMaxID); err != nil {
		return nil, err
	}
	if h.Summary, err = boundedMember(members, "summary", handoffMaxSummary); err != nil {
		return nil, err
	}
	var op string
	if json.Unmarshal(members["operation"], &op) != nil {
		return nil, errors.New(`"operation" must be a string`)
	}
	h.Operation = policy.OperationKind(op)
	if h.Operation != policy.OpCommitCheckpoint && h.Operation != policy.OpRunChecks {
		return nil, fmt.Errorf(`"operation" must be %q or %q`, policy.OpCommitCheckpoint, policy.OpRunChecks)
	}
	if h.Files, err = stringList(members, "files", handoffMaxFiles); err != nil {
		return nil, err
	}
	for _, f := range h.Files {
		if !relativeRepoPath(f) {
			return nil, fmt.Errorf(`"files" entry %q is not a repository-relative path`, CapText(f, 100))
		}
	}
	if h.Checks, err = stringList(members, "checks", handoffMaxChecks); err != nil {
		return nil, err
	}
	for _, c := range h.Checks {
		if strings.TrimSpace(c) == "" || runeLen(c) > handoffMaxID || strings.ContainsAny(c, "\x00\r\n") {
			return nil, errors.New(`"checks" entries must be non-blank single-line identifiers of at most 200 characters`)
		}
	}
	return &h, nil
}

// strictMembers decodes one JSON object: only handoffKeys, no duplicates,
// no trailing data.
func strictMembers(payload []byte) (map[string]json.RawMessage, error) {
	members, err := policy.ObjectMembers(payload, handoffKeys)
	var je *policy.JSONError
	if !errors.As(err, &je) {
		return members, err
	}
	switch je.Fault {
	case policy.JSONNotObject:
		return nil, errors.New("not a JSON object")
	case policy.JSONUnknownKey:
		return nil, fmt.Errorf("unknown member %q", CapText(je.Key, 100))
	case policy.JSONDuplicateKey:
		return nil, fmt.Errorf("duplicate member %q", je.Key)
	case policy.JSONTrailingData:
		return nil, errors.New("trailing data after the JSON object")
	}
	return nil, errors.New("not JSON")
}

func boundedMember(members map[string]json.RawMessage, key string, max int) (string, error) {
	raw := bytes.TrimSpace(members[key])
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%q must be a string", key)
	}
	if strings.TrimSpace(s) == "" || runeLen(s) > max {
		return "", fmt.Errorf("%q must be non-blank and at most %d characters", key, max)
	}
	return s, nil
}

func stringList(members map[string]json.RawMessage, key string, max int) ([]string, error) {
	raw := bytes.TrimSpace(members[key])
	var out []string
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("%q must be an array of strings", key)
	}
	if len(out) > max {
		return nil, fmt.Errorf("%q has more than %d entries", key, max)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// relativeRepoPath accepts a clean repository-relative path: no absolute
// or drive paths, no option-like start, no backslash or control line
// breaks, no empty, ".", ".." or ".git" segment.
func relativeRepoPath(p string) bool {
	if strings.TrimSpace(p) == "" || runeLen(p) > handoffMaxID {
		return false
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") || strings.ContainsAny(p, "\\\x00\r\n") {
		return false
	}
	if len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || seg == ".git" {
			return false
		}
	}
	return true
}
