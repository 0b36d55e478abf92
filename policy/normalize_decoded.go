package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// ReceiptEncodeError is NormalizeReceipt's refusal of a receipt that
// encoding/json cannot write (a NaN or infinite costUsd), so it has no
// bytes Normalize could read. A receipt decoded from JSON never has one.
type ReceiptEncodeError struct{ Err error }

func (e *ReceiptEncodeError) Error() string { return "encode receipt: " + e.Err.Error() }

func (e *ReceiptEncodeError) Unwrap() error { return e.Err }

// NormalizeReceipt is Normalize for a receipt that is already decoded, such
// as one a finish event records: in.Receipt is not read, r stands for the
// receipt's bytes. It returns exactly what Normalize returns for in with
// Receipt set to json.Marshal(r), the same Event or the same error, without
// encoding r and strictly decoding it again:
//
//   - every rule DecodeReceipt applies to those bytes is checked on r
//     directly, in DecodeReceipt's order and with its messages (a member
//     encoding/json omits, such as an empty apiSpend or a nil
//     canonicalPaths, counts as absent; a nil slice as null);
//   - a receipt whose encoding could differ from r or be refused (a string
//     that is not valid UTF-8, which encoding/json rewrites; a size that
//     could reach MaxReceiptBytes) takes the bytes path itself, so the
//     result is Normalize's by construction;
//   - a costUsd encoding/json cannot write is a *ReceiptEncodeError.
//
// The returned Event shares no memory with r.
func NormalizeReceipt(in NormalizeInput, r *Receipt) (Event, error) {
	if err := checkNormalizeArgs(in); err != nil {
		return Event{}, err
	}
	if r != nil && !encodesExactly(r) {
		data, err := json.Marshal(r)
		if err != nil {
			return Event{}, &ReceiptEncodeError{Err: err}
		}
		in.Receipt = data
		return Normalize(in)
	}
	if err := checkDecodedReceipt(r); err != nil {
		return Event{}, err
	}
	ev, err := normalizeDecoded(in, r)
	if err == nil && ev.ProcessStarted != nil {
		started := *ev.ProcessStarted
		ev.ProcessStarted = &started
	}
	return ev, err
}

// receiptFixedBytes bounds what a receipt's encoding holds besides its
// strings: every key, number, literal and punctuation mark with every
// optional member present (TestReceiptFixedBytesBound measures it).
const receiptFixedBytes = 4096

// encodesExactly reports whether json.Marshal(r) certainly succeeds, stays
// within MaxReceiptBytes and decodes back to r's values: every string is
// valid UTF-8 (encoding/json rewrites invalid bytes as U+FFFD, which
// decodes to another string), costUsd is finite, and the encoding's upper
// bound (six bytes a string byte, as \u00XX, plus quotes and a comma, plus
// receiptFixedBytes) is within the limit.
func encodesExactly(r *Receipt) bool {
	if r.CostUSD != nil && (math.IsNaN(*r.CostUSD) || math.IsInf(*r.CostUSD, 0)) {
		return false
	}
	size := receiptFixedBytes
	ok := true
	str := func(s string) {
		size += 6*len(s) + 3
		if ok && !utf8.ValidString(s) {
			ok = false
		}
	}
	strp := func(s *string) {
		if s != nil {
			str(*s)
		}
	}
	strs := func(l []string) {
		for _, s := range l {
			str(s)
		}
	}
	for _, s := range []string{string(r.Status), string(r.Parent), string(r.Provider), r.Model,
		string(r.Effort), string(r.Mode), r.Cwd, r.PromptPath, r.OutputPath, r.ReceiptPath,
		r.ExecutionID, r.StartedAt, r.CompletedAt, r.Preflight.Evidence, string(r.Preflight.Status),
		string(r.APISpend), string(r.Contract)} {
		str(s)
	}
	if c := r.CanonicalPaths; c != nil {
		str(c.Cwd)
		str(c.Output)
		str(c.Receipt)
	}
	strp(r.Executable)
	strs(r.Preflight.Argv)
	strs(r.Argv)
	strp(r.Signal)
	strp(r.ReportedModel)
	if r.ModelEvidence != nil {
		str(string(*r.ModelEvidence))
	}
	strp(r.SessionID)
	if e := r.Error; e != nil {
		str(e.Message)
		str(e.Evidence)
	}
	if r.FailurePhase != nil {
		str(string(*r.FailurePhase))
	}
	if t := r.ToolDenial; t != nil {
		str(string(t.Cause))
		strp(t.Tool)
		strp(t.RequestedAction)
		str(t.Evidence)
	}
	if c := r.Containment; c != nil {
		str(c.Class)
		str(c.By)
		strs(c.Denied)
	}
	if h := r.Handoff; h != nil {
		str(h.Task)
		str(h.Checkpoint)
		str(string(h.Operation))
		strs(h.Files)
		strs(h.Checks)
		str(h.Summary)
	}
	return ok && size <= MaxReceiptBytes
}

