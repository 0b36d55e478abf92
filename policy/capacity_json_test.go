package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// TestCapacityVocabularies pins every closed vocabulary to the values in
// ELIG.md (the plan all of issue #11 builds on), in vocabulary order.
func TestCapacityVocabularies(t *testing.T) {
	t.Parallel()
	strs := func(vs ...string) []string { return vs }
	cases := []struct {
		name  string
		got   []string
		want  []string
		valid func(string) bool
	}{
		{"capacity reasons", toStrings(CapacityReasons), strs("disabled", "not_signed_in", "no_credentials",
			"token_expired", "token_lacks_scope", "throttled", "backend_error", "timeout", "unparseable",
			"binary_missing", "no_plan_quota", "no_project", "no_source"),
			func(s string) bool { return CapacityReason(s).Valid() }},
		{"eligibility reasons", toStrings(EligibilityReasons), strs("credits_present", "credits_unknown",
			"ordinary_usage_not_allowed", "ordinary_usage_unknown", "ordinary_usage_unsupported", "spend_control_reached", "spend_control_unknown",
			"rate_limit_reached", "individual_limit_exhausted", "upsell_present", "window_exhausted",
			"collector_failed", "not_signed_in"),
			func(s string) bool { return EligibilityReason(s).Valid() }},
		{"eligibility states", toStrings(EligibilityStates), strs("eligible", "allowance_unavailable", "policy_blocked", "unknown"),
			func(s string) bool { return EligibilityState(s).Valid() }},
		{"capacity states", toStrings(CapacityStates), strs("measured", "unknown", "unsupported"),
			func(s string) bool { return CapacityState(s).Valid() }},
		{"quota sources", toStrings(QuotaSources), strs("LIVE_HTTP", "LIVE_RPC", "LIVE_CLI", "UNSUPPORTED"),
			func(s string) bool { return QuotaSource(s).Valid() }},
		{"exclusion codes", toStrings(ExclusionCodes), strs("execution_allowance_unavailable", "execution_policy_blocked",
			"execution_unverified", "not_signed_in", "quota_exhausted", "quota_unknown", "provider_unhealthy", "containment_unverified"),
			func(s string) bool { return ExclusionCode(s).Valid() }},
		{"capacity evidence", toStrings(CapacityEvidences), strs("measured", "opaque", "unknown"),
			func(s string) bool { return CapacityEvidence(s).Valid() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.got)
			for _, v := range tc.want {
				require.True(t, tc.valid(v), v)
				require.False(t, tc.valid(strings.ToUpper(v)+"x"), v)
			}
			require.False(t, tc.valid(""))
		})
	}
}

func toStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// TestEligibilityStateOf proves the seed's priority over reason classes.
func TestEligibilityStateOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		reasons []EligibilityReason
		want    EligibilityState
	}{
		{"no reasons is eligible", nil, EligibilityEligible},
		{"credits present beats every blocker", []EligibilityReason{EligibilityReasonCreditsPresent, EligibilityReasonSpendControlReached, EligibilityReasonWindowExhausted}, EligibilityPolicyBlocked},
		{"a blocker beats unknown evidence", []EligibilityReason{EligibilityReasonCreditsUnknown, EligibilityReasonUpsellPresent}, EligibilityAllowanceUnavailable},
		{"ordinary usage not allowed blocks", []EligibilityReason{EligibilityReasonOrdinaryUsageNotAllowed}, EligibilityAllowanceUnavailable},
		{"individual limit blocks", []EligibilityReason{EligibilityReasonIndividualLimitExhausted}, EligibilityAllowanceUnavailable},
		{"rate limit reached blocks", []EligibilityReason{EligibilityReasonRateLimitReached}, EligibilityAllowanceUnavailable},
		{"spend control unknown is unknown", []EligibilityReason{EligibilityReasonSpendControlUnknown}, EligibilityUnknown},
		{"ordinary usage unknown is unknown", []EligibilityReason{EligibilityReasonOrdinaryUsageUnknown}, EligibilityUnknown},
		{"ordinary usage unsupported is unknown", []EligibilityReason{EligibilityReasonOrdinaryUsageUnsupported}, EligibilityUnknown},
		{"collector failed is unknown", []EligibilityReason{EligibilityReasonCollectorFailed}, EligibilityUnknown},
		{"not signed in is unknown", []EligibilityReason{EligibilityReasonNotSignedIn}, EligibilityUnknown},
		{"an unknown reason is unsafe", []EligibilityReason{"bogus"}, EligibilityUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, EligibilityStateOf(tc.reasons))
		})
	}
}

