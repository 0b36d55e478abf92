package quota

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// This file holds the pure parsers of the Codex quota source: the replies
// of `codex app-server` to account/read and account/rateLimits/read
// (QUOTA-PROTOCOLS.md §1). One rate-limits result gives both the capacity
// snapshot and the execution eligibility (seeds/execution-eligibility.md).
// Vendor keys the parser does not know are ignored (the protocol grows
// additively); a known key of the wrong type is either unreadable evidence
// (credits, ordinary usage, spend control: the *_unknown reasons) or a
// malformed payload (windows, the individual limit: unparseable). Nothing
// parsed from a payload but closed codes, percentages, window lengths and
// reset times reaches an output; errors name the field and the code only.

// JSON-RPC error codes of the app-server.
const (
	codexInvalidRequest = -32600
	codexInternalError  = -32603
	codexOverloaded     = -32001
)

// The app-server's -32600 texts of account/rateLimits/read (unchanged
// v0.93 → v0.145), matched as prefixes.
const (
	codexLoggedOutText = "codex account authentication required"
	codexNoPlanText    = "chatgpt authentication required"
)

// Window lengths the TUI labels by name.
const (
	codexFiveHourMins = 300
	codexWeekMins     = 10080
)

// Plausibility bounds: a value outside is a malformed payload.
const (
	codexMaxWindowMins = 366 * 24 * 60 // a year
	codexMaxUnixSecond = 253402300799  // 9999-12-31T23:59:59Z
)

// codexRPCError is the error member of a reply. Its message is matched
// against the known texts and never copied anywhere.
type codexRPCError struct {
	Code    int64
	Message string
}

// codexMessage is one decoded line of the app-server's stdout: a response
// (HasID, with Result or Err), a notification (Method, no id) or a request
// of the server to the client (Method and an id).
type codexMessage struct {
	HasID  bool
	ID     int64 // only integer ids: the client sends integers
	IDText bool  // the id was a string (never one of the client's)
	Method string
	Result json.RawMessage
	Err    *codexRPCError
}

// decodeCodexMessage decodes one line. The "jsonrpc" member is optional
// (the app-server omits it); a line that is not a JSON object, or a
// response with both or neither of result and error, is an error naming
// what was wrong, never quoting the line.
func decodeCodexMessage(line []byte) (codexMessage, error) {
	var m codexMessage
	obj, ok := codexObject(line)
	if !ok {
		return m, fmt.Errorf("app-server message is not a JSON object")
	}
	if raw, ok := obj["method"]; ok {
		if err := json.Unmarshal(raw, &m.Method); err != nil || m.Method == "" {
			return m, fmt.Errorf("app-server message: field method is not a non-empty string")
		}
	}
	if raw, ok := obj["id"]; ok && !codexIsNull(raw) {
		m.HasID = true
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			m.IDText = true
		} else if id, ok := codexInt(raw); ok {
			m.ID = id
		} else {
			return m, fmt.Errorf("app-server message: field id is neither an integer nor a string")
		}
	}
	if m.Method != "" {
		return m, nil // a notification or a server request
	}
	if !m.HasID {
		return m, fmt.Errorf("app-server message has neither method nor id")
	}
	result, hasResult := obj["result"]
	rawErr, hasErr := obj["error"]
	switch {
	case hasResult && hasErr:
		return m, fmt.Errorf("app-server response %d has both result and error", m.ID)
	case hasResult:
		m.Result = result
	case hasErr:
		e, ok := codexObject(rawErr)
		if !ok {
			return m, fmt.Errorf("app-server response %d: field error is not an object", m.ID)
		}
		code, ok := codexInt(e["code"])
		if !ok {
			return m, fmt.Errorf("app-server response %d: field error.code is not an integer", m.ID)
		}
		m.Err = &codexRPCError{Code: code}
		if raw, ok := e["message"]; ok {
			if err := json.Unmarshal(raw, &m.Err.Message); err != nil {
				return m, fmt.Errorf("app-server response %d: field error.message is not a string", m.ID)
			}
		}
	default:
		return m, fmt.Errorf("app-server response %d has neither result nor error", m.ID)
	}
	return m, nil
}

// CodexAccount is what account/read says about the login, without any of
// its account data (the e-mail is never read).
type CodexAccount struct {
	SignedIn bool
	// Type is the account type ("chatgpt", "apiKey", "amazonBedrock", ...)
	// when signed in; a closed enum upstream, kept only if it is one of
	// those known names.
	Type string
}

// codexAccountTypes are the account types QUOTA-PROTOCOLS §1 lists.
var codexAccountTypes = []string{"chatgpt", "apiKey", "amazonBedrock"}

