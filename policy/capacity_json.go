package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// MaxCapacityBytes caps a capacity snapshot, eligibility report or capacity
// report the decoders accept (64 KiB). A real report is well under 2 KiB.
const MaxCapacityBytes = 64 << 10

// CapacityDigestPrefix starts every capacity report digest; it is the same
// "sha256:" form as the events package's digests.
const CapacityDigestPrefix = "sha256:"

// Keys per object, in canonical order. Every other key is refused.
var (
	snapshotKeys    = []string{"schema_version", "provider", "source", "state", "reason", "signed_in", "windows", "acquired_at"}
	snapshotNeeds   = []string{"schema_version", "provider", "source", "state", "acquired_at"}
	windowKeys      = []string{"name", "used_percent", "window_minutes", "resets_at"}
	windowNeeds     = []string{"name"}
	eligibilityKeys = []string{"schema_version", "provider", "state", "reasons", "observed_at"}
	eligibilityNeed = []string{"schema_version", "provider", "state", "observed_at"}
	reportKeys      = []string{"schema_version", "provider", "snapshot", "eligibility", "learned_exhaustion"}
	reportNeeds     = []string{"schema_version", "provider", "snapshot"}
	learnedKeys     = []string{"at", "until"}
)

// DecodeCapacitySnapshot strictly decodes one CapacitySnapshot. It refuses,
// with a *CapacityError naming the field: input over MaxCapacityBytes, a
// byte-order mark, invalid UTF-8, anything but one JSON object, unknown or
// duplicate keys (at every level), null anywhere (an optional field is
// omitted, never null), a missing required field, a value of the wrong JSON
// type, an empty string or array where a value is optional, a time that is
// not RFC 3339, and everything CapacitySnapshot.Validate refuses. Times are
// returned in UTC.
func DecodeCapacitySnapshot(b []byte) (CapacitySnapshot, error) {
	if is := checkCapacityInput(b); is != nil {
		return CapacitySnapshot{}, is.in(docSnapshot)
	}
	s, is := decodeSnapshot(b)
	if is == nil {
		is = s.check()
	}
	if is != nil {
		return CapacitySnapshot{}, is.in(docSnapshot)
	}
	return s, nil
}

// DecodeExecutionEligibility strictly decodes one ExecutionEligibility, with
// the refusals of DecodeCapacitySnapshot and of ExecutionEligibility.Validate.
func DecodeExecutionEligibility(b []byte) (ExecutionEligibility, error) {
	if is := checkCapacityInput(b); is != nil {
		return ExecutionEligibility{}, is.in(docEligibility)
	}
	e, is := decodeEligibility(b)
	if is == nil {
		is = e.check()
	}
	if is != nil {
		return ExecutionEligibility{}, is.in(docEligibility)
	}
	return e, nil
}

// DecodeCapacityReport strictly decodes one CapacityReport, with the
// refusals of DecodeCapacitySnapshot and of CapacityReport.Validate (which
// includes a snapshot or eligibility report of another provider).
func DecodeCapacityReport(b []byte) (CapacityReport, error) {
	if is := checkCapacityInput(b); is != nil {
		return CapacityReport{}, is.in(docReport)
	}
	r, is := decodeReport(b)
	if is == nil {
		is = r.check()
	}
	if is != nil {
		return CapacityReport{}, is.in(docReport)
	}
	return r, nil
}

// MarshalCapacitySnapshot validates s and returns its canonical JSON: keys
// in the struct's order, optional fields omitted, times in UTC (RFC 3339
// with as many fractional digits as needed), no insignificant whitespace.
func MarshalCapacitySnapshot(s CapacitySnapshot) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return marshalCapacity(docSnapshot, canonicalSnapshot(s))
}

// MarshalExecutionEligibility validates e and returns its canonical JSON
// (see MarshalCapacitySnapshot).
func MarshalExecutionEligibility(e ExecutionEligibility) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return marshalCapacity(docEligibility, canonicalEligibility(e))
}

// MarshalCapacityReport validates r and returns its canonical JSON (see
// MarshalCapacitySnapshot). DecodeCapacityReport accepts every output and
// returns a value equal to r up to time zones and monotonic readings.
func MarshalCapacityReport(r CapacityReport) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	c := r
	c.Snapshot = canonicalSnapshot(r.Snapshot)
	if r.Eligibility != nil {
		e := canonicalEligibility(*r.Eligibility)
		c.Eligibility = &e
	}
	if l := r.LearnedExhaustion; l != nil {
		c.LearnedExhaustion = &LearnedExhaustion{At: l.At.UTC(), Until: l.Until.UTC()}
	}
	return marshalCapacity(docReport, c)
}

// CapacityReportDigest is "sha256:" followed by the lowercase hex SHA-256 of
// r's canonical JSON (MarshalCapacityReport): the digest an exclusion event
// records for the report it was computed from.
func CapacityReportDigest(r CapacityReport) (string, error) {
	b, err := MarshalCapacityReport(r)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return CapacityDigestPrefix + hex.EncodeToString(sum[:]), nil
}