// TestCapacityGolden pins the canonical bytes of one report per snapshot
// state and eligibility state, and proves the files decode back to the
// values they were written from.
func TestCapacityGolden(t *testing.T) {
	t.Parallel()
	goldens := capacityGoldens()
	for name, r := range goldens {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := "testdata/capacity/" + name + ".json"
			b := mustMarshalReport(t, r)
			golden.Check(t, path, append(b, '\n'))
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			got, err := DecodeCapacityReport(file)
			require.NoError(t, err)
			require.Equal(t, r, got)
			d, err := CapacityReportDigest(got)
			require.NoError(t, err)
			sum := sha256.Sum256(file[:len(file)-1])
			require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), d, "digest of the canonical bytes")
		})
	}
	files, err := filepath.Glob("testdata/capacity/*.json")
	require.NoError(t, err)
	require.Len(t, files, len(goldens), "every golden file has a case")
	seen := map[string]bool{}
	for _, r := range goldens {
		seen[string(r.Snapshot.State)] = true
		if r.Eligibility != nil {
			seen[string(r.Eligibility.State)] = true
		}
	}
	for _, s := range toStrings(CapacityStates) {
		require.True(t, seen[s], "no golden with snapshot state %s", s)
	}
	for _, s := range toStrings(EligibilityStates) {
		require.True(t, seen[s], "no golden with eligibility state %s", s)
	}
}

// TestCapacityRoundTripFromValues: value → bytes → value is the identity,
// and a value in another time zone (with a monotonic reading) comes back as
// the same instants in UTC with the same canonical bytes.
func TestCapacityRoundTripFromValues(t *testing.T) {
	t.Parallel()
	for name, r := range capacityGoldens() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := mustMarshalReport(t, r)
			got, err := DecodeCapacityReport(b)
			require.NoError(t, err)
			require.Equal(t, r, got)

			s, err := MarshalCapacitySnapshot(r.Snapshot)
			require.NoError(t, err)
			gs, err := DecodeCapacitySnapshot(s)
			require.NoError(t, err)
			require.Equal(t, r.Snapshot, gs)
			if r.Eligibility != nil {
				e, err := MarshalExecutionEligibility(*r.Eligibility)
				require.NoError(t, err)
				ge, err := DecodeExecutionEligibility(e)
				require.NoError(t, err)
				require.Equal(t, *r.Eligibility, ge)
			}
		})
	}
	t.Run("zones and monotonic readings", func(t *testing.T) {
		t.Parallel()
		r := capacityGoldens()["measured-eligible"]
		zone := time.FixedZone("X", 5*3600+30*60)
		mono := time.Now() // carries a monotonic reading, which the wire form drops
		z := r
		z.Snapshot.AcquiredAt = mono.Add(r.Snapshot.AcquiredAt.Sub(mono))
		require.Contains(t, z.Snapshot.AcquiredAt.String(), "m=", "the test value has a monotonic reading")
		z.Snapshot.Windows = codexWindows()
		z.Snapshot.Windows[0].ResetsAt = tptr(r.Snapshot.Windows[0].ResetsAt.In(zone))
		e := *r.Eligibility
		e.ObservedAt = e.ObservedAt.In(zone)
		z.Eligibility = &e
		require.Equal(t, string(mustMarshalReport(t, r)), string(mustMarshalReport(t, z)))
		got, err := DecodeCapacityReport(mustMarshalReport(t, z))
		require.NoError(t, err)
		require.Equal(t, r, got)
	})
}

