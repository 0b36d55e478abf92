package quota

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// codexFixtureDir holds one redacted app-server session per shape and
// error of QUOTA-PROTOCOLS §1: {"account/read": reply, "account/rateLimits/read": reply}.
const codexFixtureDir = "../testdata/quota/codex"

// codexSentinels are ELIG.md's planted values; none may reach an output.
var codexSentinels = []string{
	"acct-SNTL-7f3a", "user-SNTL-51c0", "sntl.user@example.invalid", "4242.17", "SNTL-4242",
	"tok-SNTL-9c1e", "proj-SNTL-33d2", "SNTL",
}

var codexObserved = time.Date(2026, 9, 20, 12, 0, 0, 0, time.UTC)

type codexFixture struct {
	Note       string          `json:"_note"`
	Account    json.RawMessage `json:"account/read"`
	RateLimits json.RawMessage `json:"account/rateLimits/read"`
}

func loadCodexFixture(t testing.TB, name string) codexFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(codexFixtureDir, name+".json"))
	require.NoError(t, err)
	var f codexFixture
	require.NoError(t, json.Unmarshal(b, &f))
	require.NotEmpty(t, f.RateLimits, "%s has no account/rateLimits/read reply", name)
	return f
}

func codexFixtureReport(t testing.TB, name string) policy.CapacityReport {
	t.Helper()
	f := loadCodexFixture(t, name)
	return ParseCodexReplies(f.Account, f.RateLimits, codexObserved)
}

// codexRateLimitsResult returns a fixture's rate-limits result object for
// editing.
func codexRateLimitsResult(t testing.TB, name string) map[string]any {
	t.Helper()
	var reply struct {
		Result map[string]any `json:"result"`
	}
	require.NoError(t, json.Unmarshal(loadCodexFixture(t, name).RateLimits, &reply))
	require.NotNil(t, reply.Result)
	return reply.Result
}

func codexParseEdited(t testing.TB, result map[string]any) (policy.CapacitySnapshot, policy.ExecutionEligibility) {
	t.Helper()
	b, err := json.Marshal(result)
	require.NoError(t, err)
	return ParseCodexRateLimits(b, codexObserved)
}

func ptr[T any](v T) *T { return &v }

func unix(s int64) *time.Time { return ptr(time.Unix(s, 0).UTC()) }

// healthyWindows are the 5h and weekly windows of the eligible fixture.
var healthyWindows = []policy.CapacityWindow{
	{Name: "5h", UsedPercent: ptr(42.0), WindowMinutes: ptr(300), ResetsAt: unix(1790000000)},
	{Name: "7d", UsedPercent: ptr(87.0), WindowMinutes: ptr(10080), ResetsAt: unix(1790400000)},
}

type codexWant struct {
	state    policy.CapacityState
	reason   policy.CapacityReason
	signedIn *bool
	windows  []policy.CapacityWindow
	elig     policy.EligibilityState
	reasons  []policy.EligibilityReason
}

