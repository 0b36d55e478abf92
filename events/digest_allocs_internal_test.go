package events

import (
	"testing"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestDigestAllocatesItsText: a lane input's digest of a state allocates
// the digest's text and nothing else (the state and the sum stay off the
// heap). Under the race detector sync.Pool drops some of what is put back,
// so a digest may also build a hash and a buffer afresh.
func TestDigestAllocatesItsText(t *testing.T) {
	lane := policy.LanePolicy{ID: "review", Attempts: []policy.AttemptPolicy{{Descriptor: "codex", ExhaustionGroup: policy.Codex}}}
	in, err := NewLaneInput(lane)
	if err != nil {
		t.Fatal(err)
	}
	st := policy.LaneState{Access: policy.ReadOnly, Events: []policy.Event{{AttemptIndex: 0, Status: policy.OutcomeUsageExhausted}}, ExhaustedGroups: []policy.Provider{policy.Codex}}
	want, err := InputDigest(lane, st)
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(200, func() {
		if got, err := in.Digest(st); err != nil || got != want {
			t.Fatalf("Digest = %q, %v; want %q", got, err, want)
		}
	})
	limit := 1.0
	if raceEnabled {
		limit = 4 // the text, and a dropped hash, its state and buffer
	}
	if n > limit {
		t.Fatalf("Digest makes %v allocations, want at most %v", n, limit)
	}
}