// TestCapacityRoundTripFromBytes: bytes → value → bytes gives the canonical
// form, whatever whitespace, key order, zone offset or fraction digits the
// input used.
func TestCapacityRoundTripFromBytes(t *testing.T) {
	t.Parallel()
	canonical := mustMarshalReport(t, capacityGoldens()["measured-allowance-unavailable"])
	loose := `
	{ "snapshot": {"windows": [
	      {"resets_at": "2026-12-01T14:15:00.000+01:30", "name": "5h", "window_minutes": 300, "used_percent": 100.0},
	      {"name": "7d", "used_percent": 6125e-2, "window_minutes": 10080, "resets_at": "2026-12-05T12:00:00Z"}],
	    "acquired_at": "2026-12-01T11:58:00Z", "signed_in": true, "state": "measured", "source": "LIVE_RPC",
	    "provider": "codex", "schema_version": 1},
	  "eligibility": {"observed_at": "2026-12-01T06:58:00-05:00", "reasons": ["rate_limit_reached", "window_exhausted"],
	    "state": "allowance_unavailable", "provider": "codex", "schema_version": 1},
	  "provider": "codex", "schema_version": 1 }
	`
	r, err := DecodeCapacityReport([]byte(loose))
	require.NoError(t, err)
	require.Equal(t, capacityGoldens()["measured-allowance-unavailable"], r)
	again, err := MarshalCapacityReport(r)
	require.NoError(t, err)
	require.Equal(t, string(canonical), string(again))
	d1, err := CapacityReportDigest(r)
	require.NoError(t, err)
	d2, err := CapacityReportDigest(capacityGoldens()["measured-allowance-unavailable"])
	require.NoError(t, err)
	require.Equal(t, d2, d1, "the digest is of the canonical form, not of the bytes read")
}