var codexFixtureWants = map[string]codexWant{
	"eligible-plus": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityEligible},
	"credits-present": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityPolicyBlocked, reasons: []policy.EligibilityReason{policy.EligibilityReasonCreditsPresent}},
	"rate-limit-reached": {state: policy.CapacityMeasured, signedIn: ptr(true),
		windows: []policy.CapacityWindow{
			{Name: "5h", UsedPercent: ptr(100.0), WindowMinutes: ptr(300), ResetsAt: unix(1790000000)},
			healthyWindows[1],
		},
		elig:    policy.EligibilityAllowanceUnavailable,
		reasons: []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageNotAllowed, policy.EligibilityReasonRateLimitReached, policy.EligibilityReasonWindowExhausted}},
	"spend-control-reached": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityAllowanceUnavailable, reasons: []policy.EligibilityReason{policy.EligibilityReasonSpendControlReached, policy.EligibilityReasonRateLimitReached}},
	"spend-control-null": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonSpendControlUnknown}},
	"individual-limit-exhausted": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityAllowanceUnavailable, reasons: []policy.EligibilityReason{policy.EligibilityReasonIndividualLimitExhausted}},
	"upsell-present": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityAllowanceUnavailable, reasons: []policy.EligibilityReason{policy.EligibilityReasonUpsellPresent}},
	"ordinary-usage-missing-v0145": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnsupported}},
	"ordinary-usage-false": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityAllowanceUnavailable, reasons: []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageNotAllowed}},
	"primary-100": {state: policy.CapacityMeasured, signedIn: ptr(true),
		windows: []policy.CapacityWindow{
			{Name: "5h", UsedPercent: ptr(100.0), WindowMinutes: ptr(300), ResetsAt: unix(1790000000)},
			healthyWindows[1],
		},
		elig: policy.EligibilityAllowanceUnavailable, reasons: []policy.EligibilityReason{policy.EligibilityReasonWindowExhausted}},
	"credits-missing": {state: policy.CapacityMeasured, signedIn: ptr(true), windows: healthyWindows,
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
	"weekly-only": {state: policy.CapacityMeasured, signedIn: ptr(true),
		windows: []policy.CapacityWindow{{Name: "7d", UsedPercent: ptr(12.0), WindowMinutes: ptr(10080), ResetsAt: unix(1790400000)}},
		elig:    policy.EligibilityEligible},
	"logged-out": {state: policy.CapacityUnknown, reason: policy.CapacityReasonNotSignedIn, signedIn: ptr(false),
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonNotSignedIn}},
	"signed-out-0.171.0": {state: policy.CapacityUnknown, reason: policy.CapacityReasonNotSignedIn, signedIn: ptr(false),
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonNotSignedIn}},
	"api-key": {state: policy.CapacityUnknown, reason: policy.CapacityReasonNoPlanQuota, signedIn: ptr(true),
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}},
	"backend-error": {state: policy.CapacityUnknown, reason: policy.CapacityReasonBackendError, signedIn: ptr(true),
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}},
	"malformed": {state: policy.CapacityUnknown, reason: policy.CapacityReasonUnparseable, signedIn: ptr(true),
		elig: policy.EligibilityUnknown, reasons: []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}},
}

// TestCodexFixtures asserts every fixture's snapshot and eligibility, and
// that every fixture on disk has an expectation (and the reverse).
func TestCodexFixtures(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(codexFixtureDir, "*.json"))
	require.NoError(t, err)
	var onDisk []string
	for _, n := range names {
		onDisk = append(onDisk, strings.TrimSuffix(filepath.Base(n), ".json"))
	}
	var want []string
	for n := range codexFixtureWants {
		want = append(want, n)
	}
	slices.Sort(want)
	require.Equal(t, want, onDisk, "fixtures on disk and expectations differ")

	for name, w := range codexFixtureWants {
		t.Run(name, func(t *testing.T) {
			rep := codexFixtureReport(t, name)
			assertCodexReport(t, rep, w)
		})
	}
}

func assertCodexReport(t *testing.T, rep policy.CapacityReport, w codexWant) {
	t.Helper()
	assert.Equal(t, policy.CapacitySchemaVersion, rep.SchemaVersion)
	assert.Equal(t, policy.Codex, rep.Provider)
	assert.Nil(t, rep.LearnedExhaustion)
	s := rep.Snapshot
	assert.Equal(t, policy.CapacitySchemaVersion, s.SchemaVersion)
	assert.Equal(t, policy.Codex, s.Provider)
	assert.Equal(t, policy.QuotaLiveRPC, s.Source)
	assert.Equal(t, w.state, s.State)
	assert.Equal(t, w.reason, s.Reason)
	assert.Equal(t, w.signedIn, s.SignedIn)
	assert.Equal(t, w.windows, s.Windows)
	assert.Equal(t, codexObserved, s.AcquiredAt)
	require.NotNil(t, rep.Eligibility)
	e := rep.Eligibility
	assert.Equal(t, policy.EligibilitySchemaVersion, e.SchemaVersion)
	assert.Equal(t, policy.Codex, e.Provider)
	assert.Equal(t, w.elig, e.State)
	assert.Equal(t, w.reasons, e.Reasons)
	assert.Equal(t, codexObserved, e.ObservedAt)
}

