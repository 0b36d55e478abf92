package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestStatusPrintsStall: status names a lane's stalled attempt with its
// idle time, timeout and probed health, and the run's unhealthy providers;
// JSON carries both; a run without a stall mentions neither.
func TestStatusPrintsStall(t *testing.T) {
	st := engine.RunStatus{Run: "r1", Role: "bug-fix", Unhealthy: []policy.Provider{policy.Claude},
		Lanes: []engine.LaneStatus{{Lane: 0, LaneID: "bug-fix#1", State: machines.StateTerminal, Descriptor: "claude:sonnet@low",
			Outcome: policy.OutcomeDeadlineExceeded,
			Stall: &events.Stall{Failure: events.StallFailure, IdleMs: 300_004, TimeoutMs: 300_000, ProviderHealth: events.HealthProviderUnhealthy,
				Liveness: events.LivenessUnavailable, Probe: "unavailable", FenceClosed: true}}}}
	var text bytes.Buffer
	require.NoError(t, statusPrinter{w: &text}.run(st))
	require.Contains(t, text.String(), "  unhealthy providers (a stall's health probe found them unavailable; excluded for the rest of the run): claude\n")
	require.Contains(t, text.String(), "  lane 0: claude:sonnet@low stalled: response_stalled after 5m0.004s idle (timeout 5m0s); provider health: provider_unhealthy/unavailable (probe unavailable); the provider is excluded for the rest of the run\n")

	var js bytes.Buffer
	require.NoError(t, statusPrinter{w: &js, json: true}.run(st))
	var back struct {
		Unhealthy []string `json:"unhealthy"`
		Lanes     []struct {
			Stall *events.Stall `json:"stall"`
		} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, []string{"claude"}, back.Unhealthy)
	require.Equal(t, st.Lanes[0].Stall, back.Lanes[0].Stall)

	st.Unhealthy, st.Lanes[0].Stall = nil, nil
	text.Reset()
	require.NoError(t, statusPrinter{w: &text}.run(st))
	require.NotContains(t, text.String(), "stalled")
	require.NotContains(t, text.String(), "unhealthy")
}

// TestRunStallTimeoutFlagsReachTheRequest: --stall-timeout and
// --stall-timeout-for (repeatable and comma lists) become the run
// request's StallTimeout and ProviderStallTimeouts; neither given leaves
// both unset (the engine's default applies).
func TestRunStallTimeoutFlagsReachTheRequest(t *testing.T) {
	rf := runFlags{sheet: filepath.Join(repoRoot, panelSheet), role: "swarm workers", parent: "claude",
		prompt: filepath.Join(repoRoot, "README.md"), cwd: repoRoot,
		mode: "read-only", contract: "legacy",
		stallTimeout: 90 * time.Second, stallTimeoutSet: true, stallTimeoutFor: []string{"codex=15m, grok=2m30s", "cursor=1500ms"}}
	in, err := prepareRun(rf)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, in.req.StallTimeout)
	require.Equal(t, map[policy.Provider]time.Duration{policy.Codex: 15 * time.Minute, policy.Grok: 150 * time.Second,
		policy.Cursor: 1500 * time.Millisecond}, in.req.ProviderStallTimeouts)

	rf.stallTimeout, rf.stallTimeoutSet, rf.stallTimeoutFor = 0, false, nil
	in, err = prepareRun(rf)
	require.NoError(t, err)
	require.Zero(t, in.req.StallTimeout)
	require.Nil(t, in.req.ProviderStallTimeouts)
}
