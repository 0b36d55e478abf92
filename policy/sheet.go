package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"
)

// MaxSheetBytes caps the size of a sheet the parser accepts.
const MaxSheetBytes = 1 << 20

// LineKind classifies one physical line of a sheet.
type LineKind int

// Line kinds.
const (
	LineBlank   LineKind = iota // empty or whitespace only
	LineComment                 // starts with '#'; may carry a directive
	LineRow                     // a role row: header ':' seats
	LineText                    // anything else, kept verbatim
)

// Line is one physical line, kept byte for byte so a parsed sheet renders
// identically.
type Line struct {
	Number int      // 1-based
	Raw    string   // the line without its "\n" (a "\r" stays)
	Kind   LineKind // classification
	Row    int      // index into Sheet.Rows when Kind is LineRow
}

// Seat is one panel seat: an ordered chain of one to three attempts.
type Seat struct {
	Text     string    // the seat as written, trimmed
	Attempts []Attempt // as written (not yet normalized)
}

// Row is a parsed role row.
type Row struct {
	Header  string // the catalog header
	Catalog int    // index into Options.Catalog
	Line    int    // 1-based line number
	Seats   []Seat
}

// AccessFact is one "# access:" record: what the user confirmed about a
// provider's funding and spending authorization.
type AccessFact struct {
	Provider   Provider `json:"provider"`
	Funding    Funding  `json:"funding"`
	Capacity   string   `json:"capacity"`
	APISpend   APISpend `json:"apiSpend"`
	Provenance string   `json:"provenance"`
	Plan       string   `json:"plan,omitempty"`
	Note       string   `json:"note,omitempty"`
	ObservedAt string   `json:"observedAt,omitempty"`
}

// Sheet is a parsed model sheet.
type Sheet struct {
	Lines           []Line
	TrailingNewline bool
	Rows            []Row
	Access          []AccessFact
	Fallback        *FallbackPolicy     // nil when the sheet has no "# fallback" line
	Continuation    *ContinuationPolicy // nil when the sheet has no "# continuation" line
	Budgets         []string            // "# budget:" texts, in order
}

// ParseSheet parses a model sheet. Every problem found is reported in one
// *PolicyError, one issue per problem, each naming its line.
func ParseSheet(src []byte, opt Options) (*Sheet, error) {
	if len(src) > MaxSheetBytes {
		return nil, Policyf("sheet is %d bytes; the limit is %d (policy.MaxSheetBytes)", len(src), MaxSheetBytes)
	}
	text := string(src)
	s := &Sheet{}
	if strings.HasSuffix(text, "\n") {
		s.TrailingNewline = true
		text = text[:len(text)-1]
	}
	var issues []string
	fail := func(n int, format string, args ...any) {
		issues = append(issues, fmt.Sprintf("line %d: ", n)+fmt.Sprintf(format, args...))
	}
	seen := map[string]int{}
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		ln := Line{Number: n, Raw: raw}
		// Only trailing space is insignificant: a row header or a comment
		// starts at the beginning of its line, as in the reference helper.
		body := strings.TrimRightFunc(strings.TrimSuffix(raw, "\r"), unicode.IsSpace)
		switch {
		case strings.TrimSpace(body) == "":
			ln.Kind = LineBlank
		case body != strings.TrimLeftFunc(body, unicode.IsSpace):
			ln.Kind = LineText
			// An access fact may be indented (the reference reads it
			// anywhere in a comment); other directives and row headers
			// start at the beginning of their line.
			if t := strings.TrimLeftFunc(body, unicode.IsSpace); t[0] == '#' && strings.Contains(t, "# access:") {
				ln.Kind = LineComment
				if err := s.accessDirective(t); err != nil {
					fail(n, "%v", err)
				}
				break
			}
			if name, ok := rowLike(body); ok {
				fail(n, "unknown role row header %q: the line is indented, and a row header or comment starts at the beginning of its line", name)
			}
		case body[0] == '#':
			ln.Kind = LineComment
			if err := s.directive(body); err != nil {
				fail(n, "%v", err)
			}
		default:
			idx := opt.headerAt(body)
			if idx < 0 {
				ln.Kind = LineText
				if name, ok := rowLike(body); ok {
					fail(n, "unknown role row header %q (want one of %s)", name, quotedList(headers(opt.Catalog)))
				}
				break
			}
			cat := opt.Catalog[idx]
			if prev, dup := seen[cat.Header]; dup {
				fail(n, "role row %q repeats line %d", cat.Header, prev)
				ln.Kind = LineText
				break
			}
			seen[cat.Header] = n
			row, errs := parseRow(cat, idx, n, body[len(cat.Header)+1:])
			for _, e := range errs {
				fail(n, "%s: %s", cat.Header, e)
			}
			ln.Kind, ln.Row = LineRow, len(s.Rows)
			s.Rows = append(s.Rows, row)
		}
		s.Lines = append(s.Lines, ln)
	}
	if len(issues) > 0 {
		return nil, &PolicyError{Issues: issues}
	}
	return s, nil
}