// Criterion 1: credits.hasCredits=true → policy_blocked even when the
// windows are healthy, and it outranks every blocker and unknown.
func TestCodexCriterion1CreditsPresentIsPolicyBlocked(t *testing.T) {
	snap, elig := ParseCodexRateLimits(mustResult(t, "credits-present"), codexObserved)
	assert.Equal(t, policy.CapacityMeasured, snap.State)
	assert.Equal(t, healthyWindows, snap.Windows)
	assert.Equal(t, policy.EligibilityPolicyBlocked, elig.State)
	assert.Equal(t, []policy.EligibilityReason{policy.EligibilityReasonCreditsPresent}, elig.Reasons)

	// Credits plus every blocker and an unknown: still policy_blocked,
	// every reason listed in vocabulary order.
	r := codexRateLimitsResult(t, "credits-present")
	rl := r["rateLimits"].(map[string]any)
	rl["spendControlReached"] = nil
	rl["rateLimitReachedType"] = "rate_limit_reached"
	rl["primary"].(map[string]any)["usedPercent"] = 100
	r["rateLimitUpsell"] = map[string]any{"kind": "x"}
	r["ordinaryUsageAllowed"] = false
	_, elig = codexParseEdited(t, r)
	assert.Equal(t, policy.EligibilityPolicyBlocked, elig.State)
	assert.Equal(t, []policy.EligibilityReason{policy.EligibilityReasonCreditsPresent, policy.EligibilityReasonOrdinaryUsageNotAllowed, policy.EligibilityReasonSpendControlUnknown,
		policy.EligibilityReasonRateLimitReached, policy.EligibilityReasonUpsellPresent, policy.EligibilityReasonWindowExhausted}, elig.Reasons)
}