// ParseCodexAccount reads an account/read result: {"account": null |
// {"type": ...}, "requiresOpenaiAuth": bool}.
func ParseCodexAccount(result []byte) (CodexAccount, error) {
	obj, ok := codexObject(result)
	if !ok {
		return CodexAccount{}, fmt.Errorf("account/read result is not a JSON object")
	}
	raw, ok := obj["account"]
	if !ok {
		return CodexAccount{}, fmt.Errorf("account/read result: field account is missing")
	}
	if codexIsNull(raw) {
		return CodexAccount{SignedIn: false}, nil
	}
	acct, ok := codexObject(raw)
	if !ok {
		return CodexAccount{}, fmt.Errorf("account/read result: field account is neither an object nor null")
	}
	var typ string
	if err := json.Unmarshal(acct["type"], &typ); err != nil || typ == "" {
		return CodexAccount{}, fmt.Errorf("account/read result: field account.type is not a non-empty string")
	}
	out := CodexAccount{SignedIn: true}
	if slices.Contains(codexAccountTypes, typ) {
		out.Type = typ
	}
	return out, nil
}

// ParseCodexRateLimits reads an account/rateLimits/read result into the
// capacity snapshot (windows of rateLimits.primary and .secondary,
// labelled by length) and the execution eligibility (the seed's criteria
// 1–3 and 5). A result that is not the documented shape is an unknown
// snapshot (unparseable) with unknown eligibility (collector_failed).
func ParseCodexRateLimits(result []byte, observedAt time.Time) (policy.CapacitySnapshot, policy.ExecutionEligibility) {
	top, ok := codexObject(result)
	if !ok {
		return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
	}
	rl, ok := codexObject(top["rateLimits"])
	if !ok {
		return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
	}
	reasons := map[policy.EligibilityReason]bool{}

	var windows []policy.CapacityWindow
	for _, key := range []string{"primary", "secondary"} {
		raw, present := rl[key]
		if !present || codexIsNull(raw) {
			continue
		}
		w, ok := codexWindow(key, raw)
		if !ok {
			return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
		}
		if w.UsedPercent != nil && *w.UsedPercent >= 100 {
			reasons[policy.EligibilityReasonWindowExhausted] = true
		}
		windows = append(windows, w)
	}

	// Criterion 1: purchased credits present.
	if credits, ok := codexObject(rl["credits"]); !ok {
		reasons[policy.EligibilityReasonCreditsUnknown] = true
	} else if has, ok := codexBool(credits["hasCredits"]); !ok {
		reasons[policy.EligibilityReasonCreditsUnknown] = true
	} else if has {
		reasons[policy.EligibilityReasonCreditsPresent] = true
	}
	// Criterion 2: ordinary usage must be explicitly allowed; criterion 3:
	// false is a blocker. Read generation-aware (codexOrdinaryUsage).
	if r := codexOrdinaryUsage(top); r != "" {
		reasons[r] = true
	}
	if reached, ok := codexBool(rl["spendControlReached"]); !ok {
		reasons[policy.EligibilityReasonSpendControlUnknown] = true
	} else if reached {
		reasons[policy.EligibilityReasonSpendControlReached] = true
	}
	// Criterion 3: any reached type, an exhausted individual limit, any
	// upsell. Their values are opaque: presence is the evidence.
	if raw, ok := rl["rateLimitReachedType"]; ok && !codexIsNull(raw) {
		reasons[policy.EligibilityReasonRateLimitReached] = true
	}
	if raw, ok := rl["individualLimit"]; ok && !codexIsNull(raw) {
		limit, ok := codexObject(raw)
		if !ok {
			return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
		}
		remaining, ok := codexNumber(limit["remainingPercent"])
		if !ok {
			return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
		}
		if remaining <= 0 {
			reasons[policy.EligibilityReasonIndividualLimitExhausted] = true
		}
	}
	if raw, ok := top["rateLimitUpsell"]; ok && !codexIsNull(raw) {
		reasons[policy.EligibilityReasonUpsellPresent] = true
	}

	signedIn := true // the method answers only a ChatGPT login
	snap := policy.CapacitySnapshot{
		SchemaVersion: policy.CapacitySchemaVersion,
		Provider:      policy.Codex,
		Source:        policy.QuotaLiveRPC,
		State:         policy.CapacityMeasured,
		SignedIn:      &signedIn,
		Windows:       windows,
		AcquiredAt:    observedAt.UTC(),
	}
	return snap, codexEligibility(reasons, observedAt)
}

// codexGenerationKeys are the result fields that arrived in the same
// app-server generation as ordinaryUsageAllowed (QUOTA-PROTOCOLS.md:
// absent at rust-v0.145.0, present in later builds). Any of them, even
// null, marks a result of that generation.
var codexGenerationKeys = []string{"accountId", "rateLimitUpsell", "normalModelSlug"}

