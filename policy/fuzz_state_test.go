package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeLaneState feeds arbitrary bytes to the lane-state decoder and
// every decoded state to ValidateHistory and Next. It proves: decoding never
// panics and fails only with a *UsageError; a decoded state round-trips
// through its JSON form; ValidateHistory and Next never panic on a decoded
// state, with or without live file facts. The seed corpus is every decode
// test input plus the Next table's states, so plain go test runs it.
func FuzzDecodeLaneState(f *testing.F) {
	for _, tc := range decodeAccepts() {
		f.Add([]byte(tc.in))
	}
	for _, tc := range decodeRejects() {
		if len(tc.in) <= MaxLaneStateBytes {
			f.Add([]byte(tc.in))
		}
	}
	for _, tc := range nextCases() {
		b, err := json.Marshal(tc.state)
		require.NoError(f, err)
		f.Add(b)
	}
	lanes := []LanePolicy{
		fxLane(),
		fxLaneWith(func(l *LanePolicy) { fxBroad(l); fxBoth(l) }),
		fxLaneWith(func(l *LanePolicy) { l.Attempts[1] = fxBlocked(l.Attempts[1]); fxContinue(4, ContinuePermission)(l) }),
	}
	live := fxPrepared(2, IsolatedWrite)
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeLaneState(b)
		if err != nil {
			require.True(t, IsUsage(err), "decode error is not a *UsageError: %T %v", err, err)
			return
		}
		out, err := json.Marshal(st)
		require.NoError(t, err)
		again, err := DecodeLaneState(out)
		require.NoError(t, err, "re-decode of %s", out)
		require.Equal(t, st, again)

		for _, lane := range lanes {
			if err := ValidateHistory(lane, st); err != nil {
				require.True(t, IsUsage(err), "history error is not a *UsageError: %T %v", err, err)
			}
			for _, fs := range []FileFacts{nil, live} {
				d := Next(lane, st, fs)
				require.Contains(t, []DecisionKind{DecideLaunch, DecideContinue, DecideParentOperation, DecideStop, DecidePolicyDenied, DecideInspect}, d.Kind)
			}
		}
	})
}