func TestCapacityReportDigest(t *testing.T) {
	t.Parallel()
	r := capacityGoldens()["measured-eligible"]
	d, err := CapacityReportDigest(r)
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^sha256:[0-9a-f]{64}$`), d)
	sum := sha256.Sum256(mustMarshalReport(t, r))
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), d)

	changed := r
	changed.Snapshot.Windows = codexWindows()
	changed.Snapshot.Windows[0].UsedPercent = fptr(42.6)
	d2, err := CapacityReportDigest(changed)
	require.NoError(t, err)
	require.NotEqual(t, d, d2, "a changed percentage changes the digest")

	bad := r
	bad.Snapshot.Provider = Claude
	_, err = CapacityReportDigest(bad)
	require.ErrorIs(t, err, ErrInvalidCapacity, "an invalid report has no digest")
}

// capReject is one refused input: the error names Field and contains Msg.
type capReject struct {
	name  string
	in    []byte
	field string
	msg   string
}

func reportRejects(t testing.TB) []capReject {
	ok := mustMarshalReport(t, capacityGoldens()["measured-eligible"])
	unknown := mustMarshalReport(t, capacityGoldens()["unknown-eligibility-unknown"])
	unsupported := mustMarshalReport(t, capacityGoldens()["unsupported-learned-exhaustion"])
	blocked := mustMarshalReport(t, capacityGoldens()["measured-allowance-unavailable"])
	m := func(b []byte, path string, v any) []byte { return mutateJSON(t, b, path, v) }
	big := append([]byte(`{"provider":"codex","pad":"`), make([]byte, MaxCapacityBytes)...)
	return []capReject{
		// Input framing.
		{"oversize input", big, "", "over the 65536-byte limit"},
		{"byte-order mark", append([]byte("\ufeff"), ok...), "", "byte-order mark"},
		{"invalid UTF-8", append(append([]byte{}, ok[:len(ok)-1]...), []byte(`,"x":"`+"\xff"+`"}`)...), "", "not valid UTF-8"},
		{"not an object", []byte(`["codex"]`), "", "must be a JSON object"},
		{"empty input", []byte(``), "", "is not a JSON object"},
		{"truncated", ok[:len(ok)-1], "", "is not a JSON object"},
		{"trailing data", append(append([]byte{}, ok...), `{}`...), "", "trailing data"},
		{"duplicate key", append([]byte(`{"provider":"codex",`), ok[1:]...), "", `duplicate key "provider"`},
		// Unknown keys at every level.
		{"unknown top-level key", m(ok, "extra", 1), "", `unknown key "extra"`},
		{"unknown snapshot key", m(ok, "snapshot.plan", "pro"), "snapshot", `unknown key "plan"`},
		{"unknown window key", m(ok, "snapshot.windows.0.remaining", 3), "snapshot.windows[0]", `unknown key "remaining"`},
		{"unknown eligibility key", m(ok, "eligibility.balance", 1), "eligibility", `unknown key "balance"`},
		{"unknown learned key", m(unsupported, "learned_exhaustion.why", "x"), "learned_exhaustion", `unknown key "why"`},
		{"case-folded key", m(m(ok, "Provider", "codex"), "provider", capAbsent), "", `unknown key "Provider"`},
		// Nulls: omitted, never null.
		{"null eligibility", m(ok, "eligibility", nil), "eligibility", "must not be null"},
		{"null signed_in", m(ok, "snapshot.signed_in", nil), "snapshot.signed_in", "must not be null"},
		{"null reason", m(ok, "snapshot.reason", nil), "snapshot.reason", "must not be null"},
		{"null used_percent", m(ok, "snapshot.windows.0.used_percent", nil), "snapshot.windows[0].used_percent", "must not be null"},
		{"null resets_at", m(ok, "snapshot.windows.1.resets_at", nil), "snapshot.windows[1].resets_at", "must not be null"},
		{"null reasons", m(ok, "eligibility.reasons", nil), "eligibility.reasons", "must not be null"},
		{"null learned exhaustion", m(ok, "learned_exhaustion", nil), "learned_exhaustion", "must not be null"},
		{"null required acquired_at", m(ok, "snapshot.acquired_at", nil), "snapshot.acquired_at", "must not be null"},
		{"null reason entry", m(unknown, "eligibility.reasons.0", nil), "eligibility.reasons[0]", "must be a reason string"},
		// Required fields.
		{"missing snapshot", m(ok, "snapshot", capAbsent), "snapshot", "is required"},
		{"missing acquired_at", m(ok, "snapshot.acquired_at", capAbsent), "snapshot.acquired_at", "is required"},
		{"missing observed_at", m(ok, "eligibility.observed_at", capAbsent), "eligibility.observed_at", "is required"},
		{"missing window name", m(ok, "snapshot.windows.0.name", capAbsent), "snapshot.windows[0].name", "is required"},
		{"missing learned until", m(unsupported, "learned_exhaustion.until", capAbsent), "learned_exhaustion.until", "is required"},
		// Schema versions.
		{"report schema 2", m(ok, "schema_version", 2), "schema_version", "must be 1, got 2"},
		{"snapshot schema 0", m(ok, "snapshot.schema_version", 0), "snapshot.schema_version", "must be 1, got 0"},
		{"eligibility schema 3", m(ok, "eligibility.schema_version", 3), "eligibility.schema_version", "must be 1, got 3"},
		{"schema version as a string", m(ok, "schema_version", "1"), "schema_version", "must be an integer"},
		{"schema version as a fraction", m(ok, "schema_version", 1.5), "schema_version", "must be an integer"},
		// Closed vocabularies.
		{"unknown provider", m(m(m(ok, "provider", "acct-SNTL-7f3a"), "snapshot.provider", "acct-SNTL-7f3a"), "eligibility.provider", "acct-SNTL-7f3a"), "provider", "got a value outside the vocabulary"},
		{"unknown source", m(ok, "snapshot.source", "LIVE_FILE"), "snapshot.source", "must be one of"},
		{"unknown snapshot state", m(ok, "snapshot.state", "ok"), "snapshot.state", "must be one of"},
		{"unknown eligibility state", m(ok, "eligibility.state", "safe"), "eligibility.state", "must be one of"},
		{"unknown capacity reason", m(unknown, "snapshot.reason", "flaky"), "snapshot.reason", "must be one of"},
		{"unknown eligibility reason", m(unknown, "eligibility.reasons", []any{"quota_gone"}), "eligibility.reasons[0]", "must be one of"},
		{"empty provider", m(ok, "provider", ""), "provider", "must not be empty"},
		// Percentages, minutes and times.
		{"used_percent over 100", m(ok, "snapshot.windows.0.used_percent", 100.01), "snapshot.windows[0].used_percent", "within 0..100"},
		{"used_percent negative", m(ok, "snapshot.windows.1.used_percent", -1), "snapshot.windows[1].used_percent", "within 0..100"},
		{"used_percent as a string", m(ok, "snapshot.windows.0.used_percent", "42%"), "snapshot.windows[0].used_percent", "must be a number"},
		{"used_percent overflowing", []byte(strings.Replace(string(ok), "42.5", "1e999", 1)), "snapshot.windows[0].used_percent", "must be a number"},
		{"negative window minutes", m(ok, "snapshot.windows.0.window_minutes", -300), "snapshot.windows[0].window_minutes", "positive"},
		{"zero window minutes", m(ok, "snapshot.windows.0.window_minutes", 0), "snapshot.windows[0].window_minutes", "positive"},
		{"fractional window minutes", m(ok, "snapshot.windows.0.window_minutes", 1.5), "snapshot.windows[0].window_minutes", "must be an integer"},
		{"time not RFC 3339", m(ok, "snapshot.acquired_at", "2026-12-01 11:58:00"), "snapshot.acquired_at", "RFC 3339"},
		{"time as a number", m(ok, "eligibility.observed_at", 1764590280), "eligibility.observed_at", "RFC 3339"},
		{"zero acquired_at", m(ok, "snapshot.acquired_at", "0001-01-01T00:00:00Z"), "snapshot.acquired_at", "is required"},
		{"year beyond 9999 in UTC", m(ok, "snapshot.windows.0.resets_at", "9999-12-31T23:00:00-02:00"), "snapshot.windows[0].resets_at", "outside 1..9999"},
		{"learned until before at", m(unsupported, "learned_exhaustion.until", "2026-12-01T11:00:00Z"), "learned_exhaustion.until", "before at"},
		// Windows.
		{"empty windows", m(ok, "snapshot.windows", []any{}), "snapshot.windows", "must not be empty"},
		{"windows on an unknown snapshot", m(unknown, "snapshot.windows", []any{map[string]any{"name": "5h", "used_percent": 3}}), "snapshot.windows", "must be absent unless the snapshot is measured"},
		{"duplicated window name", m(ok, "snapshot.windows.1.name", "5h"), "snapshot.windows[1].name", "repeats"},
		{"empty window name", m(ok, "snapshot.windows.0.name", ""), "snapshot.windows[0].name", "must not be empty"},
		{"control character in window name", m(ok, "snapshot.windows.0.name", "5h\n"), "snapshot.windows[0].name", "printable"},
		// Reasons of snapshots.
		{"unknown without reason", m(unknown, "snapshot.reason", capAbsent), "snapshot.reason", "is required on an unknown snapshot"},
		{"unsupported without reason", m(unsupported, "snapshot.reason", capAbsent), "snapshot.reason", `must be "no_source"`},
		{"unsupported with another reason", m(unsupported, "snapshot.reason", "timeout"), "snapshot.reason", `must be "no_source"`},
		{"unknown with no_source", m(unknown, "snapshot.reason", "no_source"), "snapshot.reason", "on an unknown snapshot"},
		{"reason on a measured snapshot", m(ok, "snapshot.reason", "timeout"), "snapshot.reason", "must be absent on a measured snapshot"},
		{"unsupported state from a live source", m(m(unknown, "snapshot.state", "unsupported"), "snapshot.reason", "no_source"), "snapshot.state", "never conflated"},
		{"unknown state from an UNSUPPORTED source", m(unsupported, "snapshot.state", "unknown"), "snapshot.state", "never conflated"},
		{"signed out but measured", m(ok, "snapshot.signed_in", false), "snapshot.signed_in", "false goes only with state"},
		{"signed in but not_signed_in", m(m(unknown, "snapshot.reason", "not_signed_in"), "snapshot.signed_in", true), "snapshot.signed_in", "is true but"},
		// Reasons of eligibility reports.
		{"duplicated reasons", m(blocked, "eligibility.reasons", []any{"rate_limit_reached", "rate_limit_reached"}), "eligibility.reasons[1]", "listed twice"},
		{"reasons out of order", m(blocked, "eligibility.reasons", []any{"window_exhausted", "rate_limit_reached"}), "eligibility.reasons[1]", "out of order"},
		{"empty reasons", m(unknown, "eligibility.reasons", []any{}), "eligibility.reasons", "must not be empty"},
		{"eligible with reasons", m(m(blocked, "eligibility.state", "eligible"), "eligibility.reasons", []any{"upsell_present"}), "eligibility.reasons", "must be absent on an eligible report"},
		{"blocked without reasons", m(ok, "eligibility.state", "policy_blocked"), "eligibility.reasons", "needs at least one reason"},
		{"state below its reasons", m(blocked, "eligibility.state", "unknown"), "eligibility.state", `make it "allowance_unavailable"`},
		{"credits present but allowance state", m(blocked, "eligibility.reasons", []any{"credits_present", "window_exhausted"}), "eligibility.state", `make it "policy_blocked"`},
		{"known and unknown credits", m(m(ok, "eligibility.state", "policy_blocked"), "eligibility.reasons", []any{"credits_present", "credits_unknown"}), "eligibility.reasons", "contradict"},
		{"collector failed beside evidence", m(unknown, "eligibility.reasons", []any{"credits_unknown", "collector_failed"}), "eligibility.reasons", "nothing was read"},
		// One provider throughout.
		{"snapshot of another provider", m(ok, "snapshot.provider", "claude"), "snapshot.provider", `is "claude" but the report is for "codex"`},
		{"eligibility of another provider", m(ok, "eligibility.provider", "claude"), "eligibility.provider", `is "claude" but the report is for "codex"`},
	}
}

// TestDecodeCapacityReportRejects proves each refusal, with an error that
// names the field at fault and matches ErrInvalidCapacity.
func TestDecodeCapacityReportRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range reportRejects(t) {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeCapacityReport(tc.in)
			require.Error(t, err)
			require.Equal(t, CapacityReport{}, r)
			require.ErrorIs(t, err, ErrInvalidCapacity)
			var ce *CapacityError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, "capacity report", ce.Doc)
			require.Equal(t, tc.field, ce.Field, "error: %v", err)
			require.Contains(t, err.Error(), tc.msg)
			require.NotContains(t, err.Error(), "SNTL", "no account data in errors")
		})
	}
}