// Criterion 2: hasCredits missing or unreadable, ordinaryUsageAllowed not
// explicitly true, or spendControlReached unknown → unknown (the gate's
// execution_unverified), fail closed, each with its own reason.
func TestCodexCriterion2MissingEvidenceIsUnverified(t *testing.T) {
	cases := map[string]struct {
		edit func(r, rl map[string]any)
		want []policy.EligibilityReason
	}{
		"hasCredits missing":    {func(_, rl map[string]any) { delete(rl["credits"].(map[string]any), "hasCredits") }, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
		"hasCredits null":       {func(_, rl map[string]any) { rl["credits"].(map[string]any)["hasCredits"] = nil }, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
		"hasCredits unreadable": {func(_, rl map[string]any) { rl["credits"].(map[string]any)["hasCredits"] = "false" }, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
		"credits null":          {func(_, rl map[string]any) { rl["credits"] = nil }, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
		"credits not an object": {func(_, rl map[string]any) { rl["credits"] = []any{} }, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown}},
		// Read generation-aware: absent from a result of the generation
		// that carries it (accountId, rateLimitUpsell or normalModelSlug
		// present, even null) the backend withheld it; absent from an
		// older generation's result, that CLI cannot say.
		"ordinaryUsageAllowed missing": {func(r, _ map[string]any) { delete(r, "ordinaryUsageAllowed") }, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown}},
		"ordinaryUsageAllowed missing beside a null upsell only": {func(r, _ map[string]any) {
			delete(r, "ordinaryUsageAllowed")
			delete(r, "accountId")
			delete(r, "normalModelSlug")
		}, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown}},
		"ordinaryUsageAllowed missing from an older generation": {func(r, _ map[string]any) {
			for _, k := range []string{"ordinaryUsageAllowed", "accountId", "rateLimitUpsell", "normalModelSlug"} {
				delete(r, k)
			}
		}, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnsupported}},
		"ordinaryUsageAllowed null in an older generation's shape": {func(r, _ map[string]any) {
			for _, k := range []string{"accountId", "rateLimitUpsell", "normalModelSlug"} {
				delete(r, k)
			}
			r["ordinaryUsageAllowed"] = nil
		}, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown}},
		"ordinaryUsageAllowed null":   {func(r, _ map[string]any) { r["ordinaryUsageAllowed"] = nil }, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown}},
		"ordinaryUsageAllowed string": {func(r, _ map[string]any) { r["ordinaryUsageAllowed"] = "true" }, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown}},
		"spendControlReached missing": {func(_, rl map[string]any) { delete(rl, "spendControlReached") }, []policy.EligibilityReason{policy.EligibilityReasonSpendControlUnknown}},
		"spendControlReached null":    {func(_, rl map[string]any) { rl["spendControlReached"] = nil }, []policy.EligibilityReason{policy.EligibilityReasonSpendControlUnknown}},
		"all three unknown": {func(r, rl map[string]any) {
			delete(r, "ordinaryUsageAllowed")
			delete(rl, "spendControlReached")
			delete(rl, "credits")
		}, []policy.EligibilityReason{policy.EligibilityReasonCreditsUnknown, policy.EligibilityReasonOrdinaryUsageUnknown, policy.EligibilityReasonSpendControlUnknown}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := codexRateLimitsResult(t, "eligible-plus")
			c.edit(r, r["rateLimits"].(map[string]any))
			snap, elig := codexParseEdited(t, r)
			assert.Equal(t, policy.CapacityMeasured, snap.State, "the windows are still measured")
			assert.Equal(t, policy.EligibilityUnknown, elig.State)
			assert.Equal(t, c.want, elig.Reasons)
		})
	}
	for _, name := range []string{"ordinary-usage-missing-v0145", "spend-control-null", "credits-missing"} {
		assert.Equal(t, policy.EligibilityUnknown, codexFixtureReport(t, name).Eligibility.State, name)
	}
}

// Criterion 3: every blocker or exhaustion → allowance_unavailable, and it
// outranks unknown evidence.
func TestCodexCriterion3BlockersAreAllowanceUnavailable(t *testing.T) {
	cases := map[string]struct {
		edit func(r, rl map[string]any)
		want []policy.EligibilityReason
	}{
		"rateLimitReachedType": {func(_, rl map[string]any) { rl["rateLimitReachedType"] = "workspace_owner_credits_depleted" },
			[]policy.EligibilityReason{policy.EligibilityReasonRateLimitReached}},
		"rateLimitReachedType unknown value": {func(_, rl map[string]any) { rl["rateLimitReachedType"] = "something_new" },
			[]policy.EligibilityReason{policy.EligibilityReasonRateLimitReached}},
		"spendControlReached": {func(_, rl map[string]any) { rl["spendControlReached"] = true },
			[]policy.EligibilityReason{policy.EligibilityReasonSpendControlReached}},
		"individual limit at 0%": {func(_, rl map[string]any) {
			rl["individualLimit"] = map[string]any{"limit": "1", "used": "1", "remainingPercent": 0, "resetsAt": 1791500000}
		}, []policy.EligibilityReason{policy.EligibilityReasonIndividualLimitExhausted}},
		"individual limit overdrawn": {func(_, rl map[string]any) {
			rl["individualLimit"] = map[string]any{"remainingPercent": -3}
		}, []policy.EligibilityReason{policy.EligibilityReasonIndividualLimitExhausted}},
		"upsell": {func(r, _ map[string]any) { r["rateLimitUpsell"] = "opaque" },
			[]policy.EligibilityReason{policy.EligibilityReasonUpsellPresent}},
		"primary at 100%": {func(_, rl map[string]any) { rl["primary"].(map[string]any)["usedPercent"] = 100 },
			[]policy.EligibilityReason{policy.EligibilityReasonWindowExhausted}},
		"secondary at 100%": {func(_, rl map[string]any) { rl["secondary"].(map[string]any)["usedPercent"] = 100 },
			[]policy.EligibilityReason{policy.EligibilityReasonWindowExhausted}},
		"ordinaryUsageAllowed false": {func(r, _ map[string]any) { r["ordinaryUsageAllowed"] = false },
			[]policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageNotAllowed}},
		"blocker outranks unknown": {func(r, rl map[string]any) {
			delete(r, "ordinaryUsageAllowed")
			rl["primary"].(map[string]any)["usedPercent"] = 100
		}, []policy.EligibilityReason{policy.EligibilityReasonOrdinaryUsageUnknown, policy.EligibilityReasonWindowExhausted}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := codexRateLimitsResult(t, "eligible-plus")
			c.edit(r, r["rateLimits"].(map[string]any))
			_, elig := codexParseEdited(t, r)
			assert.Equal(t, policy.EligibilityAllowanceUnavailable, elig.State)
			assert.Equal(t, c.want, elig.Reasons)
		})
	}
	// An individual limit with headroom is no blocker.
	r := codexRateLimitsResult(t, "eligible-plus")
	r["rateLimits"].(map[string]any)["individualLimit"] = map[string]any{"remainingPercent": 40}
	_, elig := codexParseEdited(t, r)
	assert.Equal(t, policy.EligibilityEligible, elig.State)
	for _, name := range []string{"rate-limit-reached", "spend-control-reached", "individual-limit-exhausted",
		"upsell-present", "ordinary-usage-false", "primary-100"} {
		assert.Equal(t, policy.EligibilityAllowanceUnavailable, codexFixtureReport(t, name).Eligibility.State, name)
	}
}

