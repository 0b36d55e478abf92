package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestStatusPrintsExclusions: status text names each attempt the
// eligibility gate excluded, with its code, detail and known end, and a
// stopped lane's full reason.
func TestStatusPrintsExclusions(t *testing.T) {
	until := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	st := engine.RunStatus{Run: "r1", Role: "bug-fix", Final: true,
		Lanes: []engine.LaneStatus{{Lane: 0, LaneID: "bug-fix#1", State: machines.StateStopped,
			Reason: "chain-exhausted; excluded before launch: codex:gpt-5.6-sol@high execution_policy_blocked",
			Exclusions: []engine.Exclusion{
				{AttemptIndex: 0, Descriptor: "codex:gpt-5.6-sol@high", Code: policy.ExcludePolicyBlocked, Detail: "credits present"},
				{AttemptIndex: 1, Descriptor: "grok:grok-4.7@xhigh", Code: policy.ExcludeQuotaExhausted, Until: &until},
			}}}}
	var text bytes.Buffer
	now := until.Add(-3*time.Hour - 10*time.Minute)
	require.NoError(t, statusPrinter{w: &text, times: timeFormat{now: now}}.run(st))
	require.Contains(t, text.String(), "  lane 0: grok:grok-4.7@xhigh excluded before launch: quota_exhausted (until in 3h)\n")
	text.Reset()
	require.NoError(t, statusPrinter{w: &text, times: timeFormat{now: now, absolute: true}}.run(st))
	require.Contains(t, text.String(), "chain-exhausted; excluded before launch: codex:gpt-5.6-sol@high execution_policy_blocked")
	require.Contains(t, text.String(), "  lane 0: codex:gpt-5.6-sol@high excluded before launch: execution_policy_blocked: credits present\n")
	require.Contains(t, text.String(), "  lane 0: grok:grok-4.7@xhigh excluded before launch: quota_exhausted (until 2026-12-01T20:00:00Z)\n")
}

// TestHistoryPrintsNotes: an event the engine explains (engine.HistoryNotes)
// is printed with that explanation instead of its bare payload.
func TestHistoryPrintsNotes(t *testing.T) {
	stop := events.Envelope{Seq: 9, Run: "r1", Lane: 0, Type: events.TypeStop,
		Payload: events.Stop{Decision: policy.Decision{Kind: policy.DecideStop, Reason: "unauthorized"}}}
	var b bytes.Buffer
	require.NoError(t, printHistory(&b, []events.Envelope{stop}, map[uint64]string{9: "lane stopped: stop unauthorized: provider grok funding is unknown"}, timeFormat{}))
	require.Contains(t, b.String(), "lane stopped: stop unauthorized: provider grok funding is unknown")
	b.Reset()
	require.NoError(t, printHistory(&b, []events.Envelope{stop}, nil, timeFormat{}))
	require.Contains(t, b.String(), "lane stopped: stop unauthorized")
}