// rowLike reports whether a line has the shape "name:" followed by space,
// tab or end of line, which is only legal for a documented header.
func rowLike(body string) (string, bool) {
	i := strings.IndexByte(body, ':')
	if i <= 0 {
		return "", false
	}
	if i == len(body)-1 || body[i+1] == ' ' || body[i+1] == '\t' {
		return body[:i], true
	}
	return "", false
}

func headers(cat []RoleRow) []string {
	out := make([]string, len(cat))
	for i, r := range cat {
		out[i] = r.Header
	}
	return out
}

// parseRow parses the right-hand side of a role row.
func parseRow(cat RoleRow, idx, n int, rhs string) (Row, []string) {
	row := Row{Header: cat.Header, Catalog: idx, Line: n}
	var errs []string
	for si, seatText := range strings.Split(rhs, ",") {
		seatText = strings.TrimSpace(seatText)
		if seatText == "" {
			errs = append(errs, fmt.Sprintf("seat %d is empty", si+1))
			continue
		}
		seat := Seat{Text: seatText}
		parts := strings.Split(seatText, "->")
		if len(parts) > MaxAttemptsPerSeat {
			errs = append(errs, fmt.Sprintf("seat %d has %d attempts; a chain holds at most %d", si+1, len(parts), MaxAttemptsPerSeat))
		}
		aliases := 0
		for ai, p := range parts {
			p = strings.TrimSpace(p)
			if p == "" {
				errs = append(errs, fmt.Sprintf("seat %d attempt %d is empty", si+1, ai+1))
				continue
			}
			a, err := ParseAttempt(p)
			if err != nil {
				errs = append(errs, fmt.Sprintf("seat %d: %v", si+1, err))
				continue
			}
			norm := NormalizeAttempt(a)
			for _, prev := range seat.Attempts {
				pn := NormalizeAttempt(prev)
				switch {
				case pn == norm:
					errs = append(errs, fmt.Sprintf("seat %d repeats attempt %s", si+1, p))
				case a.Kind == KindDescriptor && prev.Kind == KindDescriptor && prev.Provider == a.Provider:
					errs = append(errs, fmt.Sprintf("seat %d has a second %s attempt (%s after %s); another model on the same account cannot recover its capacity", si+1, a.Provider, p, prev))
				}
			}
			if a.Kind == KindAlias {
				aliases++
				if aliases == 2 {
					errs = append(errs, fmt.Sprintf("seat %d has more than one alias (inherit-parent and auto both use the parent)", si+1))
				}
			} else if cat.NativeOnly {
				errs = append(errs, fmt.Sprintf("seat %d: %s requires the parent's live MCP surface; use inherit-parent or auto, not %s", si+1, cat.Header, p))
			}
			seat.Attempts = append(seat.Attempts, a)
		}
		row.Seats = append(row.Seats, seat)
	}
	if !cat.Panel && len(row.Seats) != 1 {
		errs = append(errs, fmt.Sprintf("not a panel row; it takes exactly one seat, got %d", len(row.Seats)))
	}
	return row, errs
}

