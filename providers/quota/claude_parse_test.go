package quota

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// claudeParseCases maps every Claude payload fixture to its snapshot.
func claudeParseCases() map[string]policy.CapacitySnapshot {
	week := 7 * 24 * 60
	bad := unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow)
	return map[string]policy.CapacitySnapshot{
		"usage_full.json": measured(policy.Claude,
			win("5h", pct(61), 300, at("2026-08-22T07:59:59.571404Z")),
			win("7d", pct(22), week, at("2026-08-27T03:00:00Z")),
			win("7d-sonnet", pct(1), week, at("2026-08-27T03:00:00Z")),
			win("limit/session", pct(42.5), 0, at("2026-08-22T07:59:59.571404Z")),
			win("limit/weekly_all", pct(22), 0, at("2026-08-27T03:00:00Z")),
			win("limit/weekly_scoped/Claude Opus 4.5", pct(57), 0, at("2026-08-27T03:00:00Z"))),
		// the older shape: no limits; offsets other than UTC normalised
		"usage_windows_only.json": measured(policy.Claude,
			win("5h", pct(8), 300, at("2026-08-22T02:00:00.123Z")),
			win("7d", pct(47), week, at("2026-08-25T07:00:00Z")),
			win("7d-opus", pct(0), week, nil)),
		// a null percentage stays absent, never 0
		"usage_nulls.json": measured(policy.Claude,
			win("5h", nil, 300, nil),
			win("7d", pct(0), week, nil),
			win("limit/session", nil, 0, nil)),
		// every window null before the first message: measured, nothing used
		"usage_fresh.json": measured(policy.Claude),
		"usage_exhausted.json": measured(policy.Claude,
			win("5h", pct(100), 300, at("2026-08-22T07:59:59Z")),
			win("7d", pct(100), week, at("2026-08-27T03:00:00Z")),
			win("7d-sonnet", pct(64), week, at("2026-08-27T03:00:00Z")),
			win("limit/session", pct(100), 0, at("2026-08-22T07:59:59Z"))),
		// over the limit is exhausted: clamped to 100
		"usage_over_limit.json": measured(policy.Claude,
			win("5h", pct(100), 300, at("2026-08-22T07:59:59Z")),
			win("7d", pct(99.5), week, at("2026-08-27T03:00:00Z"))),
		// scope labels: a surface, a display name that is not a label
		// (dropped), a repeated name, a kind that is not a label
		"usage_limits_scopes.json": measured(policy.Claude,
			win("limit/weekly_scoped/claude_code", pct(12), 0, at("2026-08-27T03:00:00Z")),
			win("limit/weekly_scoped", pct(30), 0, at("2026-08-27T03:00:00Z")),
			win("limit/weekly_scoped/Claude Sonnet 4.5", pct(31), 0, at("2026-08-27T03:00:00Z")),
			win("limit/weekly_scoped/Claude Sonnet 4.5#3", pct(32), 0, at("2026-08-27T03:00:00Z")),
			win("limit/#4", pct(5), 0, nil),
			win("limit/future_kind", pct(1.25), 0, nil)),
		"usage_not_object.json":         bad,
		"usage_truncated.json":          bad,
		"usage_unrelated.json":          bad, // extra_usage alone is no quota window
		"usage_wrong_type.json":         bad,
		"usage_window_not_object.json":  bad,
		"usage_negative.json":           bad,
		"usage_bad_reset.json":          bad,
		"usage_limit_without_kind.json": bad,
		"usage_limits_not_array.json":   bad,
		"error_401.json":                bad,
		"error_403.json":                bad,
		"error_429.json":                bad,
	}
}

// claudeCredentialCases maps every Claude credential fixture to the token
// (or the reason) readClaudeToken gives.
var claudeCredentialCases = map[string]struct {
	token  string
	reason policy.CapacityReason
}{
	"credentials.json":                {token: "tok-SNTL-9c1e"},
	"credentials_no_scopes.json":      {token: "tok-SNTL-9c1e"}, // scopes unknown: the endpoint decides
	"credentials_inference_only.json": {reason: policy.CapacityReasonTokenLacksScope},
	"credentials_expired.json":        {reason: policy.CapacityReasonTokenExpired},
	"credentials_no_token.json":       {reason: policy.CapacityReasonNoCredentials},
	"credentials_malformed.json":      {reason: policy.CapacityReasonNoCredentials},
}

func TestParseClaudeUsageFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range claudeParseCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireSnapshot(t, want, ParseClaudeUsage(fixture(t, "claude", name), testNow))
		})
	}
}

// Every fixture in the Claude directory is in one of the tables, so none
// goes untested.
func TestClaudeFixturesAllTabled(t *testing.T) {
	t.Parallel()
	parse := claudeParseCases()
	for _, name := range fixtureNames(t, "claude") {
		_, p := parse[name]
		_, c := claudeCredentialCases[name]
		require.True(t, p || c, "fixture %s is in no table", name)
	}
}

func TestParseClaudeUsageEdges(t *testing.T) {
	t.Parallel()
	bad := unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow)
	for name, tc := range map[string]struct {
		body string
		want policy.CapacitySnapshot
	}{
		"empty":            {"", bad},
		"null":             {"null", bad},
		"empty object":     {"{}", bad},
		"limits null only": {`{"limits":null}`, measured(policy.Claude)},
		"window array":     {`{"five_hour":[61]}`, bad},
		"percent string":   {`{"limits":[{"kind":"session","percent":"42"}]}`, bad},
		"limit not object": {`{"limits":[42]}`, bad},
		"kind not string":  {`{"limits":[{"kind":7,"percent":1}]}`, bad},
		"scope odd shape":  {`{"limits":[{"kind":"session","percent":1,"scope":[1]}]}`, measured(policy.Claude, win("limit/session", pct(1), 0, nil))},
		"long kind":        {`{"limits":[{"kind":"` + strings.Repeat("k", 65) + `","percent":1}]}`, measured(policy.Claude, win("limit/#0", pct(1), 0, nil))},
		"trailing garbage": {`{"five_hour":null} x`, bad},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireSnapshot(t, tc.want, ParseClaudeUsage([]byte(tc.body), testNow))
		})
	}
}