// codexOrdinaryUsage reads ordinaryUsageAllowed aware of the app-server
// generation that answered (execution-eligibility.md: "ordinaryUsageAllowed
// generation-aware"), and returns its eligibility reason, "" when ordinary
// usage is explicitly allowed:
//   - true: allowed; false: ordinary_usage_not_allowed (a blocker);
//   - null, another type, or absent from a result of the generation that
//     carries it (the backend withheld its verdict, for example for a
//     login that is not the account's): ordinary_usage_unknown;
//   - absent from a result of an older generation, which cannot say:
//     ordinary_usage_unsupported.
//
// Every case but true fails closed; the reasons only say whether a newer
// Codex CLI could answer.
func codexOrdinaryUsage(top map[string]json.RawMessage) policy.EligibilityReason {
	raw, present := top["ordinaryUsageAllowed"]
	if !present {
		for _, k := range codexGenerationKeys {
			if _, ok := top[k]; ok {
				return policy.EligibilityReasonOrdinaryUsageUnknown
			}
		}
		return policy.EligibilityReasonOrdinaryUsageUnsupported
	}
	allowed, ok := codexBool(raw)
	switch {
	case !ok:
		return policy.EligibilityReasonOrdinaryUsageUnknown
	case !allowed:
		return policy.EligibilityReasonOrdinaryUsageNotAllowed
	}
	return ""
}

// ParseCodexRateLimitsError maps a JSON-RPC error of
// account/rateLimits/read (criterion 4: a collector failure is unknown
// eligibility). The message is only compared with the known texts.
func ParseCodexRateLimitsError(code int64, message string, observedAt time.Time) (policy.CapacitySnapshot, policy.ExecutionEligibility) {
	switch {
	case code == codexInvalidRequest && strings.HasPrefix(message, codexLoggedOutText):
		signedIn := false
		return codexFailure(policy.CapacityReasonNotSignedIn, &signedIn, observedAt)
	case code == codexInvalidRequest && strings.HasPrefix(message, codexNoPlanText):
		return codexFailure(policy.CapacityReasonNoPlanQuota, nil, observedAt)
	default:
		// -32603 (backend or network failure, a dead token), -32001
		// (overloaded), and any other refusal: the server failed to
		// collect; nothing is known about the account.
		return codexFailure(policy.CapacityReasonBackendError, nil, observedAt)
	}
}

// ParseCodexReplies is the whole pure Codex source: the account/read and
// account/rateLimits/read response lines of one app-server session (nil
// account means account/read was not answered) into one report. The
// rate-limits reply decides; account/read only adds whether a login
// exists where the rate-limits reply does not say.
func ParseCodexReplies(accountLine, rateLimitsLine []byte, observedAt time.Time) policy.CapacityReport {
	snap, elig := codexFromReply(rateLimitsLine, observedAt)
	if snap.SignedIn == nil && accountLine != nil {
		if m, err := decodeCodexMessage(accountLine); err == nil && m.Err == nil && m.Result != nil {
			if acct, err := ParseCodexAccount(m.Result); err == nil {
				signedIn := acct.SignedIn
				snap.SignedIn = &signedIn
			}
		}
	}
	return codexReport(snap, elig)
}

// codexFromReply maps one decoded rate-limits response line.
func codexFromReply(line []byte, observedAt time.Time) (policy.CapacitySnapshot, policy.ExecutionEligibility) {
	m, err := decodeCodexMessage(line)
	if err != nil || m.Method != "" {
		return codexFailure(policy.CapacityReasonUnparseable, nil, observedAt)
	}
	if m.Err != nil {
		return ParseCodexRateLimitsError(m.Err.Code, m.Err.Message, observedAt)
	}
	return ParseCodexRateLimits(m.Result, observedAt)
}

// codexReport wraps a snapshot and its eligibility.
func codexReport(snap policy.CapacitySnapshot, elig policy.ExecutionEligibility) policy.CapacityReport {
	return policy.CapacityReport{
		SchemaVersion: policy.CapacitySchemaVersion,
		Provider:      policy.Codex,
		Snapshot:      snap,
		Eligibility:   &elig,
	}
}

