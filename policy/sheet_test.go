package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func readSheet(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/sheets/" + name)
	require.NoError(t, err)
	return b
}

func mustParse(t testing.TB, src string) *Sheet {
	t.Helper()
	s, err := ParseSheet([]byte(src), DefaultOptions())
	require.NoError(t, err)
	return s
}

func TestParseSheetFull(t *testing.T) {
	t.Parallel()
	s, err := ParseSheet(readSheet(t, "full.sheet"), DefaultOptions())
	require.NoError(t, err)
	require.Len(t, s.Rows, 15)
	require.Len(t, s.Access, 3)
	require.Equal(t, &FallbackPolicy{On: []Outcome{OutcomeUsageExhausted, OutcomeRouteUnavailable}}, s.Fallback)
	require.Nil(t, s.Continuation)
	require.Equal(t, []string{"keep the panel on subscriptions"}, s.Budgets)
	require.True(t, s.PolicyEnabled())
	require.Equal(t, []string{"claude:claude-opus-4-5@max"}, s.VersionedClaudePins())
	arena := s.Rows[10]
	require.Equal(t, "arena runners", arena.Header)
	require.Len(t, arena.Seats, 3)
	require.Equal(t, "grok:grok-4.7@xhigh -> codex:gpt-5.6-sol@max", arena.Seats[0].Text)
	require.Len(t, arena.Seats[0].Attempts, 2)
}

func TestRenderIsByteIdentical(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"full.sheet", "legacy-crlf.sheet"} {
		src := readSheet(t, name)
		s, err := ParseSheet(src, DefaultOptions())
		require.NoError(t, err, name)
		require.Equal(t, string(src), string(s.Render()), name)
	}
	for _, src := range []string{"", "\n", "\n\n", "# only a comment", "how explorer: auto\n\n"} {
		require.Equal(t, src, string(mustParse(t, src).Render()), "%q", src)
	}
}

func TestParseSheetRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		src    string
		header string
		seats  []string
	}{
		{"header with commas", "feature, refactoring: grok:g@high", "feature, refactoring", []string{"grok:g@high"}},
		{"no space after colon", "bug-fix:grok:g@high", "bug-fix", []string{"grok:g@high"}},
		{"tab after colon", "bug-fix:\tgrok:g@high", "bug-fix", []string{"grok:g@high"}},
		{"two spaces after colon", "bug-fix:  grok:g@high", "bug-fix", []string{"grok:g@high"}},
		{"longest header wins", "reflect tooling, judgment, divergent, synthesizer: auto", "reflect tooling, judgment, divergent, synthesizer", []string{"auto"}},
		{"duplicate seats allowed across a panel", "arena runners: grok:a@high, grok:a@high", "arena runners", []string{"grok:a@high", "grok:a@high"}},
		{"three-attempt chain", "swarm workers: grok:g@high -> codex:c@high -> auto", "swarm workers", []string{"grok:g@high -> codex:c@high -> auto"}},
		{"CRLF line", "bug-fix: grok:g@high\r\n", "bug-fix", []string{"grok:g@high"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.src)
			require.Len(t, s.Rows, 1)
			require.Equal(t, tc.header, s.Rows[0].Header)
			var seats []string
			for _, seat := range s.Rows[0].Seats {
				seats = append(seats, seat.Text)
			}
			require.Equal(t, tc.seats, seats)
		})
	}
}

func TestParseSheetKeepsProse(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "see https://example.com/x for details\nbug-fix: auto\n# note: access: nothing here\n#fallback: not a directive without the space\n")
	require.Equal(t, []LineKind{LineText, LineRow, LineComment, LineBlank}[:3], []LineKind{s.Lines[0].Kind, s.Lines[1].Kind, s.Lines[2].Kind})
	require.Empty(t, s.Access)
	require.Nil(t, s.Fallback)
}

func TestParseSheetDirectives(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `# continuation: {"on":["permission"]}
# fallback: {"on":[]}
# access: {"provider":"devin","funding":"metered","capacity":"unknown","apiSpend":"approved","provenance":"user","note":"n","observedAt":"2026-11-01"}
# recorded by setup # access: {"provider":"cursor","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"provider"}
`)
	require.Equal(t, &ContinuationPolicy{On: []ContinuationCause{ContinuePermission}, MaxExecutions: 2}, s.Continuation, "max defaults to 2")
	require.Equal(t, &FallbackPolicy{On: []Outcome{}}, s.Fallback, "an empty on list is legal")
	require.Equal(t, []AccessFact{
		{Provider: Devin, Funding: FundingMetered, Capacity: "unknown", APISpend: APISpendApproved, Provenance: "user", Note: "n", ObservedAt: "2026-11-01"},
		{Provider: Cursor, Funding: FundingIncluded, Capacity: "standard", APISpend: APISpendDeny, Provenance: "provider"},
	}, s.Access, "access facts match anywhere in a comment")
	c := mustParse(t, `# continuation: {"on":["permission","handoff"],"max":4}`)
	require.Equal(t, 4, c.Continuation.MaxExecutions)
	c = mustParse(t, `# continuation: {"on":["handoff"],"max":3.0}`)
	require.Equal(t, 3, c.Continuation.MaxExecutions, "an integral number is an integer, as in JavaScript")
}