// Criterion 4: a collector or telemetry failure → an unknown snapshot
// with its reason and unknown eligibility; the snapshot never invents a
// window. (Acquisition failures: TestAcquireCodex* in codex_test.go.)
func TestCodexCriterion4CollectorFailureIsUnknown(t *testing.T) {
	cases := []struct {
		code   int64
		msg    string
		reason policy.CapacityReason
		signed *bool
		elig   policy.EligibilityReason
	}{
		{-32600, "codex account authentication required to read rate limits", policy.CapacityReasonNotSignedIn, ptr(false), policy.EligibilityReasonNotSignedIn},
		{-32600, "chatgpt authentication required to read rate limits", policy.CapacityReasonNoPlanQuota, nil, policy.EligibilityReasonCollectorFailed},
		{-32603, "failed to fetch codex rate limits: connection reset", policy.CapacityReasonBackendError, nil, policy.EligibilityReasonCollectorFailed},
		{-32603, "failed to fetch codex rate limits: no snapshots returned", policy.CapacityReasonBackendError, nil, policy.EligibilityReasonCollectorFailed},
		{-32001, "Server overloaded; retry later.", policy.CapacityReasonBackendError, nil, policy.EligibilityReasonCollectorFailed},
		{-32600, "Not initialized", policy.CapacityReasonBackendError, nil, policy.EligibilityReasonCollectorFailed},
		{-32601, "method not found", policy.CapacityReasonBackendError, nil, policy.EligibilityReasonCollectorFailed},
	}
	for _, c := range cases {
		snap, elig := ParseCodexRateLimitsError(c.code, c.msg, codexObserved)
		assert.Equal(t, policy.CapacityUnknown, snap.State, c.msg)
		assert.Equal(t, c.reason, snap.Reason, c.msg)
		assert.Equal(t, c.signed, snap.SignedIn, c.msg)
		assert.Empty(t, snap.Windows, c.msg)
		assert.Equal(t, policy.EligibilityUnknown, elig.State, c.msg)
		assert.Equal(t, []policy.EligibilityReason{c.elig}, elig.Reasons, c.msg)
	}
	malformed := []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"rateLimits":null}`, `{"rateLimits":[]}`,
		`{"rateLimits":{"primary":[]}}`,
		`{"rateLimits":{"primary":{"usedPercent":"42"}}}`,
		`{"rateLimits":{"primary":{"usedPercent":-1}}}`,
		`{"rateLimits":{"primary":{"usedPercent":5,"windowDurationMins":0}}}`,
		`{"rateLimits":{"primary":{"usedPercent":5,"windowDurationMins":30.5}}}`,
		`{"rateLimits":{"secondary":{"resetsAt":"2026-01-01T00:00:00Z"}}}`,
		`{"rateLimits":{"secondary":{"resetsAt":1e300}}}`,
		`{"rateLimits":{"individualLimit":"exhausted"}}`,
		`{"rateLimits":{"individualLimit":{"remainingPercent":"0"}}}`,
		`{"rateLimits":{"individualLimit":{}}}`,
		`{"rateLimits":{}`,
	}
	for _, m := range malformed {
		snap, elig := ParseCodexRateLimits([]byte(m), codexObserved)
		assert.Equal(t, policy.CapacityUnknown, snap.State, m)
		assert.Equal(t, policy.CapacityReasonUnparseable, snap.Reason, m)
		assert.Equal(t, []policy.EligibilityReason{policy.EligibilityReasonCollectorFailed}, elig.Reasons, m)
	}
	for _, line := range []string{`not json`, `{"id":2}`, `{"id":2,"result":{},"error":{"code":1}}`,
		`{"id":2,"error":{"code":"x"}}`, `{"id":2,"error":"boom"}`, `{"method":"account/updated","params":{}}`} {
		rep := ParseCodexReplies(nil, []byte(line), codexObserved)
		assert.Equal(t, policy.CapacityReasonUnparseable, rep.Snapshot.Reason, line)
		assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State, line)
	}
	for _, name := range []string{"logged-out", "api-key", "backend-error", "malformed"} {
		rep := codexFixtureReport(t, name)
		assert.Equal(t, policy.CapacityUnknown, rep.Snapshot.State, name)
		assert.Equal(t, policy.EligibilityUnknown, rep.Eligibility.State, name)
	}
}

// Criterion 5: an eligible report with a healthy snapshot: eligible, no
// reason, measured windows exactly as reported, so the gate lets the
// attempt through as it does today.
func TestCodexCriterion5EligibleIsHealthy(t *testing.T) {
	for _, name := range []string{"eligible-plus", "weekly-only"} {
		rep := codexFixtureReport(t, name)
		assert.Equal(t, policy.CapacityMeasured, rep.Snapshot.State, name)
		assert.Empty(t, rep.Snapshot.Reason, name)
		assert.Equal(t, ptr(true), rep.Snapshot.SignedIn, name)
		assert.Equal(t, policy.EligibilityEligible, rep.Eligibility.State, name)
		assert.Empty(t, rep.Eligibility.Reasons, name)
		b, err := json.Marshal(rep.Eligibility)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "reasons", "an empty reason list is omitted, never null")
	}
	// A window without a percentage stays without one (never 0%).
	r := codexRateLimitsResult(t, "eligible-plus")
	r["rateLimits"].(map[string]any)["primary"] = map[string]any{"usedPercent": nil, "windowDurationMins": nil, "resetsAt": nil}
	snap, elig := codexParseEdited(t, r)
	assert.Equal(t, []policy.CapacityWindow{{Name: "primary"}, healthyWindows[1]}, snap.Windows)
	assert.Equal(t, policy.EligibilityEligible, elig.State)
}

func TestCodexWindowNames(t *testing.T) {
	for mins, want := range map[int]string{300: "5h", 10080: "7d", 60: "60m", 1440: "1440m", 301: "301m"} {
		assert.Equal(t, want, codexWindowName(mins))
	}
}

func TestParseCodexAccount(t *testing.T) {
	f := loadCodexFixture(t, "eligible-plus")
	m, err := decodeCodexMessage(f.Account)
	require.NoError(t, err)
	acct, err := ParseCodexAccount(m.Result)
	require.NoError(t, err)
	assert.Equal(t, CodexAccount{SignedIn: true, Type: "chatgpt"}, acct)

	for in, want := range map[string]CodexAccount{
		`{"account":null,"requiresOpenaiAuth":true}`:                              {},
		`{"account":{"type":"apiKey"},"requiresOpenaiAuth":true}`:                 {SignedIn: true, Type: "apiKey"},
		`{"account":{"type":"amazonBedrock","usesCodexManagedCredentials":true}}`: {SignedIn: true, Type: "amazonBedrock"},
		`{"account":{"type":"sntl.user@example.invalid"}}`:                        {SignedIn: true},
	} {
		got, err := ParseCodexAccount([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{``, `null`, `[]`, `{}`, `{"account":"acct-SNTL-7f3a"}`, `{"account":{"type":5}}`, `{"account":{}}`} {
		_, err := ParseCodexAccount([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "account/read result", in)
		assertNoCodexSentinel(t, err.Error())
	}
}

func TestDecodeCodexMessage(t *testing.T) {
	m, err := decodeCodexMessage([]byte(`{"id":0,"result":{"userAgent":"x"}}`))
	require.NoError(t, err)
	assert.True(t, m.HasID)
	assert.Equal(t, int64(0), m.ID)
	assert.JSONEq(t, `{"userAgent":"x"}`, string(m.Result))

	m, err = decodeCodexMessage([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Not initialized"}}`))
	require.NoError(t, err)
	assert.Equal(t, &codexRPCError{Code: -32600, Message: "Not initialized"}, m.Err)

	m, err = decodeCodexMessage([]byte(`{"method":"account/updated","params":{"authMode":"chatgpt"}}`))
	require.NoError(t, err)
	assert.Equal(t, "account/updated", m.Method)
	assert.False(t, m.HasID)

	m, err = decodeCodexMessage([]byte(`{"id":"srv-1","method":"item/commandExecution/requestApproval","params":{}}`))
	require.NoError(t, err)
	assert.True(t, m.IDText)

	for _, in := range []string{`tok-SNTL-9c1e`, `[]`, `{"id":1.5,"result":1}`, `{"method":3}`, `{"id":1}`,
		`{"id":1,"error":{"code":-32603,"message":7}}`, `{"params":{"token":"tok-SNTL-9c1e"}}`} {
		_, err := decodeCodexMessage([]byte(in))
		require.Error(t, err, in)
		assertNoCodexSentinel(t, err.Error())
	}
}

