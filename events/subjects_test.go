package events_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

func TestSubjects(t *testing.T) {
	require.Equal(t, "sy.ev.R1.L0", events.EventSubject("R1", 0))
	require.Equal(t, "sy.ev.R1.L12", events.EventSubject("R1", 12))
	require.Equal(t, "sy.ev.R1.run", events.EventSubject("R1", events.RunLane))
	require.Equal(t, "sy.ev.R1.>", events.RunEventsFilter("R1"))
	require.Equal(t, "sy.job.codex", events.JobSubject("codex"))
	require.Equal(t, "sy.job.native.claude", events.NativeJobSubject("claude"))
	require.Equal(t, "sy.rep.R1.L3", events.ReportSubject("R1", 3))

	for _, lane := range []int{events.RunLane, 0, 7, events.MaxLanes} {
		run, got, err := events.ParseEventSubject(events.EventSubject("R1", lane))
		require.NoError(t, err)
		require.Equal(t, "R1", run)
		require.Equal(t, lane, got)
	}
	for _, bad := range []string{"sy.ev.R1", "sy.ev.R1.L", "sy.ev.R1.L01", "sy.ev.R1.L-1", "sy.ev.R1.x", "sy.ev.R.1.L0", "sy.job.x", "sy.ev.R1.L99999"} {
		_, _, err := events.ParseEventSubject(bad)
		require.ErrorIs(t, err, events.ErrInvalid, bad)
	}
}

func TestIDs(t *testing.T) {
	for _, ok := range []string{"R", "run-7", "0199c0de-7a1e-7c52-9d7e-5b1f2a9c4e11", "a_b"} {
		require.NoError(t, events.ValidateRunID(ok), ok)
		require.NoError(t, events.ValidateExecutionID(ok), ok)
	}
	for _, bad := range []string{"", "a.b", "a b", "a*", "a>", "-a", "_a", "run/7", string(make([]byte, events.MaxIDLen+1))} {
		require.ErrorIs(t, events.ValidateRunID(bad), events.ErrInvalid, bad)
	}
	for _, p := range policy.Providers {
		require.NoError(t, events.ValidateProvider(string(p)))
		require.NoError(t, events.ValidateJobSubject(events.JobSubject(string(p))))
	}
	for _, bad := range []string{"", "native", "Codex", "co_dex", "co.dex", "-x"} {
		require.ErrorIs(t, events.ValidateProvider(bad), events.ErrInvalid, bad)
	}
	require.NoError(t, events.ValidateWorkerID("host.example:4242"))
	require.ErrorIs(t, events.ValidateWorkerID("a b"), events.ErrInvalid)
}

// TestTypesMatchTheLaneMachine pins the event names the lane machine of
// DESIGN.md shares with this package.
func TestTypesMatchTheLaneMachine(t *testing.T) {
	for typ, name := range map[events.Type]string{
		events.TypeLaunch: "launch", events.TypeContinue: "continue", events.TypeClaim: "claim",
		events.TypeFinish: "finish", events.TypeInspect: "inspect", events.TypeVerdict: "verdict",
		events.TypeRequestOperation: "request-operation", events.TypeOperationDone: "operation-done",
		events.TypeComplete: "complete", events.TypeStop: "stop", events.TypeCancel: "cancel",
	} {
		require.Equal(t, name, string(typ))
		require.NotEqual(t, events.ScopeRun, typ.Scope(), "lane machine events are recorded on lanes")
	}
	for _, typ := range events.Types {
		require.True(t, typ.Valid())
		require.Equal(t, typ, eventstest.SamplePayload(typ).EventType(), "one payload type per event type")
	}
	require.False(t, events.Type("launched").Valid())
}

func TestInputDigest(t *testing.T) {
	state := policy.LaneState{Access: policy.ReadOnly, ExhaustedGroups: []policy.Provider{}}
	a, err := events.InputDigest(eventstest.SampleLane, state)
	require.NoError(t, err)
	b, err := events.InputDigest(eventstest.SampleLane, state)
	require.NoError(t, err)
	require.Equal(t, a, b, "deterministic")
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, a)
	state.ExhaustedGroups = []policy.Provider{policy.Codex}
	c, err := events.InputDigest(eventstest.SampleLane, state)
	require.NoError(t, err)
	require.NotEqual(t, a, c, "the state is part of the input")
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", events.Digest(nil))
}