func marshalCapacity(doc string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &CapacityError{Doc: doc, Msg: err.Error()}
	}
	if len(b) > MaxCapacityBytes {
		return nil, &CapacityError{Doc: doc, Msg: fmt.Sprintf("encodes to %d bytes, over the %d-byte limit (policy.MaxCapacityBytes)", len(b), MaxCapacityBytes)}
	}
	return b, nil
}

func canonicalSnapshot(s CapacitySnapshot) CapacitySnapshot {
	c := s
	c.AcquiredAt = s.AcquiredAt.UTC()
	if s.SignedIn != nil {
		v := *s.SignedIn
		c.SignedIn = &v
	}
	c.Windows = nil
	for _, w := range s.Windows {
		cw := CapacityWindow{Name: w.Name}
		if w.UsedPercent != nil {
			v := *w.UsedPercent
			cw.UsedPercent = &v
		}
		if w.WindowMinutes != nil {
			v := *w.WindowMinutes
			cw.WindowMinutes = &v
		}
		if w.ResetsAt != nil {
			v := w.ResetsAt.UTC()
			cw.ResetsAt = &v
		}
		c.Windows = append(c.Windows, cw)
	}
	return c
}

func canonicalEligibility(e ExecutionEligibility) ExecutionEligibility {
	c := e
	c.ObservedAt = e.ObservedAt.UTC()
	c.Reasons = nil
	if len(e.Reasons) > 0 {
		c.Reasons = append([]EligibilityReason(nil), e.Reasons...)
	}
	return c
}

func checkCapacityInput(b []byte) *capIssue {
	switch {
	case len(b) > MaxCapacityBytes:
		return capIssuef("", "is %d bytes, over the %d-byte limit (policy.MaxCapacityBytes)", len(b), MaxCapacityBytes)
	case bytes.HasPrefix(b, []byte(utf8BOM)):
		return capIssuef("", "starts with a byte-order mark; write plain UTF-8 JSON")
	case !utf8.Valid(b):
		return capIssuef("", "is not valid UTF-8")
	}
	return nil
}

// capMembers walks raw as one object with WalkObject and checks that no
// member is null and every needed key is present.
func capMembers(raw []byte, allowed, needed []string) (map[string]json.RawMessage, *capIssue) {
	m, err := ObjectMembers(raw, allowed)
	var je *JSONError
	if errors.As(err, &je) {
		switch je.Fault {
		case JSONNotObject:
			return nil, capIssuef("", "must be a JSON object")
		case JSONUnknownKey:
			return nil, capIssuef("", "unknown key %s (allowed: %s)", shortKey(je.Key), quotedList(allowed))
		case JSONDuplicateKey:
			return nil, capIssuef("", "duplicate key %s", shortKey(je.Key))
		case JSONBadValue:
			return nil, capIssuef(je.Key, "is not JSON")
		case JSONTrailingData:
			return nil, capIssuef("", "has trailing data after the JSON object")
		}
		return nil, capIssuef("", "is not a JSON object: %v", je.Err)
	} else if err != nil {
		return nil, capIssuef("", "is not a JSON object: %v", err)
	}
	for _, k := range allowed { // allowed order, so the first fault is stable
		if v, ok := m[k]; ok && string(v) == "null" {
			return nil, capIssuef(k, "must not be null; omit an optional field instead")
		}
	}
	for _, k := range needed {
		if _, ok := m[k]; !ok {
			return nil, capIssuef(k, "is required")
		}
	}
	return m, nil
}

// capMember decodes m[key] into a T, when present, with encoding/json's type
// rules (a string is not a number, 1.5 is not an integer).
func capMember[T any](m map[string]json.RawMessage, key, want string) (T, bool, *capIssue) {
	var v T
	raw, ok := m[key]
	if !ok {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, capIssuef(key, "must be %s", want)
	}
	return v, true, nil
}

// capVocab decodes a string member that, when present, is not empty.
func capVocab[T ~string](m map[string]json.RawMessage, key string) (T, *capIssue) {
	s, ok, is := capMember[string](m, key, "a string")
	if is == nil && ok && s == "" {
		is = capIssuef(key, "must not be empty; omit an optional field instead")
	}
	return T(s), is
}

// timeMember decodes an RFC 3339 time member, in UTC.
func timeMember(m map[string]json.RawMessage, key string) (time.Time, bool, *capIssue) {
	t, ok, is := capMember[time.Time](m, key, "an RFC 3339 time string")
	return t.UTC(), ok, is
}

// arrayMember decodes an array member that, when present, is not empty.
func arrayMember(m map[string]json.RawMessage, key string, limit int) ([]json.RawMessage, *capIssue) {
	a, ok, is := capMember[[]json.RawMessage](m, key, "an array")
	switch {
	case is != nil || !ok:
		return nil, is
	case len(a) == 0:
		return nil, capIssuef(key, "must not be empty; omit an optional field instead")
	case len(a) > limit:
		return nil, capIssuef(key, "has %d entries, over the limit of %d", len(a), limit)
	}
	return a, nil
}