// TestDecodeSnapshotAndEligibilityAlone: the standalone decoders apply the
// same rules, named for their own document.
func TestDecodeSnapshotAndEligibilityAlone(t *testing.T) {
	t.Parallel()
	r := capacityGoldens()["unknown-eligibility-unknown"]
	s, err := MarshalCapacitySnapshot(r.Snapshot)
	require.NoError(t, err)
	e, err := MarshalExecutionEligibility(*r.Eligibility)
	require.NoError(t, err)

	_, err = DecodeCapacitySnapshot(mutateJSON(t, s, "reason", capAbsent))
	require.EqualError(t, err, `capacity snapshot reason: is required on an unknown snapshot (one of "disabled", "not_signed_in", "no_credentials", "token_expired", "token_lacks_scope", "throttled", "backend_error", "timeout", "unparseable", "binary_missing", "no_plan_quota", "no_project")`)
	_, err = DecodeCapacitySnapshot(mutateJSON(t, s, "eligibility", 1))
	require.EqualError(t, err, `capacity snapshot: unknown key "eligibility" (allowed: "schema_version", "provider", "source", "state", "reason", "signed_in", "windows", "acquired_at")`)
	_, err = DecodeExecutionEligibility(mutateJSON(t, e, "reasons", []any{"collector_failed", "collector_failed"}))
	require.EqualError(t, err, `execution eligibility reasons[1]: "collector_failed" is listed twice`)
	_, err = DecodeExecutionEligibility(append([]byte("\ufeff"), e...))
	require.EqualError(t, err, `execution eligibility: starts with a byte-order mark; write plain UTF-8 JSON`)
	_, err = DecodeExecutionEligibility(make([]byte, MaxCapacityBytes+1))
	require.ErrorContains(t, err, "over the 65536-byte limit")

	gs, err := DecodeCapacitySnapshot(s)
	require.NoError(t, err)
	require.Equal(t, r.Snapshot, gs)
	ge, err := DecodeExecutionEligibility(e)
	require.NoError(t, err)
	require.Equal(t, *r.Eligibility, ge)
}

