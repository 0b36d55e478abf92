package events

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// FuzzDecodeCapacityReport: the store's decoder never panics, refuses with
// ErrInvalid only, and whatever it accepts re-encodes to bytes that decode
// to the same report under the same key.
func FuzzDecodeCapacityReport(f *testing.F) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	pct, mins := 42.0, 300
	good := policy.CapacityReport{SchemaVersion: 1, Provider: policy.Codex,
		Snapshot: policy.CapacitySnapshot{SchemaVersion: 1, Provider: policy.Codex, Source: policy.QuotaLiveRPC, State: policy.CapacityMeasured,
			Windows: []policy.CapacityWindow{{Name: "5h", UsedPercent: &pct, WindowMinutes: &mins, ResetsAt: &at}}, AcquiredAt: at},
		Eligibility: &policy.ExecutionEligibility{SchemaVersion: 1, Provider: policy.Codex, State: policy.EligibilityPolicyBlocked,
			Reasons: []policy.EligibilityReason{"credits_present"}, ObservedAt: at},
		LearnedExhaustion: &policy.LearnedExhaustion{At: at, Until: at.Add(time.Hour)},
	}
	b, err := json.Marshal(good)
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"schema_version":1,"provider":"codex","snapshot":{"schema_version":1,"provider":"codex","source":"LIVE_RPC","state":"unknown","reason":"timeout","acquired_at":"2026-11-29T12:00:00Z"}}`))
	f.Add([]byte(`{"schema_version":1,"provider":"codex","snapshot":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeCapacityReport("codex", b)
		if err != nil {
			require.True(t, errors.Is(err, ErrInvalid), "%v", err)
			return
		}
		again, err := encodeCapacityReport(r)
		require.NoError(t, err)
		back, err := decodeCapacityReport("codex", again)
		require.NoError(t, err)
		require.Equal(t, r, back)
	})
}
