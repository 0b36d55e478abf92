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

// TestTimeFormatBoundaries (issue 28, finding 33): relative times change
// unit exactly at a minute, an hour and a day, truncating ("59s ago" up to
// the minute), future times read "in ...", the zero time is "-", and
// --absolute-times prints RFC 3339 UTC whatever now is.
func TestTimeFormatBoundaries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	f := timeFormat{now: now}
	for _, tc := range []struct {
		name string
		ago  time.Duration
		want string
	}{
		{"now", 0, "0s ago"},
		{"under a second", 999 * time.Millisecond, "0s ago"},
		{"one second", time.Second, "1s ago"},
		{"just under a minute", time.Minute - time.Millisecond, "59s ago"},
		{"a minute", time.Minute, "1m ago"},
		{"minutes truncate", 3*time.Minute + 59*time.Second, "3m ago"},
		{"just under an hour", time.Hour - time.Second, "59m ago"},
		{"an hour", time.Hour, "1h ago"},
		{"just under a day", 24*time.Hour - time.Second, "23h ago"},
		{"a day", 24 * time.Hour, "1d ago"},
		{"days", 4*24*time.Hour + 23*time.Hour, "4d ago"},
		{"future seconds", -12 * time.Second, "in 12s"},
		{"future hours", -2*time.Hour - 30*time.Minute, "in 2h"},
	} {
		require.Equal(t, tc.want, f.at(now.Add(-tc.ago)), tc.name)
	}
	require.Equal(t, "-", f.at(time.Time{}), "the zero time")

	abs := timeFormat{now: now, absolute: true}
	berlin := time.FixedZone("CET", 3600)
	require.Equal(t, "2026-12-05T09:59:48Z", abs.at(time.Date(2026, 12, 5, 10, 59, 48, 0, berlin)), "absolute is UTC RFC 3339")
	require.Equal(t, "-", abs.at(time.Time{}))

	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{850 * time.Millisecond, "850ms"},
		{time.Second, "1s"},
		{59*time.Second + 499*time.Millisecond, "59s"},
		{59*time.Second + 500*time.Millisecond, "1m00s"},
		{65 * time.Second, "1m05s"},
		{time.Hour - time.Second, "59m59s"},
		{time.Hour, "1h00m"},
		{2*time.Hour + 4*time.Minute + 40*time.Second, "2h04m"},
		{24 * time.Hour, "1d00h"},
		{4*24*time.Hour + 3*time.Hour, "4d03h"},
	} {
		require.Equal(t, tc.want, span(tc.d), "span(%s)", tc.d)
	}
}

// TestTablesShowRelativeTimes (issue 28, finding 33): the run list, a
// run's view, the workers table and history print times relative to the
// injected now, and RFC 3339 UTC with --absolute-times.
func TestTablesShowRelativeTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	st := engine.RunStatus{Run: "r1", Role: "bug-fix", Parent: policy.ParentClaude, Access: policy.ReadOnly,
		Created: now.Add(-5*time.Minute - 3*time.Second), Updated: now.Add(-12 * time.Second),
		Lanes: []engine.LaneStatus{{Lane: 0, LaneID: "bug-fix#1", State: machines.StateRunning}}}

	var b bytes.Buffer
	rel := statusPrinter{w: &b, times: timeFormat{now: now}}
	require.NoError(t, rel.list(engine.RunList{Runs: []engine.RunStatus{st}, Matched: 1, Total: 1}, nil))
	require.Regexp(t, `(?m)^RUN\s+ROLE\s+STATE\s+LANES\s+UPDATED\nr1\s+bug-fix\s+running\s+1 running\s+12s ago\n$`, b.String())
	b.Reset()
	require.NoError(t, rel.run(st))
	require.Contains(t, b.String(), "\n  created 5m ago, last event 12s ago\n")

	b.Reset()
	abs := statusPrinter{w: &b, times: timeFormat{now: now, absolute: true}}
	require.NoError(t, abs.list(engine.RunList{Runs: []engine.RunStatus{st}, Matched: 1, Total: 1}, nil))
	require.Contains(t, b.String(), "1 running  2026-12-05T09:59:48Z\n")
	b.Reset()
	require.NoError(t, abs.run(st))
	require.Contains(t, b.String(), "\n  created 2026-12-05T09:54:57Z, last event 2026-12-05T09:59:48Z\n")

	w := events.WorkerPresence{WorkerID: "w-1", Providers: []policy.Provider{policy.Grok}, Concurrency: 2, Host: "h", PID: 42,
		Started: now.Add(-time.Hour - 4*time.Minute - 20*time.Second), Seen: now.Add(-3 * time.Second)}
	b.Reset()
	printWorkers(&b, []events.WorkerPresence{w}, timeFormat{now: now})
	require.Regexp(t, `(?m)^WORKER\s+PROVIDERS\s+CONCURRENCY\s+HOST\s+PID\s+UP\s+SEEN\nw-1\s+grok\s+2\s+h\s+42\s+1h04m\s+3s ago\n$`, b.String())
	b.Reset()
	printWorkers(&b, []events.WorkerPresence{w}, timeFormat{now: now, absolute: true})
	require.Regexp(t, `(?m)^WORKER\s+PROVIDERS\s+CONCURRENCY\s+HOST\s+PID\s+STARTED\s+SEEN\nw-1\s+grok\s+2\s+h\s+42\s+2026-12-05T08:55:40Z\s+2026-12-05T09:59:57Z\n$`, b.String())

	env := events.Envelope{Seq: 7, Run: "r1", Lane: events.RunLane, Type: events.TypeRunFinal,
		Time: now.Add(-2*time.Hour - 1500*time.Millisecond), Payload: events.RunFinal{Summary: "1 complete"}}
	b.Reset()
	require.NoError(t, printHistory(&b, []events.Envelope{env}, nil, timeFormat{now: now}))
	require.Regexp(t, `(?m)^7\s+2h ago\s+run\s+run-final\s+1 complete\n$`, b.String())
	b.Reset()
	require.NoError(t, printHistory(&b, []events.Envelope{env}, nil, timeFormat{now: now, absolute: true}))
	require.Regexp(t, `(?m)^7\s+2026-12-05T07:59:58.500Z\s+run\s+run-final\s+1 complete\n$`, b.String())
}
