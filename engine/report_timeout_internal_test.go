package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestTimedOutByStallOrDeadline: a timed-out attempt the stall watchdog
// ended (its finish records the stall) and one the run's --timeout ended
// both normalize to deadline-exceeded, and the report tells them apart
// in TimedOutBy and in words.
func TestTimedOutByStallOrDeadline(t *testing.T) {
	t.Parallel()
	exit := 124
	rc := &policy.Receipt{Status: policy.StatusTimedOut, ElapsedMs: 10, ExitCode: &exit,
		Error: &policy.ReceiptError{Message: "timed out"}}
	fin := events.Finish{Event: policy.Event{Status: policy.OutcomeDeadlineExceeded}, Receipt: rc}

	var deadline AttemptReport
	describeFinish(&deadline, fin)
	require.Equal(t, TimedOutByDeadline, deadline.TimedOutBy)
	require.True(t, strings.HasSuffix(deadline.Cause, "(the run's --timeout deadline)"), deadline.Cause)

	fin.Stall = &events.Stall{Failure: events.StallFailure, IdleMs: 1200, TimeoutMs: 1000, ProviderHealth: events.HealthRequestStalled,
		Liveness: events.StallHealthPairs[events.HealthRequestStalled], Probe: "available", FenceClosed: true}
	var stall AttemptReport
	describeFinish(&stall, fin)
	require.Equal(t, TimedOutByStall, stall.TimedOutBy)
	require.Contains(t, stall.Cause, "response_stalled")
	require.True(t, strings.HasSuffix(stall.Cause, "(the stall watchdog, not a --timeout deadline)"), stall.Cause)

	var other AttemptReport
	describeFinish(&other, events.Finish{Event: policy.Event{Status: policy.OutcomeComplete}, Receipt: &policy.Receipt{Status: policy.StatusComplete}})
	require.Empty(t, other.TimedOutBy)
}
