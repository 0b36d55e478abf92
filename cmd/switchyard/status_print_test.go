package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
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

// TestHistoryDetail: history's one-line details of the events the e2e run
// does not produce.
func TestHistoryDetail(t *testing.T) {
	redo := &events.Report{Kind: events.ReportRedelivered, WorkerID: "w2"}
	for _, tc := range []struct {
		p    events.Payload
		want string
	}{
		{events.Audit{Reason: events.AuditRedeliveredJob, ReportSeq: 41, Report: redo, Detail: "delivery 2"},
			"redelivered-job (report 41: redelivered from w2): delivery 2"},
		{events.Audit{Reason: events.AuditMalformedReport, ReportSeq: 7, Detail: "not JSON"}, "malformed-report (report 7): not JSON"},
		{events.Finish{ExecutionID: "x1", Abandoned: true, Event: policy.Event{Status: policy.OutcomeFailed}},
			"execution x1 ended failed, process start unknown, abandoned (its worker's lease went stale)"},
		{events.Stop{Decision: policy.Decision{Kind: policy.DecidePolicyDenied, Reason: "missing-readiness"}}, "lane stopped: policy-denied missing-readiness"},
		{events.Cancel{Reason: "parent moved on", By: "claude"}, "cancelled by claude: parent moved on"},
		{events.Verdict{State: events.VerdictClear, EvidenceRef: "diff.md"}, "verdict clear, evidence diff.md"},
		{events.Recover{State: events.VerdictUnsafe, EvidenceRef: "review.md"}, "continuation declined, evidence review.md"},
		{events.Recover{State: events.VerdictClear, EvidenceRef: "review.md", Recovery: &policy.Recovery{BlockageID: "b1", SnapshotRef: "c0ffee",
			NextExecution: &policy.ExecutionIdentity{ID: "x3"}}}, "continuation cleared, evidence review.md; blockage b1, snapshot c0ffee, next execution x3"},
		{events.Continue{AttemptIndex: 1, Descriptor: "grok:grok-4.7@high", ExecutionID: "x2", Route: policy.RouteExternal},
			"same route again: attempt 1 grok:grok-4.7@high, execution x2, external"},
	} {
		require.Equal(t, tc.want, eventDetail(tc.p), "%T", tc.p)
	}
}
