package quota

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// geminiParseCases maps every Gemini quota fixture (and every other body
// fixture, which is not a quota answer) to its snapshot.
func geminiParseCases() map[string]policy.CapacitySnapshot {
	bad := unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow)
	day := at("2026-08-22T00:00:00Z")
	return map[string]policy.CapacitySnapshot{
		// remainingFraction is what is LEFT: used = 100×(1−f)
		"quota_ok.json": measured(policy.Gemini,
			win("gemini-2.5-pro", pct(13), 0, day),
			win("gemini-2.5-flash", pct(0), 0, day),
			win("gemini-2.5-flash-lite", pct(75), 0, at("2026-08-22T00:30:00.5Z")),
			win("gemini-2.5-pro/tokens", pct(60), 0, day)),
		"quota_exhausted.json": measured(policy.Gemini,
			win("gemini-2.5-pro", pct(100), 0, day),
			win("gemini-2.5-flash", pct(99.2), 0, day)),
		// no modelId, no fraction, an empty modelId: skipped as the CLI does
		"quota_skipped.json": measured(policy.Gemini, win("gemini-2.5-flash", pct(50), 0, nil)),
		// model ids that are not plain labels are named by position
		"quota_odd_model_id.json": measured(policy.Gemini,
			win("bucket#0", pct(25), 0, nil),
			win("bucket#1", pct(50), 0, nil)),
		"quota_empty.json":                     measured(policy.Gemini),
		"quota_all_skipped.json":               bad,
		"quota_no_buckets.json":                bad,
		"quota_buckets_null.json":              bad,
		"quota_fraction_out_of_range.json":     bad,
		"quota_negative_fraction.json":         bad,
		"quota_bad_reset.json":                 bad,
		"quota_wrong_type.json":                bad,
		"quota_bucket_not_object.json":         bad,
		"quota_truncated.json":                 bad,
		"quota_not_object.json":                bad,
		"error_429_quota_exhausted.json":       bad,
		"error_429_rate_limit.json":            bad,
		"error_403_permission_denied.json":     bad,
		"error_401_unauthenticated.json":       bad,
		"load_code_assist.json":                bad,
		"load_code_assist_project_object.json": bad,
		"load_code_assist_no_project.json":     bad,
		"load_code_assist_bad_project.json":    bad,
	}
}

// geminiLoadCases maps the loadCodeAssist fixtures to the project read.
var geminiLoadCases = map[string]struct {
	project string
	ok      bool
}{
	"load_code_assist.json":                {"proj-SNTL-33d2", true},
	"load_code_assist_project_object.json": {"proj-SNTL-33d2", true},
	"load_code_assist_no_project.json":     {"", true},
	"load_code_assist_bad_project.json":    {"", false},
	"quota_not_object.json":                {"", false},
	"quota_truncated.json":                 {"", false},
}

// geminiCredentialCases maps every Gemini credential fixture to the token
// (or the reason) readGeminiToken gives.
var geminiCredentialCases = map[string]struct {
	token  string
	reason policy.CapacityReason
}{
	"oauth_creds.json":           {token: "tok-SNTL-9c1e"},
	"oauth_creds_expired.json":   {reason: policy.CapacityReasonTokenExpired},
	"oauth_creds_no_token.json":  {reason: policy.CapacityReasonNoCredentials},
	"oauth_creds_malformed.json": {reason: policy.CapacityReasonNoCredentials},
}

func TestParseGeminiQuotaFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range geminiParseCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireSnapshot(t, want, ParseGeminiQuota(fixture(t, "gemini", name), testNow))
		})
	}
}

func TestParseLoadCodeAssistFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range geminiLoadCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			project, ok := parseLoadCodeAssist(fixture(t, "gemini", name))
			require.Equal(t, want.ok, ok)
			require.Equal(t, want.project, project)
		})
	}
}

func TestGeminiFixturesAllTabled(t *testing.T) {
	t.Parallel()
	parse := geminiParseCases()
	for _, name := range fixtureNames(t, "gemini") {
		_, p := parse[name]
		_, c := geminiCredentialCases[name]
		require.True(t, p || c, "fixture %s is in no table", name)
	}
}

func TestParseGeminiQuotaEdges(t *testing.T) {
	t.Parallel()
	bad := unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow)
	for name, tc := range map[string]struct {
		body string
		want policy.CapacitySnapshot
	}{
		"empty":           {"", bad},
		"null":            {"null", bad},
		"buckets object":  {`{"buckets":{}}`, bad},
		"fraction bounds": {`{"buckets":[{"modelId":"m","remainingFraction":1},{"modelId":"n","remainingFraction":0}]}`, measured(policy.Gemini, win("m", pct(0), 0, nil), win("n", pct(100), 0, nil))},
		"same model twice, no tokenType": {`{"buckets":[{"modelId":"m","remainingFraction":0.5},{"modelId":"m","remainingFraction":0.25}]}`,
			measured(policy.Gemini, win("m", pct(50), 0, nil), win("m#1", pct(75), 0, nil))},
		"modelId not string": {`{"buckets":[{"modelId":5,"remainingFraction":0.5}]}`, bad},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireSnapshot(t, tc.want, ParseGeminiQuota([]byte(tc.body), testNow))
		})
	}
}