// decodedPresent reports whether json.Marshal(r) writes the top-level key
// k: only the omitempty members can be missing.
func decodedPresent(r *Receipt, k string) bool {
	switch k {
	case "receiptPath":
		return r.ReceiptPath != ""
	case "executionId":
		return r.ExecutionID != ""
	case "canonicalPaths":
		return r.CanonicalPaths != nil
	case "processStarted":
		return r.ProcessStarted != nil
	case "apiSpend":
		return r.APISpend != ""
	case "contract":
		return r.Contract != ""
	case "toolDenial":
		return r.ToolDenial != nil
	case "handoff":
		return r.Handoff != nil
	case "handoffMalformed":
		return r.HandoffMalformed
	case "terminalSuccess":
		return r.TerminalSuccess != nil
	case "containment":
		return r.Containment != nil
	}
	return true
}

// fieldError is fieldDecoder.fail's message for a member path such as
// "preflight.argv".
func fieldError(path, format string, args ...any) error {
	return Policyf("receipt %s %s", path, fmt.Sprintf(format, args...))
}

// checkDecodedReceipt applies DecodeReceipt's rules to json.Marshal(r)
// without encoding it, and returns the first error DecodeReceipt would. The
// rules about JSON itself (syntax, unknown and duplicate keys, a value's
// JSON type where the Go type already fixes it) cannot fail on an encoded
// Receipt; what remains is the schema version, the members a schema needs
// or forbids, null where an array is required, and each closed vocabulary
// and range.
func checkDecodedReceipt(r *Receipt) error {
	if r == nil {
		return Policyf("receipt must be a JSON object")
	}
	if r.SchemaVersion != 1 && r.SchemaVersion != 2 {
		return Policyf("receipt schemaVersion must be 1 or 2, found %d", r.SchemaVersion)
	}
	v1 := r.SchemaVersion == 1
	for _, k := range receiptKeys {
		ok := decodedPresent(r, k)
		switch {
		case ok && v1 && inList(schema2OnlyKeys, k):
			return Policyf("receipt %s is a schema 2 field; a schema 1 receipt must not carry it", k)
		case !ok && !inList(optionalKeys, k) && !(v1 && (inList(schema2OnlyKeys, k) || inList(schema1OptionalKeys, k))):
			return Policyf("receipt %s is required on a schema %d receipt", k, r.SchemaVersion)
		}
	}
	switch {
	case !r.Status.Valid():
		return fieldError("status", "must be one of %s", quotedList(ReceiptStatuses))
	case v1 && r.Status == StatusNeedsParentOperation:
		return Policyf("receipt status needs-parent-operation requires schemaVersion 2")
	case r.Parent != ParentClaude && r.Parent != ParentCodex:
		return fieldError("parent", `must be "claude" or "codex"`)
	case !validReceiptProvider(r.Provider):
		return fieldError("provider", "must be one of %s", quotedList(append(Providers[:len(Providers):len(Providers)], Gemini)))
	case strings.TrimSpace(r.Model) == "":
		return fieldError("model", "must be a non-empty string")
	case !r.Effort.Valid():
		return fieldError("effort", "must be one of %s", quotedList(Efforts))
	case r.Mode != ReadOnly && r.Mode != IsolatedWrite:
		return fieldError("mode", `must be "read-only" or "isolated-write"`)
	// Schema 2's receiptPath, executionId and canonicalPaths are present,
	// hence non-empty and an object of three strings.
	case r.ElapsedMs < 0:
		return fieldError("elapsedMs", "must be a non-negative integer")
	case r.Preflight.Argv == nil:
		return fieldError("preflight.argv", "must be an array of strings")
	case !r.Preflight.Status.Valid():
		return fieldError("preflight.status", "must be one of %s", quotedList(PreflightStatuses))
	case r.Argv == nil:
		return fieldError("argv", "must be an array of strings")
	case r.Signal != nil && strings.TrimSpace(*r.Signal) == "":
		return fieldError("signal", "must be null or a non-empty string")
	case r.ModelEvidence != nil && !r.ModelEvidence.Valid():
		return fieldError("modelEvidence", `must be "provider-report", "pinned-argv" or null`)
	}
	if u := r.Usage; u != nil {
		for _, c := range []struct {
			key string
			n   *int64
		}{
			{"inputTokens", u.InputTokens}, {"cachedInputTokens", u.CachedInputTokens},
			{"cacheCreationInputTokens", u.CacheCreationInputTokens}, {"outputTokens", u.OutputTokens},
			{"reasoningTokens", u.ReasoningTokens}, {"totalTokens", u.TotalTokens},
		} {
			if c.n != nil && *c.n < 0 {
				return fieldError("usage."+c.key, "must be a non-negative integer")
			}
		}
	}
	switch {
	case r.CostUSD != nil && !(*r.CostUSD >= 0):
		return fieldError("costUsd", "must be null or a non-negative number")
	case r.FailurePhase != nil && !r.FailurePhase.Valid():
		return fieldError("failurePhase", `must be "preflight", "invocation", "postprocess" or null`)
	case r.APISpend != "" && r.APISpend != APISpendDeny && r.APISpend != APISpendApproved && r.APISpend != APISpendLegacy:
		return fieldError("apiSpend", `must be "deny", "approved" or "legacy"`)
	case r.Contract != "" && r.Contract != ContractLegacy && r.Contract != ContractStrict:
		return fieldError("contract", `must be "legacy" or "strict"`)
	case r.TimeoutMs != nil && *r.TimeoutMs <= 0:
		return fieldError("timeoutMs", "must be a positive number or null")
	}
	if t := r.ToolDenial; t != nil {
		switch {
		case t.Cause != "" && t.Cause != DenialPermission && t.Cause != DenialUnknown:
			return fieldError("toolDenial.cause", `must be "permission" or "unknown"`)
		case t.Tool != nil && strings.TrimSpace(*t.Tool) == "":
			return fieldError("toolDenial.tool", "must be null or a non-empty string")
		case t.RequestedAction != nil && strings.TrimSpace(*t.RequestedAction) == "":
			return fieldError("toolDenial.requestedAction", "must be null or a non-empty string")
		}
	}
	if c := r.Containment; c != nil && !validContainmentClass(c.Class) {
		return fieldError("containment.class", `must be "READ_ONLY_NO_NETWORK", "WORKSPACE_WRITE_NO_NETWORK" or "UNVERIFIED"`)
	}
	if h := r.Handoff; h != nil {
		switch {
		case strings.TrimSpace(h.Task) == "":
			return fieldError("handoff.task", "must be a non-empty string")
		case strings.TrimSpace(h.Checkpoint) == "":
			return fieldError("handoff.checkpoint", "must be a non-empty string")
		case h.Operation != OpCommitCheckpoint && h.Operation != OpRunChecks:
			return fieldError("handoff.operation", `must be "commit-checkpoint" or "run-checks"`)
		case h.Files == nil:
			return fieldError("handoff.files", "must be an array of strings")
		case h.Checks == nil:
			return fieldError("handoff.checks", "must be an array of strings")
		}
	}
	return nil
}
