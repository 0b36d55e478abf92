package main

import (
	"context"

	"github.com/switchyard-dev/switchyard/policy"
)

// normalizeSub is `switchyard policy normalize`: the receipt boundary.
func normalizeSub() policySub {
	return policySub{
		name:  "normalize",
		short: "Turn a runner receipt into a lane-state event",
		long: `Read the runner receipt of attempt --attempt on lane --lane and check it
against the frozen sheet: parent, provider, model, effort, access mode,
apiSpend and (when given) contract must match, and the receipt must be
internally consistent. Prints the lane-state event to append before calling
next again, or exits 65 naming what the receipt fails. Unproven outcomes are
downgraded to "failed".

Native attempts (aliases, or descriptors routed native for this parent) have
no runner receipt and are refused (exit 64). A missing sheet, or a role absent
from a legacy sheet, prints {"status":"unconfigured",...} (exit 0) without
reading the receipt. The event's receiptPath (and a schema-2 execution's) is
--receipt exactly as given, relative or not; a schema-2 receipt must record
that same path, so give it the absolute path the runner wrote.`,
		example: `  $ switchyard policy normalize --sheet testdata/sheets/panel.sheet --role "swarm workers" \
      --parent claude --lane 0 --attempt 0 --receipt /runs/r1/grok.receipt.json --mode read-only
  {
    "status": "event",
    "role": "swarm workers",
    "header": "swarm workers",
    "laneIndex": 0,
    "lane": "swarm workers#1",
    "attempt": "grok:grok-4.7@xhigh",
    "event": {
      "attemptIndex": 0,
      "status": "usage-exhausted",
      "processStarted": true,
      "receiptPath": "/runs/r1/grok.receipt.json"
    }
  }
`,
		flags: []flagSpec{optSheet, optRole, optParent, optLane, optAttempt, optReceipt, optMode, optContract},
		run:   runNormalize,
	}
}

func runNormalize(_ context.Context, f parsedFlags) (output, error) {
	parent, err := parseParent(f)
	if err != nil {
		return nil, err
	}
	laneIndex, err := f.index("lane", 0)
	if err != nil {
		return nil, err
	}
	attemptIndex, err := f.index("attempt", 0)
	if err != nil {
		return nil, err
	}
	mode, err := policy.ParseAccess(f["mode"])
	if err != nil {
		return nil, policy.Usagef("--mode must be read-only or isolated-write, got %q", f["mode"])
	}
	var contract policy.Contract
	if f.has("contract") {
		switch c := policy.Contract(f["contract"]); c {
		case policy.ContractLegacy, policy.ContractStrict:
			contract = c
		default:
			return nil, policy.Usagef("--contract must be legacy or strict, got %q", f["contract"])
		}
	}
	receiptPath := f["receipt"]
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
	if attemptIndex >= len(lane.Attempts) {
		return nil, policy.Usagef("--attempt %d is out of range: lane %q has %d attempt(s), 0 to %d",
			attemptIndex, lane.ID, len(lane.Attempts), len(lane.Attempts)-1)
	}
	attempt := lane.Attempts[attemptIndex]
	receipt, err := readInput(receiptPath)
	if err != nil {
		return nil, policy.Usagef("cannot read receipt %s: %v", f["receipt"], err)
	}
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent:       parent,
		Attempt:      attempt,
		AttemptIndex: attemptIndex,
		Mode:         mode,
		Contract:     contract,
		ReceiptPath:  receiptPath,
		Receipt:      receipt,
	})
	if err != nil {
		return nil, err
	}
	return eventOutput{
		Status:    statusEvent,
		Role:      rp.Role,
		Header:    rp.Header,
		LaneIndex: laneIndex,
		Lane:      lane.ID,
		Attempt:   attempt.Descriptor,
		Event:     ev,
	}, nil
}
