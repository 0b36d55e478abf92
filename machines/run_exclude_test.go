package machines_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestRunExcludeSkipsTheAttempt: an exclude of a created lane's first
// attempt moves nothing, is recorded on the lane, and policy.Next then
// launches the next authorized attempt; excluding that one too makes Next
// stop the lane chain-exhausted.
func TestRunExcludeSkipsTheAttempt(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).add(0, excludeP(0, policy.ExcludePolicyBlocked))
	r := fold(t, l)
	lane := r.Lanes[0]
	assert.Equal(t, machines.StateCreated, lane.State, "no transition")
	assert.Equal(t, uint64(2), lane.Seq)
	x := excludeP(0, policy.ExcludePolicyBlocked)
	assert.Equal(t, []machines.Exclusion{{AttemptIndex: 0, Group: policy.Claude, Code: policy.ExcludePolicyBlocked,
		Detail: "claude is not eligible", ReportDigest: x.ReportDigest, EvaluatedAt: t0.Add(time.Minute)}}, lane.Excluded)
	assert.Empty(t, r.Exhausted, "an exclusion is the lane's, not the run's")

	d := next(t, r, 0)
	require.Equal(t, policy.DecideLaunch, d.Kind)
	assert.Equal(t, 1, *d.AttemptIndex, "the excluded claude attempt is skipped")

	r = fold(t, l.add(0, excludeP(1, policy.ExcludeQuotaExhausted)))
	until := t0.Add(3 * time.Hour)
	assert.Equal(t, &until, r.Lanes[0].Excluded[1].Until)
	assert.Equal(t, policy.Stop(policy.StopChainExhausted), next(t, r, 0), "every remaining attempt excluded")

	r = fold(t, l.add(0, stopP(policy.StopChainExhausted)))
	assert.Equal(t, machines.StateStopped, r.Lanes[0].State)
	assert.Len(t, r.Lanes[0].Excluded, 2, "the stopped lane keeps its exclusions")
}

// TestRunExcludeBetweenAttempts: after an attempt ends usage-exhausted
// (terminal), the gate may exclude the next one; Next then finds nothing
// left to launch.
func TestRunExcludeBetweenAttempts(t *testing.T) {
	t.Parallel()
	usage := policy.OutcomeUsageExhausted
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1", usage)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", outcome(0, usage, true)))
	d := next(t, fold(t, l), 0)
	require.Equal(t, policy.DecideLaunch, d.Kind)
	require.Equal(t, 1, *d.AttemptIndex)

	r := fold(t, l.add(0, excludeP(1, policy.ExcludeUnverified)))
	assert.Equal(t, machines.StateTerminal, r.Lanes[0].State)
	assert.Equal(t, policy.Stop(policy.StopChainExhausted), next(t, r, 0))
}

// TestRunExcludeGroupsOrder: a lane's LaneState lists the run's exhausted
// groups first, then its own excluded groups not already among them, in
// order of exclusion; other lanes see the run's groups only.
func TestRunExcludeGroupsOrder(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1"), lanePolicy("lane#2")).
		add(0, excludeP(1, policy.ExcludeNotSignedIn)).
		add(0, excludeP(0, policy.ExcludeQuotaUnknown)).
		add(events.RunLane, exhaustedP(policy.Grok, 1, "e9"))
	r := fold(t, l)
	groups := func(i int) []policy.Provider {
		t.Helper()
		st, err := r.LaneState(i)
		require.NoError(t, err)
		return st.ExhaustedGroups
	}
	assert.Equal(t, []policy.Provider{policy.Grok, policy.Codex, policy.Claude}, groups(0))
	assert.Equal(t, []policy.Provider{policy.Grok}, groups(1))

	r = fold(t, l.add(events.RunLane, exhaustedP(policy.Claude, 1, "e8")))
	assert.Equal(t, []policy.Provider{policy.Grok, policy.Claude, policy.Codex}, groups(0), "a group the run exhausted is listed once, in the run's place")
	assert.Equal(t, []policy.Provider{policy.Grok, policy.Claude}, groups(1))

	st, err := r.LaneState(0)
	require.NoError(t, err)
	st.ExhaustedGroups[0] = "mutated"
	assert.Equal(t, policy.Grok, groups(0)[0], "LaneState returns a copy")
}

