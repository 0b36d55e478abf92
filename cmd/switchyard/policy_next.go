package main

import (
	"context"

	"github.com/switchyard-dev/switchyard/policy"
)

// nextSub is `switchyard policy next`: the decision before every attempt.
func nextSub() policySub {
	return policySub{
		name:  "next",
		short: "Decide a lane's next step from its lane state",
		long: `Decide what one lane does next from the frozen sheet and the lane's state
file: launch an attempt, continue the same attempt, hand a parent operation
back, inspect a started writer, stop, or refuse under the saved policy
(policy-denied). The state file is read and checked first, so a state error
wins over a missing sheet; its history must be one the saved policy allows
(exit 64 otherwise). A missing sheet or a role absent from a legacy sheet
prints {"status":"unconfigured",...}.

The state file has exactly this shape (unknown keys are rejected):
  {"events":[{"attemptIndex":0,"status":"usage-exhausted","processStarted":false}],
   "exhaustedGroups":["grok"],"access":"read-only"}`,
		example: `  $ switchyard policy next --sheet testdata/sheets/panel.sheet --role "swarm workers" \
      --parent claude --state testdata/states/empty.json --lane 0
  {
    "status": "decision",
    "role": "swarm workers",
    "header": "swarm workers",
    "laneIndex": 0,
    "lane": "swarm workers#1",
    "decision": {
      "kind": "launch",
      "attemptIndex": 0,
      "attempt": { "descriptor": "grok:grok-4.7@xhigh", ... },
      "execution": 1
    }
  }

  $ switchyard policy next --sheet testdata/sheets/panel.sheet --role "swarm workers" \
      --parent claude --state testdata/states/grok-exhausted.json --lane 0
  (launches attempt 1, inherit-parent, because grok is exhausted)
`,
		flags: []flagSpec{optSheet, optRole, optParent, optState, optLane},
		run:   runNext,
	}
}

func runNext(_ context.Context, f parsedFlags) (output, error) {
	parent, err := parseParent(f)
	if err != nil {
		return nil, err
	}
	laneIndex, err := f.index("lane", 0)
	if err != nil {
		return nil, err
	}
	raw, err := readUsage("state", f["state"])
	if err != nil {
		return nil, err
	}
	st, err := policy.DecodeLaneState(raw)
	if err != nil {
		return nil, err
	}
	rp, unconfigured, err := resolveRole(f["sheet"], f["role"], parent)
	if err != nil {
		return nil, err
	}
	if unconfigured != nil {
		return *unconfigured, nil
	}
	lane, err := laneAt(rp, laneIndex)
	if err != nil {
		return nil, err
	}
	if err := policy.ValidateHistory(lane, st); err != nil {
		return nil, err
	}
	return decisionOutput{
		Status:    statusDecision,
		Role:      rp.Role,
		Header:    rp.Header,
		LaneIndex: laneIndex,
		Lane:      lane.ID,
		Decision:  policy.Next(lane, st, osFacts{}),
	}, nil
}