// TestParseSheetIndentedAccess: POLICY-CLI section 4, second pass: an
// access comment may be indented and needs no space after "access:"; it
// records the same fact as one at the start of its line, and a sheet
// renders back byte for byte.
func TestParseSheetIndentedAccess(t *testing.T) {
	t.Parallel()
	want := []AccessFact{{Provider: Grok, Funding: FundingIncluded, Capacity: "standard", APISpend: APISpendDeny, Provenance: "user"}}
	const fact = `{"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`
	for _, line := range []string{"# access: " + fact, "# access:" + fact, "   # access:" + fact, "\t# access: " + fact, "  # set by hand # access:" + fact} {
		src := line + "\nhillclimb: grok:grok-4.7@xhigh\n"
		s := mustParse(t, src)
		require.Equal(t, want, s.Access, "line %q", line)
		require.Equal(t, LineComment, s.Lines[0].Kind, "line %q", line)
		require.Equal(t, src, string(s.Render()))
	}
	_, err := ParseSheet([]byte("   # access:{\"provider\":\"grok\"}\n"), DefaultOptions())
	require.ErrorContains(t, err, "line 1: # access:", "an indented access fact is checked like any other")
}

// TestParseSheetIndentedProse: an indented line without the "name:" shape
// is neither a row nor a comment, so it is prose kept verbatim; trailing
// space never matters.
func TestParseSheetIndentedProse(t *testing.T) {
	t.Parallel()
	src := "  # plain indented note\n\tsee https://example.com/x\nbug-fix: auto  \t\n   \n"
	s := mustParse(t, src)
	require.Equal(t, []LineKind{LineText, LineText, LineRow, LineBlank}, []LineKind{s.Lines[0].Kind, s.Lines[1].Kind, s.Lines[2].Kind, s.Lines[3].Kind})
	require.Equal(t, src, string(s.Render()))
}

