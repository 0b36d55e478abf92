package main

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/switchyard-dev/switchyard/policy"
)

// outputStatus is the "status" of every policy command's stdout object.
type outputStatus string

// Output statuses.
const (
	statusValid        outputStatus = "valid"        // validate accepted the sheet.
	statusResolved     outputStatus = "resolved"     // resolve printed the role's lanes.
	statusDecision     outputStatus = "decision"     // next printed a decision.
	statusEvent        outputStatus = "event"        // normalize printed a lane-state event.
	statusUnconfigured outputStatus = "unconfigured" // no sheet, or a legacy sheet without the role.
)

// output is a policy command's stdout object. The reference helper prints
// unconfigured and validate results compactly and the rest indented by two
// spaces.
type output interface {
	indented() bool
}

// validOutput is validate's result: {"status":"valid","roles":N}, N being the
// sheet's row count.
type validOutput struct {
	Status outputStatus `json:"status"`
	Roles  int          `json:"roles"`
}

func (validOutput) indented() bool { return false }

// unconfiguredOutput tells the caller to use its documented default as one
// attempt with no fallback permission. Reason is set when the sheet is
// missing.
type unconfiguredOutput struct {
	Status outputStatus `json:"status"`
	Role   string       `json:"role"`
	Reason string       `json:"reason,omitempty"`
}

func (unconfiguredOutput) indented() bool { return false }

// resolvedOutput is resolve's result: the status followed by the
// RolePolicy's fields (role, header, lanes).
type resolvedOutput struct {
	Status outputStatus `json:"status"`
	*policy.RolePolicy
}

func (resolvedOutput) indented() bool { return true }

// decisionOutput is next's result for one lane.
type decisionOutput struct {
	Status    outputStatus    `json:"status"`
	Role      string          `json:"role"`
	Header    string          `json:"header"`
	LaneIndex int             `json:"laneIndex"`
	Lane      string          `json:"lane"`
	Decision  policy.Decision `json:"decision"`
}

func (decisionOutput) indented() bool { return true }

// eventOutput is normalize's result: the lane-state event for one receipt,
// with the attempt's descriptor.
type eventOutput struct {
	Status    outputStatus `json:"status"`
	Role      string       `json:"role"`
	Header    string       `json:"header"`
	LaneIndex int          `json:"laneIndex"`
	Lane      string       `json:"lane"`
	Attempt   string       `json:"attempt"`
	Event     policy.Event `json:"event"`
}

func (eventOutput) indented() bool { return true }

// writeOutput prints out as one JSON document followed by a newline, like
// JSON.stringify: no HTML escaping.
func writeOutput(w io.Writer, out output) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if out.indented() {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