// firstIssue returns the first non-nil issue.
func firstIssue(issues ...*capIssue) *capIssue {
	for _, is := range issues {
		if is != nil {
			return is
		}
	}
	return nil
}

func decodeSnapshot(raw []byte) (CapacitySnapshot, *capIssue) {
	var s CapacitySnapshot
	m, is := capMembers(raw, snapshotKeys, snapshotNeeds)
	if is != nil {
		return s, is
	}
	var is1, is2, is3, is4, is5, is6, is7 *capIssue
	s.SchemaVersion, _, is1 = capMember[int](m, "schema_version", "an integer")
	s.Provider, is2 = capVocab[Provider](m, "provider")
	s.Source, is3 = capVocab[QuotaSource](m, "source")
	s.State, is4 = capVocab[CapacityState](m, "state")
	s.Reason, is5 = capVocab[CapacityReason](m, "reason")
	signed, ok, is6 := capMember[bool](m, "signed_in", "true or false")
	if ok && is6 == nil {
		s.SignedIn = &signed
	}
	s.AcquiredAt, _, is7 = timeMember(m, "acquired_at")
	if is := firstIssue(is1, is2, is3, is4, is5, is6, is7); is != nil {
		return s, is
	}
	ws, is := arrayMember(m, "windows", MaxCapacityWindows)
	if is != nil {
		return s, is
	}
	for i, w := range ws {
		cw, is := decodeWindow(w)
		if is != nil {
			return s, is.at(fmt.Sprintf("windows[%d]", i))
		}
		s.Windows = append(s.Windows, cw)
	}
	return s, nil
}

func decodeWindow(raw []byte) (CapacityWindow, *capIssue) {
	var w CapacityWindow
	m, is := capMembers(raw, windowKeys, windowNeeds)
	if is != nil {
		return w, is
	}
	name, _, is1 := capMember[string](m, "name", "a string")
	w.Name = name
	pct, okP, is2 := capMember[float64](m, "used_percent", "a number")
	if okP && is2 == nil {
		w.UsedPercent = &pct
	}
	mins, okM, is3 := capMember[int](m, "window_minutes", "an integer")
	if okM && is3 == nil {
		w.WindowMinutes = &mins
	}
	at, okR, is4 := timeMember(m, "resets_at")
	if okR && is4 == nil {
		w.ResetsAt = &at
	}
	return w, firstIssue(is1, is2, is3, is4)
}

func decodeEligibility(raw []byte) (ExecutionEligibility, *capIssue) {
	var e ExecutionEligibility
	m, is := capMembers(raw, eligibilityKeys, eligibilityNeed)
	if is != nil {
		return e, is
	}
	var is1, is2, is3, is4 *capIssue
	e.SchemaVersion, _, is1 = capMember[int](m, "schema_version", "an integer")
	e.Provider, is2 = capVocab[Provider](m, "provider")
	e.State, is3 = capVocab[EligibilityState](m, "state")
	e.ObservedAt, _, is4 = timeMember(m, "observed_at")
	if is := firstIssue(is1, is2, is3, is4); is != nil {
		return e, is
	}
	rs, is := arrayMember(m, "reasons", len(EligibilityReasons))
	if is != nil {
		return e, is
	}
	for i, r := range rs {
		var s string
		if err := json.Unmarshal(r, &s); err != nil || string(bytes.TrimSpace(r)) == "null" {
			return e, capIssuef(fmt.Sprintf("reasons[%d]", i), "must be a reason string")
		}
		e.Reasons = append(e.Reasons, EligibilityReason(s))
	}
	return e, nil
}

func decodeReport(raw []byte) (CapacityReport, *capIssue) {
	var r CapacityReport
	m, is := capMembers(raw, reportKeys, reportNeeds)
	if is != nil {
		return r, is
	}
	var is1, is2 *capIssue
	r.SchemaVersion, _, is1 = capMember[int](m, "schema_version", "an integer")
	r.Provider, is2 = capVocab[Provider](m, "provider")
	if is := firstIssue(is1, is2); is != nil {
		return r, is
	}
	if r.Snapshot, is = decodeSnapshot(m["snapshot"]); is != nil {
		return r, is.at("snapshot")
	}
	if raw, ok := m["eligibility"]; ok {
		e, is := decodeEligibility(raw)
		if is != nil {
			return r, is.at("eligibility")
		}
		r.Eligibility = &e
	}
	if raw, ok := m["learned_exhaustion"]; ok {
		lm, is := capMembers(raw, learnedKeys, learnedKeys)
		if is != nil {
			return r, is.at("learned_exhaustion")
		}
		at, _, is1 := timeMember(lm, "at")
		until, _, is2 := timeMember(lm, "until")
		if is := firstIssue(is1, is2); is != nil {
			return r, is.at("learned_exhaustion")
		}
		r.LearnedExhaustion = &LearnedExhaustion{At: at, Until: until}
	}
	return r, nil
}