func TestParseSheetErrors(t *testing.T) {
	t.Parallel()
	const fact = `{"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`
	cases := []struct{ name, src, msg string }{
		{"unknown header", "arena judges: grok:g@high", `line 1: unknown role row header "arena judges"`},
		{"leaf role is not a header", "feature: grok:g@high", `unknown role row header "feature"`},
		{"unknown header at end of line", "notes:", `unknown role row header "notes"`},
		{"repeated row", "bug-fix: auto\nbug-fix: auto", "line 2: role row \"bug-fix\" repeats line 1"},
		{"empty seat", "arena runners: grok:g@high, ", "seat 2 is empty"},
		{"empty right-hand side", "bug-fix:", "seat 1 is empty"},
		{"empty attempt", "bug-fix: grok:g@high -> ", "seat 1 attempt 2 is empty"},
		{"four attempts", "bug-fix: grok:g@high -> codex:c@high -> claude:opus@max -> devin:swe-2@high", "has 4 attempts; a chain holds at most 3"},
		{"duplicate attempt", "bug-fix: auto -> auto", "repeats attempt auto"},
		{"same provider twice", "bug-fix: grok:a@high -> grok:b@high", "second grok attempt"},
		{"versioned and alias pin repeat", "bug-fix: claude:opus@max -> claude:claude-opus-4-5@max", "repeats attempt claude:claude-opus-4-5@max"},
		{"two aliases", "bug-fix: auto -> inherit-parent", "more than one alias"},
		{"non-panel with two seats", "bug-fix: grok:g@high, codex:c@high", "not a panel row; it takes exactly one seat, got 2"},
		{"native-only row with descriptor", "why investigators, synthesizer: grok:g@high", "requires the parent's live MCP surface"},
		{"bad attempt", "bug-fix: grok:g@warp", `unknown effort "warp"`},
		{"second fallback", "# fallback: {\"on\":[]}\n# fallback: {\"on\":[]}", "line 2: second # fallback line"},
		{"fallback unknown outcome", `# fallback: {"on":["failed"]}`, `outcome "failed" cannot advance a fallback`},
		{"fallback duplicate outcome", `# fallback: {"on":["usage-exhausted","usage-exhausted"]}`, "listed twice"},
		{"fallback unknown key", `# fallback: {"on":[],"off":[]}`, `unknown key "off"`},
		{"fallback wrong key case", `# fallback: {"On":[]}`, `unknown key "On"`},
		{"fallback missing on", `# fallback: {}`, `missing key "on"`},
		{"fallback not JSON", `# fallback: on quota`, "not JSON"},
		{"fallback trailing data", `# fallback: {"on":[]} x`, "trailing data"},
		{"fallback on not array", `# fallback: {"on":"usage-exhausted"}`, "must be an array of strings"},
		{"second continuation", "# continuation: {\"on\":[]}\n# continuation: {\"on\":[]}", "second # continuation line"},
		{"continuation max too big", `# continuation: {"on":["handoff"],"max":5}`, `"max" must be an integer from 1 to 4, got 5`},
		{"continuation max zero", `# continuation: {"on":["handoff"],"max":0}`, "from 1 to 4"},
		{"continuation max fraction", `# continuation: {"on":["handoff"],"max":1.5}`, "from 1 to 4"},
		{"continuation unknown cause", `# continuation: {"on":["guard"]}`, `cause "guard"`},
		// Section 4: validate strictness the first implementation lacked.
		{"continuation max as a string", `# continuation: {"on":["handoff"],"max":"3"}`, `"max" must be an integer from 1 to 4, got "3"`},
		{"continuation max null", `# continuation: {"on":["handoff"],"max":null}`, `"max" must be an integer from 1 to 4, got null`},
		{"continuation max boolean", `# continuation: {"on":["handoff"],"max":true}`, `"max" must be an integer from 1 to 4, got true`},
		{"indented row header", "bug-fix: auto\n  how explorer: auto", `line 2: unknown role row header "  how explorer": the line is indented`},
		{"tab-indented row header", "\tbug-fix: auto", `line 1: unknown role row header "\tbug-fix"`},
		{"indented directive comment", `  # fallback: {"on":[]}`, `line 1: unknown role row header "  # fallback"`},
		{"indented comment with a colon", "  # note: keep grok first", `unknown role row header "  # note"`},
		{"opencode auto provider in a row", "how explorer: opencode:auto/gpt-5@default", "opencode has no auto provider or model"},
		{"antigravity Auto model in a row", "how explorer: antigravity:Auto@default", "antigravity has no auto model"},
		{"access unknown key", `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user","token":"x"}`, `unknown key "token"`},
		{"access missing provenance", `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny"}`, `missing key "provenance"`},
		{"access bad funding", `# access: {"provider":"grok","funding":"free","capacity":"standard","apiSpend":"deny","provenance":"user"}`, `funding "free" is not one of`},
		{"access unknown provider", `# access: {"provider":"gemini","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`, `provider "gemini" is not one of`},
		{"access not JSON", `# access: grok is fine`, "not JSON"},
		{"access not an object", `# access: ["grok"]`, "want a JSON object"},
		{"access later in a comment is still parsed", `# setup note # access: {"provider":"grok"}`, `missing key "funding"`},
		{"access duplicate key", `# access: {"provider":"grok","provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`, `duplicate key "provider"`},
		{"access twice for a provider", "# access: " + fact + "\n# access: " + fact, "line 2: # access: second access fact for provider grok"},
		{"oversize", strings.Repeat("#", MaxSheetBytes+1), "the limit is 1048576"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSheet([]byte(tc.src), DefaultOptions())
			require.Error(t, err)
			require.True(t, IsPolicy(err), "want a PolicyError, got %T", err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestParseSheetReportsEveryIssue(t *testing.T) {
	t.Parallel()
	_, err := ParseSheet([]byte("bug-fix: grok:g@warp\nnotes: x\n# fallback: {}\n"), DefaultOptions())
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Issues, 3)
	require.True(t, strings.HasPrefix(pe.Issues[0], "line 1: "))
	require.True(t, strings.HasPrefix(pe.Issues[1], "line 2: "))
	require.True(t, strings.HasPrefix(pe.Issues[2], "line 3: "))
}

func TestPolicyEnabled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string
		want bool
	}{
		{"single attempts only", "bug-fix: grok:g@high\narena runners: auto, codex:c@high", false},
		{"chain", "bug-fix: grok:g@high -> auto", true},
		{"fallback line", `# fallback: {"on":[]}`, true},
		{"continuation line", `# continuation: {"on":["handoff"]}`, true},
		{"access fact", `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`, true},
		{"budget only", "# budget: 10 USD", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, mustParse(t, tc.src).PolicyEnabled())
		})
	}
}

func BenchmarkParseSheet(b *testing.B) {
	src := readSheet(b, "full.sheet")
	opt := DefaultOptions()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSheet(src, opt); err != nil {
			b.Fatal(err)
		}
	}
}