// TestCodexNoSentinelInOutputs proves no planted account id, e-mail,
// balance, token or message text reaches a parser output: every fixture's
// report, as JSON, and every fixture mutated field by field.
func TestCodexNoSentinelInOutputs(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(codexFixtureDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	// A logged-out or API-key session carries no account data to plant.
	bare := []string{"api-key", "logged-out", "signed-out-0.171.0"}
	for _, path := range names {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		assert.Equal(t, !slices.Contains(bare, name), strings.Contains(string(raw), "SNTL"),
			"%s: every fixture with account data plants sentinels", name)
		rep := codexFixtureReport(t, name)
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		assertNoCodexSentinel(t, string(b))
		f := loadCodexFixture(t, name)
		if m, err := decodeCodexMessage(f.Account); err == nil && m.Result != nil {
			acct, err := ParseCodexAccount(m.Result)
			require.NoError(t, err)
			assertNoCodexSentinel(t, acct.Type)
		}
	}
}

func assertNoCodexSentinel(t testing.TB, out string) {
	t.Helper()
	for _, s := range codexSentinels {
		if strings.Contains(strings.ToLower(out), strings.ToLower(s)) {
			t.Fatalf("sentinel %q leaked into output %s", s, out)
		}
	}
}

func mustResult(t testing.TB, name string) []byte {
	t.Helper()
	m, err := decodeCodexMessage(loadCodexFixture(t, name).RateLimits)
	require.NoError(t, err)
	require.NotNil(t, m.Result)
	return m.Result
}

// FuzzParseCodexRateLimits: no input panics; the outputs keep the
// contract (closed states, reasons sorted in vocabulary order and
// consistent with the state, unknown snapshots carry a reason and no
// window) and carry no byte of the input but numbers.
func FuzzParseCodexRateLimits(f *testing.F) {
	names, err := filepath.Glob(filepath.Join(codexFixtureDir, "*.json"))
	require.NoError(f, err)
	for _, path := range names {
		fx := loadCodexFixture(f, strings.TrimSuffix(filepath.Base(path), ".json"))
		f.Add([]byte(fx.RateLimits), []byte(fx.Account))
		if m, err := decodeCodexMessage(fx.RateLimits); err == nil && m.Result != nil {
			f.Add([]byte(m.Result), []byte(nil))
		}
	}
	f.Add([]byte(`{"rateLimits":{"primary":{"usedPercent":1e309}}}`), []byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		snap, elig := ParseCodexRateLimits(a, codexObserved)
		checkCodexOutput(t, snap, elig)
		rep := ParseCodexReplies(b, a, codexObserved)
		require.NotNil(t, rep.Eligibility)
		checkCodexOutput(t, rep.Snapshot, *rep.Eligibility)
		_, _ = ParseCodexAccount(a)
		_, _ = decodeCodexMessage(a)
		out, err := json.Marshal(rep)
		require.NoError(t, err)
		if strings.Contains(string(a)+string(b), "SNTL") {
			assertNoCodexSentinel(t, string(out))
		}
	})
}

