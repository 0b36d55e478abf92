package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// TestStatusPrintsAudits: the recorded deliveries that changed nothing are
// counted by reason in status text (in reason order) and JSON, and not
// mentioned when there are none.
func TestStatusPrintsAudits(t *testing.T) {
	st := engine.RunStatus{Run: "r1", Role: "bug-fix", Final: true,
		Lanes:  []engine.LaneStatus{{Lane: 0, LaneID: "bug-fix#1", State: machines.StateComplete}},
		Audits: map[events.AuditReason]int{events.AuditRedeliveredJob: 1, events.AuditLateReport: 12}}
	var text bytes.Buffer
	require.NoError(t, statusPrinter{w: &text}.run(st))
	require.Contains(t, text.String(), "  audited deliveries (changed nothing): 12 late-report, 1 redelivered-job\n")

	var js bytes.Buffer
	require.NoError(t, statusPrinter{w: &js, json: true}.run(st))
	var back struct {
		Audits map[string]int `json:"audits"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, map[string]int{"late-report": 12, "redelivered-job": 1}, back.Audits)

	st.Audits = nil
	text.Reset()
	require.NoError(t, statusPrinter{w: &text}.run(st))
	require.NotContains(t, text.String(), "audited")
	js.Reset()
	require.NoError(t, statusPrinter{w: &js, json: true}.run(st))
	require.NotContains(t, js.String(), "audits")
}