// directive records a comment directive, if the comment is one. c is the
// trimmed comment line, '#' included. As in the reference helper, budget,
// fallback and continuation directives must start the comment with exactly
// "# <name>:", while "# access:" may appear anywhere in it.
func (s *Sheet) directive(c string) error {
	switch {
	case strings.HasPrefix(c, "# budget:"):
		s.Budgets = append(s.Budgets, strings.TrimSpace(c[len("# budget:"):]))
	case strings.HasPrefix(c, "# fallback:"):
		if s.Fallback != nil {
			return fmt.Errorf("second # fallback line; a sheet declares its recovery policy once")
		}
		f, err := parseFallback([]byte(strings.TrimSpace(c[len("# fallback:"):])))
		if err != nil {
			return fmt.Errorf("# fallback: %v", err)
		}
		s.Fallback = &f
	case strings.HasPrefix(c, "# continuation:"):
		if s.Continuation != nil {
			return fmt.Errorf("second # continuation line; a sheet declares it once")
		}
		cp, err := parseContinuation([]byte(strings.TrimSpace(c[len("# continuation:"):])))
		if err != nil {
			return fmt.Errorf("# continuation: %v", err)
		}
		s.Continuation = &cp
	}
	return s.accessDirective(c)
}

// accessDirective records the "# access:" fact in comment c, if any; the
// space after the colon is optional.
func (s *Sheet) accessDirective(c string) error {
	i := strings.Index(c, "# access:")
	if i < 0 {
		return nil
	}
	f, err := parseAccessFact([]byte(strings.TrimSpace(c[i+len("# access:"):])))
	if err != nil {
		return fmt.Errorf("# access: %v", err)
	}
	for _, prev := range s.Access {
		if prev.Provider == f.Provider {
			return fmt.Errorf("# access: second access fact for provider %s; one record per provider", f.Provider)
		}
	}
	s.Access = append(s.Access, f)
	return nil
}

func parseFallback(raw []byte) (FallbackPolicy, error) {
	m, err := strictObject(raw, "on")
	if err != nil {
		return FallbackPolicy{}, err
	}
	on, ok, err := jsonStrings(m, "on")
	if err != nil {
		return FallbackPolicy{}, err
	}
	if !ok {
		return FallbackPolicy{}, fmt.Errorf(`missing key "on"`)
	}
	f := FallbackPolicy{On: []Outcome{}}
	for _, v := range on {
		o := Outcome(v)
		if !inList(FallbackOutcomes, o) {
			return FallbackPolicy{}, fmt.Errorf("outcome %q cannot advance a fallback (want %s)", v, quotedList(FallbackOutcomes))
		}
		if inList(f.On, o) {
			return FallbackPolicy{}, fmt.Errorf("outcome %q listed twice", v)
		}
		f.On = append(f.On, o)
	}
	return f, nil
}

func parseContinuation(raw []byte) (ContinuationPolicy, error) {
	m, err := strictObject(raw, "on", "max")
	if err != nil {
		return ContinuationPolicy{}, err
	}
	on, ok, err := jsonStrings(m, "on")
	if err != nil {
		return ContinuationPolicy{}, err
	}
	if !ok {
		return ContinuationPolicy{}, fmt.Errorf(`missing key "on"`)
	}
	c := ContinuationPolicy{On: []ContinuationCause{}, MaxExecutions: DefaultContinuationMaxExec}
	for _, v := range on {
		x := ContinuationCause(v)
		if x != ContinuePermission && x != ContinueHandoff {
			return ContinuationPolicy{}, fmt.Errorf(`cause %q is not "permission" or "handoff"`, v)
		}
		if inList(c.On, x) {
			return ContinuationPolicy{}, fmt.Errorf("cause %q listed twice", v)
		}
		c.On = append(c.On, x)
	}
	if raw, ok := m["max"]; ok {
		// A JSON number only: encoding/json would also read the string "3"
		// into a json.Number, which the reference rejects. As in
		// JavaScript, 2.0 and 2e0 are the integer 2.
		raw = []byte(strings.TrimSpace(string(raw)))
		var v float64
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &v) != nil {
			return ContinuationPolicy{}, fmt.Errorf(`"max" must be an integer from 1 to %d, got %s`, ContinuationMaxExecutions, clip(string(raw)))
		}
		if v != math.Trunc(v) || v < 1 || v > ContinuationMaxExecutions {
			return ContinuationPolicy{}, fmt.Errorf(`"max" must be an integer from 1 to %d, got %s`, ContinuationMaxExecutions, clip(string(raw)))
		}
		c.MaxExecutions = int(v)
	}
	return c, nil
}

