package policy

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// utf8BOM is the UTF-8 byte-order mark some editors write at a file's
// start.
const utf8BOM = "\ufeff"

// ParseRunSheet parses a sheet a run is about to freeze. It is stricter
// than ParseSheet (whose lenient reading the policy commands keep, as the
// reference does): a UTF-8 byte-order mark at the very start is dropped
// (ParseSheet would read the first line as prose), and every line must be
// blank, a # comment or a role row, so a row that lost its colon cannot be
// skipped silently as prose. Every problem is reported at once, one issue
// per line in line order, each naming the line number and its content. It
// returns the bytes to freeze (src without the mark) and the parsed sheet.
func ParseRunSheet(src []byte, opt Options) ([]byte, *Sheet, error) {
	if s := string(src); strings.HasPrefix(s, utf8BOM) {
		src = src[len(utf8BOM):]
	}
	sheet, err := ParseSheet(src, opt)
	var issues []string
	var pe *PolicyError
	switch {
	case errors.As(err, &pe):
		issues = append(issues, pe.Issues...)
	case err != nil:
		return nil, nil, err
	}
	if len(src) <= MaxSheetBytes {
		for i, raw := range strings.Split(strings.TrimSuffix(string(src), "\n"), "\n") {
			body := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
			if body == "" || body[0] == '#' || opt.headerAt(body) >= 0 {
				continue
			}
			if _, ok := rowLike(body); ok {
				continue // ParseSheet names the unknown header
			}
			issues = append(issues, fmt.Sprintf("line %d: %s is neither blank, a # comment nor a role row (header: attempts); add the missing colon, or start it with # to keep it as a comment",
				i+1, quoteLine(body)))
		}
	}
	if len(issues) > 0 {
		sort.SliceStable(issues, func(a, b int) bool { return issueLine(issues[a]) < issueLine(issues[b]) })
		return nil, nil, &PolicyError{Issues: issues}
	}
	return src, sheet, nil
}

// quoteLine quotes a line for an issue, cut at 80 characters.
func quoteLine(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return strconv.Quote(s)
}

// issueLine is the line number an issue starts with ("line N: "), or 0.
func issueLine(issue string) int {
	rest, ok := strings.CutPrefix(issue, "line ")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:strings.IndexFunc(rest+":", func(r rune) bool { return r < '0' || r > '9' })])
	return n
}

// HasRole reports whether role names a row of s (its header, or a leaf
// role of one present row), as Resolve finds it. An ambiguous leaf counts
// as present: Resolve explains it.
func (s *Sheet) HasRole(role string, opt Options) bool {
	row, err := s.findRole(role, opt)
	return row != nil || err != nil
}

// Roles lists the role names s configures: each row's header and leaf
// roles, in sheet order, without repeats.
func (s *Sheet) Roles(opt Options) []string {
	var out []string
	seen := map[string]bool{}
	add := func(r string) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, row := range s.Rows {
		add(row.Header)
		for _, l := range opt.Catalog[row.Catalog].Leaves {
			add(l)
		}
	}
	return out
}

// SuggestRoles returns the configured roles of s closest to role, best
// first (at most three): those that start with it or it starts with
// (ignoring case), and those within a small edit distance. None is close:
// nil.
func (s *Sheet) SuggestRoles(role string, opt Options) []string {
	want := strings.ToLower(strings.TrimSpace(role))
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, r := range s.Roles(opt) {
		lr := strings.ToLower(r)
		d := editDistance(want, lr)
		switch {
		case want != "" && (strings.HasPrefix(lr, want) || strings.HasPrefix(want, lr)):
			cands = append(cands, cand{r, min(d, 1)})
		case d <= max(2, utf8.RuneCountInString(want)/4):
			cands = append(cands, cand{r, d})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].dist < cands[b].dist })
	var out []string
	for i := 0; i < len(cands) && i < 3; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by rune.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
