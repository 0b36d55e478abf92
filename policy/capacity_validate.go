package policy

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidCapacity is matched (errors.Is) by every *CapacityError: the
// refusal of a capacity snapshot, an execution eligibility report or a
// capacity report.
var ErrInvalidCapacity = errors.New("invalid capacity data")

// CapacityError names what is wrong with a capacity snapshot, eligibility
// report or capacity report, and where. It quotes no input value outside
// its closed vocabulary (key and window names aside, cut to 24 characters),
// so it carries no account data.
type CapacityError struct {
	// Doc is the document refused: "capacity snapshot", "execution
	// eligibility" or "capacity report".
	Doc string
	// Field is the dotted path of the value at fault ("snapshot.windows[0].used_percent"),
	// or "" for the document as a whole.
	Field string
	// Msg says what is wrong and what is allowed.
	Msg string
}

func (e *CapacityError) Error() string {
	if e.Field == "" {
		return e.Doc + ": " + e.Msg
	}
	return e.Doc + " " + e.Field + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalidCapacity) true.
func (e *CapacityError) Is(target error) bool { return target == ErrInvalidCapacity }

// Document names used in CapacityError.Doc.
const (
	docSnapshot    = "capacity snapshot"
	docEligibility = "execution eligibility"
	docReport      = "capacity report"
)

// capIssue is a validation failure before it knows its document: the
// validators of nested values return it, and the entry point wraps it.
type capIssue struct{ field, msg string }

func capIssuef(field, format string, args ...any) *capIssue {
	return &capIssue{field: field, msg: fmt.Sprintf(format, args...)}
}

// at prefixes the issue's field with a parent path.
func (c *capIssue) at(parent string) *capIssue {
	if c == nil {
		return nil
	}
	switch {
	case parent == "":
	case c.field == "":
		c.field = parent
	case strings.HasPrefix(c.field, "["):
		c.field = parent + c.field
	default:
		c.field = parent + "." + c.field
	}
	return c
}

func (c *capIssue) in(doc string) error {
	if c == nil {
		return nil
	}
	return &CapacityError{Doc: doc, Field: c.field, Msg: c.msg}
}

// validCapacityProvider: a report may be kept for every provider a runner
// can launch, Gemini included (it has a quota source).
func validCapacityProvider(p Provider) bool { return validReceiptProvider(p) }

func capacityProviders() string {
	return quotedList(append(Providers[:len(Providers):len(Providers)], Gemini))
}

// gotValue describes a refused value without quoting anything outside its
// vocabulary, so an error can never carry account data that was misplaced
// into a field.
func gotValue[T ~string](v T, known bool) string {
	switch {
	case v == "":
		return "got none"
	case known:
		return fmt.Sprintf("got %q", string(v))
	}
	return "got a value outside the vocabulary"
}

