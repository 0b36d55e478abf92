package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

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

	// The report a cancel leads to is expected: said in plain words,
	// apart from the anomalies, and kept by its reason in JSON.
	for _, tc := range []struct {
		name   string
		audits map[events.AuditReason]int
		want   string
	}{
		{"one, alone", map[events.AuditReason]int{events.AuditReportAfterCancel: 1},
			"  the cancelled attempt's report arrived; nothing changed\n"},
		{"two, beside a late report", map[events.AuditReason]int{events.AuditReportAfterCancel: 2, events.AuditLateReport: 1},
			"  audited deliveries (changed nothing): 1 late-report\n  2 reports of cancelled attempts arrived; nothing changed\n"},
	} {
		st.Audits = tc.audits
		text.Reset()
		require.NoError(t, statusPrinter{w: &text}.run(st), tc.name)
		require.Contains(t, text.String(), tc.want, tc.name)
		require.NotContains(t, text.String(), "report-after-cancel", tc.name)
		js.Reset()
		require.NoError(t, statusPrinter{w: &js, json: true}.run(st), tc.name)
		require.Contains(t, js.String(), `"report-after-cancel":`, tc.name)
	}
	st.Audits = map[events.AuditReason]int{events.AuditReportAfterCancel: 1}
	text.Reset()
	require.NoError(t, statusPrinter{w: &text}.run(st))
	require.NotContains(t, text.String(), "audited", "no anomaly line for an expected report")

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
		{events.Audit{Reason: events.AuditReportAfterCancel, ReportSeq: 9, Report: &events.Report{Kind: events.ReportFinished, WorkerID: "w1"},
			Detail: "the worker reported receipt cancelled"},
			"report-after-cancel (report 9: finished from w1): the cancelled attempt's report arrived; nothing changed (the worker reported receipt cancelled)"},
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

// TestSelectRuns: newest first by creation (ties by id, descending), the
// state filter before the limit, and the count of matches before the cut.
func TestSelectRuns(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 29, 13, m, 0, 0, time.UTC) }
	runs := []engine.RunStatus{
		{Run: "a", Created: at(1), Final: true},
		{Run: "b", Created: at(3)},
		{Run: "c", Created: at(2), Final: true, Cancelled: true},
		{Run: "d", Created: at(3), Final: true},
	}
	ids := func(rs []engine.RunStatus) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Run)
		}
		return out
	}
	got, n := selectRuns(runs, nil, 0)
	require.Equal(t, []string{"d", "b", "c", "a"}, ids(got))
	require.Equal(t, 4, n)
	got, n = selectRuns(runs, nil, 2)
	require.Equal(t, []string{"d", "b"}, ids(got))
	require.Equal(t, 4, n)
	states, err := parseRunStates("final, cancelled")
	require.NoError(t, err)
	got, n = selectRuns(runs, states, 1)
	require.Equal(t, []string{"d"}, ids(got))
	require.Equal(t, 3, n)

	_, err = parseRunStates("final,,running")
	require.Error(t, err, "an empty state is not a state")
}

// TestChangeLine: a run-list watch line names the run and what changed.
func TestChangeLine(t *testing.T) {
	r := engine.RunStatus{Run: "demo", Role: "swarm workers", Updated: time.Date(2026, 11, 29, 13, 23, 18, 0, time.UTC)}
	require.Equal(t, "2026-11-29T13:23:18Z run demo (swarm workers): new, running; 3 launching",
		changeLine(r, runRow{}, runRow{"running", "3 launching"}, false))
	require.Equal(t, "2026-11-29T13:23:18Z run demo (swarm workers): running -> final; 3 complete",
		changeLine(r, runRow{"running", "3 running"}, runRow{"final", "3 complete"}, true))
	require.Equal(t, "2026-11-29T13:23:18Z run demo (swarm workers): running; 1 complete, 2 running",
		changeLine(r, runRow{"running", "3 running"}, runRow{"running", "1 complete, 2 running"}, true))
}
