package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestForeignReportRoles: a native execution's reports are the parent
// role's, an external one's the worker role's, a finish the claiming
// connection's, and the engine's own connection (no reporter) may make
// any; a reporter that is no role's connection is refused.
func TestForeignReportRoles(t *testing.T) {
	worker := events.ConnInboxPrefix(events.RoleWorker, "UA")
	worker2 := events.ConnInboxPrefix(events.RoleWorker, "UB")
	parent := events.ConnInboxPrefix(events.RoleParent, "UC")
	claim := &events.Claim{Reporter: worker}
	rd := func(reporter string, kind events.ReportKind) events.ReportDelivery {
		return events.ReportDelivery{Reporter: reporter, Report: events.Report{Kind: kind}}
	}
	for _, c := range []struct {
		route    policy.Route
		claim    *events.Claim
		rd       events.ReportDelivery
		accepted bool
	}{
		{policy.RouteNative, nil, rd(parent, events.ReportClaimed), true},
		{policy.RouteNative, nil, rd(parent, events.ReportFinished), true},
		{policy.RouteNative, nil, rd(worker, events.ReportFinished), false},
		{policy.RouteNative, nil, rd(worker, events.ReportAbandoned), false},
		{policy.RouteNative, nil, rd("", events.ReportFinished), true},
		{policy.RouteExternal, nil, rd(parent, events.ReportClaimed), false},
		{policy.RouteExternal, nil, rd(worker, events.ReportClaimed), true},
		{policy.RouteExternal, claim, rd(worker, events.ReportFinished), true},
		{policy.RouteExternal, claim, rd(worker2, events.ReportFinished), false},
		// A stale lease's abandon comes from whichever worker found it.
		{policy.RouteExternal, claim, rd(worker2, events.ReportAbandoned), true},
		{policy.RouteExternal, claim, rd(events.InboxPrefix(events.RoleReader), events.ReportAbandoned), false},
		{policy.RouteExternal, claim, rd("_INBOX", events.ReportFinished), false},
		{policy.RouteExternal, claim, rd("", events.ReportFinished), true},
	} {
		why := foreignReport(c.route, c.claim, c.rd)
		require.Equal(t, c.accepted, why == "", "%s %s from %q: %s", c.route, c.rd.Report.Kind, c.rd.Reporter, why)
	}
}
