package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestInterruptLines: what an interrupted self-contained run says of each
// lane comes from the log after its drive stopped, not from what the
// lane was doing when the interrupt came: a lane recorded final is
// named with its own reason, one still running is "not recorded yet", a
// terminal one awaits the next decision, a launching one is queued, one
// waiting for the parent keeps waiting, and a lane already final before
// the interrupt is not mentioned.
func TestInterruptLines(t *testing.T) {
	ext := policy.RouteExternal
	lane := func(i int, s machines.State, w engine.WaitKind, reason string) engine.LaneStatus {
		return engine.LaneStatus{Lane: i, State: s, WaitingFor: w, Route: ext, Descriptor: "grok:grok-4.7@high", Reason: reason}
	}
	before := engine.RunStatus{Lanes: []engine.LaneStatus{
		lane(0, machines.StateRunning, engine.WaitWorker, ""),
		lane(1, machines.StateRunning, engine.WaitWorker, ""),
		lane(2, machines.StateRunning, engine.WaitWorker, ""),
		lane(3, machines.StateLaunching, engine.WaitWorker, ""),
		lane(4, machines.StateInspecting, engine.WaitVerdict, ""),
		lane(5, machines.StateComplete, engine.WaitNone, "done before"),
	}}
	after := engine.RunStatus{Lanes: []engine.LaneStatus{
		lane(0, machines.StateStopped, engine.WaitNone, "not-eligible: attempt 0 grok:grok-4.7@high was stopped while it ran"),
		lane(1, machines.StateRunning, engine.WaitWorker, ""),
		lane(2, machines.StateTerminal, engine.WaitEngine, ""),
		lane(3, machines.StateLaunching, engine.WaitWorker, ""),
		lane(4, machines.StateInspecting, engine.WaitVerdict, ""),
		lane(5, machines.StateComplete, engine.WaitNone, "done before"),
	}}
	require.Equal(t, interruptLanes{
		ended:      []string{"lane 0 grok:grok-4.7@high: stopped (not-eligible: attempt 0 grok:grok-4.7@high was stopped while it ran)"},
		unrecorded: []string{"lane 1 grok:grok-4.7@high"},
		decide:     []string{"lane 2 grok:grok-4.7@high"},
		queued:     []string{"lane 3 grok:grok-4.7@high"},
		parent:     []string{"lane 4 grok:grok-4.7@high"},
	}, interruptLines(before, after))
}