func TestLeaseStale(t *testing.T) {
	seen := events.Lease{State: events.LeaseHeld, Revision: 4, TTL: 10 * time.Second}
	at := eventstest.T0
	for _, tc := range []struct {
		name  string
		cur   events.Lease
		now   time.Time
		stale bool
	}{
		{"unchanged past the ttl", seen, at.Add(11 * time.Second), true},
		{"unchanged within the ttl", seen, at.Add(9 * time.Second), false},
		// The boundary: exactly one TTL watched is not yet stale (the
		// holder may renew at that instant); a nanosecond more is.
		{"unchanged for exactly the ttl", seen, at.Add(10 * time.Second), false},
		{"unchanged a nanosecond past the ttl", seen, at.Add(10*time.Second + time.Nanosecond), true},
		{"renewed since", events.Lease{State: events.LeaseHeld, Revision: 5, TTL: 10 * time.Second}, at.Add(time.Hour), false},
		{"released", events.Lease{State: events.LeaseReleased, Revision: 4, TTL: 10 * time.Second}, at.Add(time.Hour), false},
	} {
		require.Equal(t, tc.stale, events.LeaseStale(seen, at, tc.cur, tc.now), tc.name)
	}
}

// TestInputDigestIsPinned pins the policy-input digest of fixed inputs as
// literals. The digest is wire format: every recorded decision carries
// one and replay --verify recomputes it, so renaming a key of the digest
// input (or of the policy types it encodes) must fail here, not only
// disagree with logs already written.
func TestInputDigestIsPinned(t *testing.T) {
	lane := policy.LanePolicy{
		ID:       "review#2",
		Attempts: []policy.AttemptPolicy{},
		Fallback: policy.FallbackPolicy{On: []policy.Outcome{policy.OutcomeUsageExhausted}},
	}
	state := policy.LaneState{
		Events:          []policy.Event{{AttemptIndex: 0, Status: policy.OutcomeUsageExhausted}},
		ExhaustedGroups: []policy.Provider{policy.Codex},
		Access:          policy.ReadOnly,
	}
	const canonical = `{"lane":{"id":"review#2","attempts":[],"fallback":{"on":["usage-exhausted"]}},` +
		`"state":{"events":[{"attemptIndex":0,"status":"usage-exhausted"}],"exhaustedGroups":["codex"],"access":"read-only"}}`
	got, err := events.InputDigest(lane, state)
	require.NoError(t, err)
	require.Equal(t, events.Digest([]byte(canonical)), got, "the digest is of exactly this JSON")
	require.Equal(t, "sha256:861b1b85fed4181fd84a56e1acc9b562b87f660becae3dd255601704fcc43a7f", got)

	sample, err := events.InputDigest(eventstest.SampleLane, policy.LaneState{Access: policy.ReadOnly, ExhaustedGroups: []policy.Provider{}})
	require.NoError(t, err)
	require.Equal(t, "sha256:56ab4a2a5cb316d814cbc6294f6af47a1e5e8901b9f14dfcd08841756b7c5806", sample, "a lane with a full attempt policy")
}

// TestInputDigestOfMatches: the digest of a lane hashed once
// (NewLaneInput, LaneInput.Digest, what the engine and replay use) is the
// digest of the whole input encoded at once (InputDigest), for lanes and
// states whose strings encoding/json escapes (HTML characters, control
// characters, invalid UTF-8) as well as plain ones.
func TestInputDigestOfMatches(t *testing.T) {
	t.Parallel()
	odd := []string{"review#2", "<a&b>", "line\nbreak\u2028", "bad\xffutf8", "", "\n", "tab\there\u0000"}
	states := []policy.LaneState{
		{Access: policy.ReadOnly, ExhaustedGroups: []policy.Provider{}},
		{Events: []policy.Event{{AttemptIndex: 0, Status: policy.OutcomeUsageExhausted}}, ExhaustedGroups: []policy.Provider{policy.Codex}, Access: policy.IsolatedWrite},
		{},
	}
	checked := 0
	for _, id := range odd {
		for _, base := range []policy.LanePolicy{eventstest.SampleLane, {Attempts: []policy.AttemptPolicy{}}} {
			lane := base
			lane.ID = id
			in, err := events.NewLaneInput(lane)
			require.NoError(t, err)
			for _, st := range append(states, policy.LaneState{Events: []policy.Event{{AttemptIndex: 1, Status: policy.Outcome(id)}}}) {
				want, err := events.InputDigest(lane, st)
				require.NoError(t, err)
				got, err := in.Digest(st)
				require.NoError(t, err)
				require.Equal(t, want, got, "lane %q, state %+v", id, st)
				checked++
			}
		}
	}
	require.Equal(t, len(odd)*2*(len(states)+1), checked)

	// Digest's hashes are pooled and restored: lanes digested at once
	// from several goroutines each get their own value.
	var wg sync.WaitGroup
	errs := make(chan error, 4*50)
	for g := range 4 {
		lane := eventstest.SampleLane
		lane.ID = odd[g]
		in, err := events.NewLaneInput(lane)
		require.NoError(t, err)
		want, err := events.InputDigest(lane, states[1])
		require.NoError(t, err)
		wg.Go(func() {
			for range 50 {
				if got, err := in.Digest(states[1]); err != nil || got != want {
					errs <- fmt.Errorf("lane %q: %s, %v; want %s", lane.ID, got, err, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