// codexFailure is an unknown snapshot with its reason and the matching
// unknown eligibility: not_signed_in for a logged-out account,
// collector_failed for everything else.
func codexFailure(reason policy.CapacityReason, signedIn *bool, observedAt time.Time) (policy.CapacitySnapshot, policy.ExecutionEligibility) {
	snap := policy.CapacitySnapshot{
		SchemaVersion: policy.CapacitySchemaVersion,
		Provider:      policy.Codex,
		Source:        policy.QuotaLiveRPC,
		State:         policy.CapacityUnknown,
		Reason:        reason,
		SignedIn:      signedIn,
		AcquiredAt:    observedAt.UTC(),
	}
	code := policy.EligibilityReasonCollectorFailed
	if reason == policy.CapacityReasonNotSignedIn {
		code = policy.EligibilityReasonNotSignedIn
	}
	return snap, policy.ExecutionEligibility{
		SchemaVersion: policy.EligibilitySchemaVersion,
		Provider:      policy.Codex,
		State:         policy.EligibilityUnknown,
		Reasons:       []policy.EligibilityReason{code},
		ObservedAt:    observedAt.UTC(),
	}
}

// codexEligibility turns the applicable reasons into the report: the state
// by priority policy_blocked > allowance_unavailable > unknown > eligible,
// every reason listed in vocabulary order.
func codexEligibility(reasons map[policy.EligibilityReason]bool, observedAt time.Time) policy.ExecutionEligibility {
	state := policy.EligibilityEligible
	switch {
	case reasons[policy.EligibilityReasonCreditsPresent]:
		state = policy.EligibilityPolicyBlocked
	case reasons[policy.EligibilityReasonOrdinaryUsageNotAllowed] || reasons[policy.EligibilityReasonSpendControlReached] ||
		reasons[policy.EligibilityReasonRateLimitReached] || reasons[policy.EligibilityReasonIndividualLimitExhausted] ||
		reasons[policy.EligibilityReasonUpsellPresent] || reasons[policy.EligibilityReasonWindowExhausted]:
		state = policy.EligibilityAllowanceUnavailable
	case reasons[policy.EligibilityReasonCreditsUnknown] || reasons[policy.EligibilityReasonOrdinaryUsageUnknown] ||
		reasons[policy.EligibilityReasonOrdinaryUsageUnsupported] || reasons[policy.EligibilityReasonSpendControlUnknown]:
		state = policy.EligibilityUnknown
	}
	var list []policy.EligibilityReason
	for _, r := range policy.EligibilityReasons {
		if reasons[r] {
			list = append(list, r)
		}
	}
	return policy.ExecutionEligibility{
		SchemaVersion: policy.EligibilitySchemaVersion,
		Provider:      policy.Codex,
		State:         state,
		Reasons:       list,
		ObservedAt:    observedAt.UTC(),
	}
}

// codexWindow reads one rate-limit window {usedPercent, windowDurationMins,
// resetsAt}; each may be null (absent in the snapshot), none may be of
// another type or out of range.
func codexWindow(key string, raw json.RawMessage) (policy.CapacityWindow, bool) {
	obj, ok := codexObject(raw)
	if !ok {
		return policy.CapacityWindow{}, false
	}
	w := policy.CapacityWindow{Name: key}
	if raw, ok := obj["usedPercent"]; ok && !codexIsNull(raw) {
		v, ok := codexNumber(raw)
		if !ok || v < 0 {
			return policy.CapacityWindow{}, false
		}
		w.UsedPercent = &v
	}
	if raw, ok := obj["windowDurationMins"]; ok && !codexIsNull(raw) {
		v, ok := codexInt(raw)
		if !ok || v <= 0 || v > codexMaxWindowMins {
			return policy.CapacityWindow{}, false
		}
		mins := int(v)
		w.WindowMinutes = &mins
		w.Name = codexWindowName(mins)
	}
	if raw, ok := obj["resetsAt"]; ok && !codexIsNull(raw) {
		v, ok := codexInt(raw)
		if !ok || v < 0 || v > codexMaxUnixSecond {
			return policy.CapacityWindow{}, false
		}
		at := time.Unix(v, 0).UTC()
		w.ResetsAt = &at
	}
	return w, true
}

// codexWindowName labels a window by its length as the TUI does: "5h",
// "7d", else "<n>m".
func codexWindowName(mins int) string {
	switch mins {
	case codexFiveHourMins:
		return "5h"
	case codexWeekMins:
		return "7d"
	}
	return fmt.Sprintf("%dm", mins)
}

// codexObject decodes a JSON object; missing, null or another type is not
// one.
func codexObject(raw []byte) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || codexIsNull(raw) {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// codexIsNull reports whether raw is the JSON null.
func codexIsNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// codexBool reads a JSON boolean; missing, null or another type is not
// one.
func codexBool(raw []byte) (bool, bool) {
	if len(raw) == 0 || codexIsNull(raw) {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, false
	}
	return b, true
}

// codexNumber reads a finite JSON number.
func codexNumber(raw []byte) (float64, bool) {
	if len(raw) == 0 || codexIsNull(raw) {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// codexInt reads a JSON number that is an integer within ±2^53.
func codexInt(raw []byte) (int64, bool) {
	f, ok := codexNumber(raw)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