// TestRunExcludeRefused: an exclude the engine cannot have recorded (the
// gate runs only where a launch is decided, for one of the lane's
// attempts, once per group, never after a run-level cancel) is
// ErrInconsistent and leaves the run as it was.
func TestRunExcludeRefused(t *testing.T) {
	t.Parallel()
	base := func() *runLog {
		return newRunLog(t, policy.IsolatedWrite, lanePolicy("lane#1", policy.OutcomeTerminalFailure))
	}
	wrongDescriptor := excludeP(0, policy.ExcludePolicyBlocked)
	wrongDescriptor.Descriptor = "claude:other@high"
	wrongGroup := excludeP(1, policy.ExcludePolicyBlocked)
	wrongGroup.AttemptIndex = 0
	outOfRange := excludeP(1, policy.ExcludePolicyBlocked)
	outOfRange.AttemptIndex = 2
	for name, tc := range map[string]struct {
		l   *runLog
		msg string
	}{
		"while launching": {base().add(0, launchP(0, "e1")).add(0, excludeP(1, policy.ExcludePolicyBlocked)), "exclude while the lane is launching"},
		"while running": {base().add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, excludeP(1, policy.ExcludePolicyBlocked)),
			"exclude while the lane is running"},
		"while inspecting": {base().add(0, launchP(0, "e1")).add(0, claimP("e1")).
			add(0, finishP("e1", outcome(0, policy.OutcomeTerminalFailure, true))).add(0, inspectP()).add(0, excludeP(1, policy.ExcludePolicyBlocked)),
			"exclude while the lane is inspecting"},
		"after the lane stopped":     {base().add(0, stopP(policy.StopChainExhausted)).add(0, excludeP(0, policy.ExcludePolicyBlocked)), "exclude while the lane is stopped"},
		"after a run-level cancel":   {base().add(events.RunLane, cancelP()).add(0, excludeP(0, policy.ExcludePolicyBlocked)), "after the run was cancelled"},
		"of an attempt out of range": {base().add(0, outOfRange), "lane \"lane#1\" has 2 attempts"},
		"under another descriptor":   {base().add(0, wrongDescriptor), "as claude:other@high"},
		"under another group":        {base().add(0, wrongGroup), "(group codex); the lane's attempt 0 is claude:model@high (group claude)"},
		"twice":                      {base().add(0, excludeP(0, policy.ExcludePolicyBlocked)).add(0, excludeP(0, policy.ExcludeQuotaUnknown)), "already excluded"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := machines.FoldRun(tc.l.envs)
			require.ErrorIs(t, err, machines.ErrInconsistent)
			require.ErrorContains(t, err, tc.msg)
			var le *machines.LogError
			require.ErrorAs(t, err, &le)
			require.Equal(t, len(tc.l.envs)-1, le.Index, "the exclude is the refused envelope")
			before, err := machines.FoldRun(tc.l.envs[:le.Index])
			require.NoError(t, err)
			require.Equal(t, before, r, "a refused exclude changes nothing")
		})
	}
}

// TestRebuildLaneExclude: RebuildLane skips an exclude where one may
// arrive and refuses it elsewhere, like the run fold.
func TestRebuildLaneExclude(t *testing.T) {
	t.Parallel()
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1", policy.OutcomeUsageExhausted)).
		add(0, excludeP(0, policy.ExcludeQuotaUnknown)).add(0, launchP(1, "e1")).add(0, claimP("e1"))
	s, err := machines.RebuildLane(l.envs[1:])
	require.NoError(t, err)
	assert.Equal(t, machines.StateRunning, s)

	bad := append(l.envs[1:], l.envs[1])
	bad[len(bad)-1].Seq = 9
	_, err = machines.RebuildLane(bad)
	var fe *machines.FoldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 3, fe.Index)
	assert.ErrorIs(t, err, machines.ErrInconsistent)
	assert.ErrorContains(t, err, "exclude while the lane is running")
}

// TestRunUnhealthyFromStall: a finish whose stall the health probe found
// provider_unhealthy adds its attempt's group to the run's Unhealthy, once,
// whichever lane it ran on; request_stalled and health_unknown stalls, and
// finishes without a stall, add nothing.
func TestRunUnhealthyFromStall(t *testing.T) {
	t.Parallel()
	stalled := func(exec string, attempt int, health, liveness string) events.Finish {
		f := events.Finish{ExecutionID: exec, WorkerID: "host-a:42", ReceiptDigest: events.Digest([]byte(exec)),
			Receipt: &policy.Receipt{Status: policy.StatusTimedOut}, Event: outcome(attempt, policy.OutcomeDeadlineExceeded, true),
			Stall: &events.Stall{Failure: events.StallFailure, IdleMs: 1000, TimeoutMs: 1000, ProviderHealth: health, Liveness: liveness, Probe: "unknown"}}
		return f
	}
	timedOut := policy.OutcomeDeadlineExceeded
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1", timedOut), lanePolicy("lane#2", timedOut)).
		add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, stalled("e1", 0, events.HealthRequestStalled, events.LivenessAvailable)).
		add(1, launchP(0, "e2")).add(1, claimP("e2")).add(1, stalled("e2", 0, events.HealthUnknown, events.LivenessUnknown))
	assert.Empty(t, fold(t, l).Unhealthy, "request_stalled and health_unknown exclude nothing")

	l = l.add(0, launchP(1, "e3")).add(0, claimP("e3")).add(0, stalled("e3", 1, events.HealthProviderUnhealthy, events.LivenessUnavailable))
	assert.Equal(t, []policy.Provider{policy.Codex}, fold(t, l).Unhealthy)
	l = l.add(1, launchP(1, "e4")).add(1, claimP("e4")).add(1, stalled("e4", 1, events.HealthProviderUnhealthy, events.LivenessUnavailable))
	assert.Equal(t, []policy.Provider{policy.Codex}, fold(t, l).Unhealthy, "once")
}