var accessKeys = []string{"provider", "funding", "capacity", "apiSpend", "provenance", "plan", "note", "observedAt"}

func parseAccessFact(raw []byte) (AccessFact, error) {
	m, err := strictObject(raw, accessKeys...)
	if err != nil {
		return AccessFact{}, err
	}
	get := func(key string, required bool, allowed ...string) (string, error) {
		v, ok, err := jsonString(m, key)
		if err != nil {
			return "", err
		}
		if !ok {
			if required {
				return "", fmt.Errorf("missing key %q", key)
			}
			return "", nil
		}
		if len(allowed) > 0 && !inList(allowed, v) {
			return "", fmt.Errorf("%s %q is not one of %s", key, v, quotedList(allowed))
		}
		return v, nil
	}
	var f AccessFact
	var e error
	var provider, funding, apiSpend string
	provider, e = get("provider", true, stringsOf(Providers)...)
	if e == nil {
		funding, e = get("funding", true, "included", "metered", "unknown")
	}
	if e == nil {
		f.Capacity, e = get("capacity", true, "standard", "high", "unknown")
	}
	if e == nil {
		apiSpend, e = get("apiSpend", true, "deny", "approved")
	}
	if e == nil {
		f.Provenance, e = get("provenance", true, "user", "provider")
	}
	if e == nil {
		f.Plan, e = get("plan", false)
	}
	if e == nil {
		f.Note, e = get("note", false)
	}
	if e == nil {
		f.ObservedAt, e = get("observedAt", false)
	}
	if e != nil {
		return AccessFact{}, e
	}
	f.Provider, f.Funding, f.APISpend = Provider(provider), Funding(funding), APISpend(apiSpend)
	return f, nil
}

// clip shortens a raw value for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func stringsOf[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// PolicyEnabled reports whether the sheet carries saved policy: an access
// fact, a "# fallback" or "# continuation" line, or a multi-attempt seat.
// A policy-enabled sheet must name every requested role and every route's
// access fact.
func (s *Sheet) PolicyEnabled() bool {
	if len(s.Access) > 0 || s.Fallback != nil || s.Continuation != nil {
		return true
	}
	for _, r := range s.Rows {
		for _, seat := range r.Seats {
			if len(seat.Attempts) > 1 {
				return true
			}
		}
	}
	return false
}

// AccessFor returns the access fact for a provider.
func (s *Sheet) AccessFor(p Provider) (AccessFact, bool) {
	for _, f := range s.Access {
		if f.Provider == p {
			return f, true
		}
	}
	return AccessFact{}, false
}

// Render returns the sheet's exact bytes.
func (s *Sheet) Render() []byte {
	var b strings.Builder
	for i, ln := range s.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(ln.Raw)
	}
	if s.TrailingNewline {
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// VersionedClaudePins lists the distinct versioned Claude pins of rolling
// families in the sheet; the parent reports the sheet stale once per run
// when this is non-empty.
func (s *Sheet) VersionedClaudePins() []string {
	var out []string
	for _, r := range s.Rows {
		for _, seat := range r.Seats {
			for _, a := range seat.Attempts {
				if a.Kind != KindDescriptor || a.Provider != Claude {
					continue
				}
				if _, ok := VersionedClaudeAlias(a.Model); ok && !inList(out, a.String()) {
					out = append(out, a.String())
				}
			}
		}
	}
	return out
}

// StaleSheetNotice is the once-per-run notice for a sheet whose versioned
// Claude pins (VersionedClaudePins) read-time normalization replaced: which
// pins run as which family alias, that the persisted sheet is stale, and
// that /setup-pstack rewrites it. "" when pins is empty.
func StaleSheetNotice(pins []string) string {
	if len(pins) == 0 {
		return ""
	}
	pairs := make([]string, len(pins))
	for i, p := range pins {
		pairs[i] = p
		if a, err := ParseAttempt(p); err == nil {
			pairs[i] = p + " runs as " + NormalizeAttempt(a).String()
		}
	}
	return "the model sheet is stale: it pins versioned Claude IDs that read-time normalization replaces with their family alias (" +
		strings.Join(pairs, "; ") + "); the sheet file is not changed: /setup-pstack will rewrite it after its normal probes and confirmation"
}