func checkCodexOutput(t *testing.T, snap policy.CapacitySnapshot, elig policy.ExecutionEligibility) {
	t.Helper()
	require.Equal(t, policy.QuotaLiveRPC, snap.Source)
	switch snap.State {
	case policy.CapacityMeasured:
		require.Empty(t, snap.Reason)
	case policy.CapacityUnknown:
		require.NotEmpty(t, snap.Reason)
		require.Empty(t, snap.Windows)
		require.Equal(t, policy.EligibilityUnknown, elig.State)
	default:
		t.Fatalf("state %q", snap.State)
	}
	for _, w := range snap.Windows {
		if w.UsedPercent != nil {
			require.GreaterOrEqual(t, *w.UsedPercent, 0.0)
		}
	}
	last := -1
	for _, r := range elig.Reasons {
		i := slices.Index(policy.EligibilityReasons, r)
		require.Greater(t, i, last, "reasons %v not in vocabulary order", elig.Reasons)
		last = i
	}
	has := func(r policy.EligibilityReason) bool { return slices.Contains(elig.Reasons, r) }
	switch elig.State {
	case policy.EligibilityEligible:
		require.Empty(t, elig.Reasons)
	case policy.EligibilityPolicyBlocked:
		require.True(t, has(policy.EligibilityReasonCreditsPresent))
	case policy.EligibilityAllowanceUnavailable, policy.EligibilityUnknown:
		require.NotEmpty(t, elig.Reasons)
		require.False(t, has(policy.EligibilityReasonCreditsPresent))
	default:
		t.Fatalf("eligibility state %q", elig.State)
	}
}

// The codex fixtures join the generic sentinel walk: each file's two
// replies go through the whole pure source, and its rate-limits reply
// through the parser on its own.
func init() {
	sentinelParsers["ParseCodexReplies"] = func(b []byte) any {
		var f map[string]json.RawMessage
		if json.Unmarshal(b, &f) != nil {
			return ParseCodexReplies(nil, b, testNow)
		}
		return ParseCodexReplies(f["account/read"], f["account/rateLimits/read"], testNow)
	}
	sentinelParsers["ParseCodexRateLimits"] = func(b []byte) any {
		s, e := ParseCodexRateLimits(b, testNow)
		return []any{s, e}
	}
}