// TestMarshalCapacityValidates: Marshal refuses what Decode would refuse,
// including values JSON cannot even spell (NaN, infinities).
func TestMarshalCapacityValidates(t *testing.T) {
	t.Parallel()
	base := capacityGoldens()["measured-eligible"]
	withWindow := func(w CapacityWindow) CapacityReport {
		r := base
		r.Snapshot.Windows = []CapacityWindow{w}
		return r
	}
	cases := []struct {
		name string
		r    CapacityReport
		msg  string
	}{
		{"NaN percent", withWindow(CapacityWindow{Name: "5h", UsedPercent: fptr(math.NaN())}), "snapshot.windows[0].used_percent: must be a number within 0..100, got NaN"},
		{"infinite percent", withWindow(CapacityWindow{Name: "5h", UsedPercent: fptr(math.Inf(1))}), "within 0..100"},
		{"negative minutes", withWindow(CapacityWindow{Name: "5h", WindowMinutes: iptr(-1)}), "snapshot.windows[0].window_minutes: must be a positive number of minutes, got -1"},
		{"zero reset time", withWindow(CapacityWindow{Name: "5h", ResetsAt: &time.Time{}}), "omit it when the reset is unknown"},
		{"invalid UTF-8 name", withWindow(CapacityWindow{Name: "5h\xff"}), "printable UTF-8"},
		{"too many windows", func() CapacityReport {
			r := base
			r.Snapshot.Windows = nil
			for i := 0; i <= MaxCapacityWindows; i++ {
				r.Snapshot.Windows = append(r.Snapshot.Windows, CapacityWindow{Name: "w" + strings.Repeat("x", i)})
			}
			return r
		}(), "over the limit of 64"},
		{"zero report", CapacityReport{}, "schema_version: must be 1, got 0"},
		{"mismatched eligibility", func() CapacityReport {
			r := base
			e := *r.Eligibility
			e.Provider = Claude
			r.Eligibility = &e
			return r
		}(), "eligibility.provider"},
		{"unsorted reasons", func() CapacityReport {
			r := base
			r.Eligibility = codexEligibility(EligibilityAllowanceUnavailable, EligibilityReasonWindowExhausted, EligibilityReasonUpsellPresent)
			return r
		}(), "out of order"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := MarshalCapacityReport(tc.r)
			require.Nil(t, b)
			require.ErrorIs(t, err, ErrInvalidCapacity)
			require.ErrorContains(t, err, tc.msg)
		})
	}

	// A value with an empty (not nil) reasons list is eligible and
	// marshals like one without.
	r := base
	r.Eligibility = codexEligibility(EligibilityEligible)
	r.Eligibility.Reasons = []EligibilityReason{}
	require.Equal(t, string(mustMarshalReport(t, base)), string(mustMarshalReport(t, r)))
	require.NotContains(t, string(mustMarshalReport(t, r)), `"reasons"`, "reasons omitted, never [] or null")
}

// TestMeasuredWithoutWindows: a source that answered with no running
// window (Claude before a window's first message) is a measured snapshot
// with no windows; it round-trips and the gate finds it eligible, measured,
// never a synthetic 0% or 100%.
func TestMeasuredWithoutWindows(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	snap := CapacitySnapshot{SchemaVersion: 1, Provider: Claude, Source: QuotaLiveHTTP, State: CapacityMeasured, AcquiredAt: at}
	r := CapacityReport{SchemaVersion: 1, Provider: Claude, Snapshot: snap}
	b, err := MarshalCapacityReport(r)
	require.NoError(t, err)
	require.NotContains(t, string(b), "windows")
	got, err := DecodeCapacityReport(b)
	require.NoError(t, err)
	require.Equal(t, r, got)
	v := EvaluateEligibility(EligibilityInput{Provider: Claude, Source: QuotaLiveHTTP, Report: &got, Now: at.Add(time.Minute)})
	require.True(t, v.Eligible)
	require.Equal(t, EvidenceMeasured, v.Capacity)
}