// shortKey quotes a key name, cut to 24 characters.
func shortKey[T ~string](v T) string {
	s := string(v)
	if utf8.RuneCountInString(s) > 24 {
		r := []rune(s)
		s = string(r[:24]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// MaxWindowNameLen bounds a window's name in bytes.
const MaxWindowNameLen = 64

// MaxCapacityWindows bounds the windows of one snapshot (Gemini reports one
// per model; a few dozen at most).
const MaxCapacityWindows = 64

// Validate reports whether s is a well-formed snapshot (a *CapacityError
// naming the first fault): schema_version 1; a known provider, source and
// state; UNSUPPORTED source exactly when the state is unsupported, whose
// reason is no_source; a known reason on every unknown snapshot (never
// no_source) and none on a measured one; signed_in=false only on an unknown
// snapshot, and never true beside the reason not_signed_in; at most
// MaxCapacityWindows windows on a measured snapshot (none is valid: the
// source answered and no window is running, as Claude reports before a
// window's first message) and none otherwise, each
// with a distinct non-empty printable name of at most MaxWindowNameLen
// bytes, used_percent within 0..100 and window_minutes positive when given;
// a non-zero acquired_at.
func (s CapacitySnapshot) Validate() error { return s.check().in(docSnapshot) }

func (s CapacitySnapshot) check() *capIssue {
	if s.SchemaVersion != CapacitySchemaVersion {
		return capIssuef("schema_version", "must be %d, got %d", CapacitySchemaVersion, s.SchemaVersion)
	}
	if !validCapacityProvider(s.Provider) {
		return capIssuef("provider", "must be one of %s, got %s", capacityProviders(), gotValue(s.Provider, false))
	}
	if !s.Source.Valid() {
		return capIssuef("source", "must be one of %s, got %s", quotedList(QuotaSources), gotValue(s.Source, false))
	}
	if !s.State.Valid() {
		return capIssuef("state", "must be one of %s, got %s", quotedList(CapacityStates), gotValue(s.State, false))
	}
	if (s.Source == QuotaUnsupported) != (s.State == CapacityUnsupported) {
		return capIssuef("state", "%q goes with source %q and only with it (UNKNOWN and UNSUPPORTED are never conflated), got state %q with source %q",
			CapacityUnsupported, QuotaUnsupported, s.State, s.Source)
	}
	switch s.State {
	case CapacityMeasured:
		if s.Reason != "" {
			return capIssuef("reason", "must be absent on a measured snapshot, %s", gotValue(s.Reason, s.Reason.Valid()))
		}
	case CapacityUnsupported:
		if s.Reason != CapacityReasonNoSource {
			return capIssuef("reason", "must be %q on an unsupported snapshot, %s", CapacityReasonNoSource, gotValue(s.Reason, s.Reason.Valid()))
		}
	case CapacityUnknown:
		if s.Reason == "" {
			return capIssuef("reason", "is required on an unknown snapshot (one of %s)", quotedList(CapacityReasons[:len(CapacityReasons)-1]))
		}
		if !s.Reason.Valid() || s.Reason == CapacityReasonNoSource {
			return capIssuef("reason", "must be one of %s on an unknown snapshot, %s", quotedList(CapacityReasons[:len(CapacityReasons)-1]), gotValue(s.Reason, s.Reason.Valid()))
		}
	}
	if s.SignedIn != nil {
		if !*s.SignedIn && s.State != CapacityUnknown {
			return capIssuef("signed_in", "false goes only with state %q, got state %q", CapacityUnknown, s.State)
		}
		if *s.SignedIn && s.Reason == CapacityReasonNotSignedIn {
			return capIssuef("signed_in", "is true but the reason is %q", CapacityReasonNotSignedIn)
		}
	}
	if s.State == CapacityMeasured {
		if len(s.Windows) > MaxCapacityWindows {
			return capIssuef("windows", "has %d windows, over the limit of %d", len(s.Windows), MaxCapacityWindows)
		}
	} else if s.Windows != nil {
		return capIssuef("windows", "must be absent unless the snapshot is measured (state %q)", s.State)
	}
	seen := map[string]bool{}
	for i, w := range s.Windows {
		if is := w.check(); is != nil {
			return is.at(fmt.Sprintf("windows[%d]", i))
		}
		if seen[w.Name] {
			return capIssuef(fmt.Sprintf("windows[%d].name", i), "%s repeats an earlier window's name", shortKey(w.Name))
		}
		seen[w.Name] = true
	}
	if s.AcquiredAt.IsZero() {
		return capIssuef("acquired_at", "is required")
	}
	return checkTime("acquired_at", s.AcquiredAt)
}

func (w CapacityWindow) check() *capIssue {
	switch {
	case w.Name == "":
		return capIssuef("name", "is required and must not be empty")
	case len(w.Name) > MaxWindowNameLen:
		return capIssuef("name", "is %d bytes, over the limit of %d", len(w.Name), MaxWindowNameLen)
	case !utf8.ValidString(w.Name) || strings.IndexFunc(w.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return capIssuef("name", "must be printable UTF-8 text")
	}
	if p := w.UsedPercent; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 100) {
		return capIssuef("used_percent", "must be a number within 0..100, got %v", *p)
	}
	if m := w.WindowMinutes; m != nil && *m <= 0 {
		return capIssuef("window_minutes", "must be a positive number of minutes, got %d", *m)
	}
	if w.ResetsAt != nil {
		if w.ResetsAt.IsZero() {
			return capIssuef("resets_at", "must be a real time; omit it when the reset is unknown")
		}
		return checkTime("resets_at", *w.ResetsAt)
	}
	return nil
}

// checkTime refuses a time JSON cannot carry (RFC 3339 has four-digit years).
func checkTime(field string, t time.Time) *capIssue {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return capIssuef(field, "year %d is outside 1..9999", y)
	}
	return nil
}

// eligibilityClass is the state each reason implies on its own.
func eligibilityClass(r EligibilityReason) EligibilityState {
	switch r {
	case EligibilityReasonCreditsPresent:
		return EligibilityPolicyBlocked
	case EligibilityReasonOrdinaryUsageNotAllowed, EligibilityReasonSpendControlReached,
		EligibilityReasonRateLimitReached, EligibilityReasonIndividualLimitExhausted,
		EligibilityReasonUpsellPresent, EligibilityReasonWindowExhausted:
		return EligibilityAllowanceUnavailable
	case EligibilityReasonCreditsUnknown, EligibilityReasonOrdinaryUsageUnknown,
		EligibilityReasonOrdinaryUsageUnsupported, EligibilityReasonSpendControlUnknown, EligibilityReasonCollectorFailed,
		EligibilityReasonNotSignedIn:
		return EligibilityUnknown
	}
	return EligibilityUnknown // an unknown reason is unsafe
}

// EligibilityStateOf is the state a report with these reasons has, by the
// seed's priority policy_blocked > allowance_unavailable > unknown >
// eligible: no reasons is eligible; an unknown reason counts as unknown.
func EligibilityStateOf(reasons []EligibilityReason) EligibilityState {
	state := EligibilityEligible
	rank := map[EligibilityState]int{EligibilityEligible: 0, EligibilityUnknown: 1, EligibilityAllowanceUnavailable: 2, EligibilityPolicyBlocked: 3}
	for _, r := range reasons {
		if c := eligibilityClass(r); rank[c] > rank[state] {
			state = c
		}
	}
	return state
}

// exclusiveReasons are pairs no report may carry together: a field is
// either known or unknown.
var exclusiveReasons = [][2]EligibilityReason{
	{EligibilityReasonCreditsPresent, EligibilityReasonCreditsUnknown},
	{EligibilityReasonOrdinaryUsageNotAllowed, EligibilityReasonOrdinaryUsageUnknown},
	{EligibilityReasonSpendControlReached, EligibilityReasonSpendControlUnknown},
}

// noEvidenceReasons say the collector read nothing; no reason derived from
// the read evidence may go with them.
var noEvidenceReasons = []EligibilityReason{EligibilityReasonCollectorFailed, EligibilityReasonNotSignedIn}

// Validate reports whether e is a well-formed eligibility report (a
// *CapacityError naming the first fault): schema_version 1; a known provider
// and state; known reasons, each once, in vocabulary order (EligibilityReasons),
// none on an eligible report and at least one otherwise; a state equal to
// EligibilityStateOf(reasons); no reason beside its own opposite
// (credits_present with credits_unknown, ...), and collector_failed and
// not_signed_in beside no reason read from evidence; a non-zero observed_at.
func (e ExecutionEligibility) Validate() error { return e.check().in(docEligibility) }

func (e ExecutionEligibility) check() *capIssue {
	if e.SchemaVersion != EligibilitySchemaVersion {
		return capIssuef("schema_version", "must be %d, got %d", EligibilitySchemaVersion, e.SchemaVersion)
	}
	if !validCapacityProvider(e.Provider) {
		return capIssuef("provider", "must be one of %s, got %s", capacityProviders(), gotValue(e.Provider, false))
	}
	if !e.State.Valid() {
		return capIssuef("state", "must be one of %s, got %s", quotedList(EligibilityStates), gotValue(e.State, false))
	}
	last := -1
	for i, r := range e.Reasons {
		at := fmt.Sprintf("reasons[%d]", i)
		idx := -1
		for j, v := range EligibilityReasons {
			if v == r {
				idx = j
			}
		}
		switch {
		case idx < 0:
			return capIssuef(at, "must be one of %s, %s", quotedList(EligibilityReasons), gotValue(r, false))
		case idx == last:
			return capIssuef(at, "%q is listed twice", r)
		case idx < last:
			return capIssuef(at, "%q is out of order; reasons are listed in vocabulary order (%s)", r, quotedList(EligibilityReasons))
		}
		last = idx
	}
	for _, pair := range exclusiveReasons {
		if inList(e.Reasons, pair[0]) && inList(e.Reasons, pair[1]) {
			return capIssuef("reasons", "%q and %q contradict each other", pair[0], pair[1])
		}
	}
	for _, r := range noEvidenceReasons {
		if !inList(e.Reasons, r) {
			continue
		}
		for _, o := range e.Reasons {
			if !inList(noEvidenceReasons, o) {
				return capIssuef("reasons", "%q means nothing was read, so %q cannot be known", r, o)
			}
		}
	}
	if e.State == EligibilityEligible && len(e.Reasons) > 0 {
		return capIssuef("reasons", "must be absent on an eligible report")
	}
	if e.State != EligibilityEligible && len(e.Reasons) == 0 {
		return capIssuef("reasons", "a %s report needs at least one reason", e.State)
	}
	if want := EligibilityStateOf(e.Reasons); e.State != want {
		return capIssuef("state", "is %q but the reasons make it %q (priority policy_blocked > allowance_unavailable > unknown)", e.State, want)
	}
	if e.ObservedAt.IsZero() {
		return capIssuef("observed_at", "is required")
	}
	return checkTime("observed_at", e.ObservedAt)
}

// Validate reports whether r is a well-formed capacity report (a
// *CapacityError naming the first fault): schema_version 1, a known
// provider, a valid snapshot and (when present) a valid eligibility report
// of that same provider, and a learned exhaustion (when present) with
// non-zero at and until, until not before at.
func (r CapacityReport) Validate() error { return r.check().in(docReport) }

func (r CapacityReport) check() *capIssue {
	if r.SchemaVersion != CapacitySchemaVersion {
		return capIssuef("schema_version", "must be %d, got %d", CapacitySchemaVersion, r.SchemaVersion)
	}
	if !validCapacityProvider(r.Provider) {
		return capIssuef("provider", "must be one of %s, got %s", capacityProviders(), gotValue(r.Provider, false))
	}
	if is := r.Snapshot.check(); is != nil {
		return is.at("snapshot")
	}
	if r.Snapshot.Provider != r.Provider {
		return capIssuef("snapshot.provider", "is %q but the report is for %q", r.Snapshot.Provider, r.Provider)
	}
	if e := r.Eligibility; e != nil {
		if is := e.check(); is != nil {
			return is.at("eligibility")
		}
		if e.Provider != r.Provider {
			return capIssuef("eligibility.provider", "is %q but the report is for %q", e.Provider, r.Provider)
		}
	}
	if l := r.LearnedExhaustion; l != nil {
		switch {
		case l.At.IsZero():
			return capIssuef("learned_exhaustion.at", "is required")
		case l.Until.IsZero():
			return capIssuef("learned_exhaustion.until", "is required")
		case l.Until.Before(l.At):
			return capIssuef("learned_exhaustion.until", "is before at")
		}
		if is := checkTime("at", l.At); is != nil {
			return is.at("learned_exhaustion")
		}
		if is := checkTime("until", l.Until); is != nil {
			return is.at("learned_exhaustion")
		}
	}
	return nil
}
