package policy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capT0 is the fixed "now" of the capacity tests.
var capT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func fptr(v float64) *float64        { return &v }
func iptr(v int) *int                { return &v }
func bptr(v bool) *bool              { return &v }
func tptr(t time.Time) *time.Time    { return &t }
func mins(n int) time.Duration       { return time.Duration(n) * time.Minute }
func at(d time.Duration) time.Time   { return capT0.Add(d) }
func atp(d time.Duration) *time.Time { return tptr(at(d)) }

// codexWindows are a healthy Codex snapshot's two windows.
func codexWindows() []CapacityWindow {
	return []CapacityWindow{
		{Name: "5h", UsedPercent: fptr(42.5), WindowMinutes: iptr(300), ResetsAt: atp(mins(90))},
		{Name: "7d", UsedPercent: fptr(10), WindowMinutes: iptr(10080), ResetsAt: atp(72 * time.Hour)},
	}
}

func measuredSnapshot(p Provider, src QuotaSource, ws ...CapacityWindow) CapacitySnapshot {
	return CapacitySnapshot{SchemaVersion: 1, Provider: p, Source: src, State: CapacityMeasured,
		SignedIn: bptr(true), Windows: ws, AcquiredAt: at(-mins(2))}
}

func codexEligibility(state EligibilityState, rs ...EligibilityReason) *ExecutionEligibility {
	return &ExecutionEligibility{SchemaVersion: 1, Provider: Codex, State: state, Reasons: rs, ObservedAt: at(-mins(2))}
}

// capacityGoldens are the golden reports, one per snapshot state and per
// eligibility state, by file name under testdata/capacity.
func capacityGoldens() map[string]CapacityReport {
	return map[string]CapacityReport{
		"measured-eligible": {SchemaVersion: 1, Provider: Codex,
			Snapshot:    measuredSnapshot(Codex, QuotaLiveRPC, codexWindows()...),
			Eligibility: codexEligibility(EligibilityEligible)},
		"measured-policy-blocked": {SchemaVersion: 1, Provider: Codex,
			Snapshot:    measuredSnapshot(Codex, QuotaLiveRPC, codexWindows()...),
			Eligibility: codexEligibility(EligibilityPolicyBlocked, EligibilityReasonCreditsPresent)},
		"measured-allowance-unavailable": {SchemaVersion: 1, Provider: Codex,
			Snapshot: measuredSnapshot(Codex, QuotaLiveRPC,
				CapacityWindow{Name: "5h", UsedPercent: fptr(100), WindowMinutes: iptr(300), ResetsAt: atp(mins(45))},
				CapacityWindow{Name: "7d", UsedPercent: fptr(61.25), WindowMinutes: iptr(10080), ResetsAt: atp(96 * time.Hour)}),
			Eligibility: codexEligibility(EligibilityAllowanceUnavailable, EligibilityReasonRateLimitReached, EligibilityReasonWindowExhausted)},
		"unknown-eligibility-unknown": {SchemaVersion: 1, Provider: Codex,
			Snapshot: CapacitySnapshot{SchemaVersion: 1, Provider: Codex, Source: QuotaLiveRPC, State: CapacityUnknown,
				Reason: CapacityReasonTimeout, AcquiredAt: at(-mins(1))},
			Eligibility: codexEligibility(EligibilityUnknown, EligibilityReasonCollectorFailed)},
		"unknown-not-signed-in": {SchemaVersion: 1, Provider: Claude,
			Snapshot: CapacitySnapshot{SchemaVersion: 1, Provider: Claude, Source: QuotaLiveHTTP, State: CapacityUnknown,
				Reason: CapacityReasonNotSignedIn, SignedIn: bptr(false), AcquiredAt: at(-mins(1))}},
		"measured-partial-windows": {SchemaVersion: 1, Provider: Gemini,
			Snapshot: CapacitySnapshot{SchemaVersion: 1, Provider: Gemini, Source: QuotaLiveHTTP, State: CapacityMeasured,
				Windows: []CapacityWindow{
					{Name: "gemini-2.5-pro", UsedPercent: fptr(0.5), ResetsAt: atp(20 * time.Hour)},
					{Name: "gemini-2.5-flash"}, // the source gave no fraction: no percentage, never 0% or 100%
				},
				AcquiredAt: at(-mins(3))}},
		"unsupported-learned-exhaustion": {SchemaVersion: 1, Provider: Antigravity,
			Snapshot: CapacitySnapshot{SchemaVersion: 1, Provider: Antigravity, Source: QuotaUnsupported, State: CapacityUnsupported,
				Reason: CapacityReasonNoSource, AcquiredAt: at(-mins(5))},
			LearnedExhaustion: &LearnedExhaustion{At: at(-mins(30)), Until: at(mins(30))}},
	}
}

// capAbsent, as a mutation value, deletes the key.
var capAbsent = struct{ absent bool }{true}

// mutateJSON decodes b, sets (or deletes, with absent) the member at the
// dotted path (array indexes as numbers) and re-encodes it.
func mutateJSON(t testing.TB, b []byte, path string, v any) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var root any
	require.NoError(t, dec.Decode(&root))
	keys := strings.Split(path, ".")
	cur := root
	for _, k := range keys[:len(keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			require.NoError(t, err)
			cur = c[i]
		}
	}
	last := keys[len(keys)-1]
	switch c := cur.(type) {
	case map[string]any:
		if v == capAbsent {
			delete(c, last)
		} else {
			c[last] = v
		}
	case []any:
		i, err := strconv.Atoi(last)
		require.NoError(t, err)
		c[i] = v
	default:
		t.Fatalf("path %s does not lead to an object or array", path)
	}
	out, err := json.Marshal(root)
	require.NoError(t, err)
	return out
}

func mustMarshalReport(t testing.TB, r CapacityReport) []byte {
	t.Helper()
	b, err := MarshalCapacityReport(r)
	require.NoError(t, err)
	return b
}
