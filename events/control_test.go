package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

func sampleControl() events.Control {
	return events.Control{
		ID: "c1", Kind: events.ControlVerdict, Run: "R", Lane: 0, ExecutionID: "x1",
		Verdict: &events.Verdict{State: events.VerdictClear, EvidenceRef: "diff reviewed", By: "parent"},
		Time:    eventstest.T0,
	}
}

// TestControlRoundTrip proves a control encodes and strictly decodes to
// itself, and that every rule of Validate refuses what it should.
func TestControlRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := events.EncodeControl(sampleControl())
	require.NoError(t, err)
	got, err := events.DecodeControl(b)
	require.NoError(t, err)
	want := sampleControl()
	want.Schema = events.JobSchemaVersion
	require.Equal(t, want, got)

	for _, tc := range []struct {
		name string
		mut  func(*events.Control)
	}{
		{"no payload", func(c *events.Control) { c.Verdict = nil }},
		{"two payloads", func(c *events.Control) { c.Cancel = &events.Cancel{Reason: "r", By: "b"} }},
		{"verdict without execution", func(c *events.Control) { c.ExecutionID = "" }},
		{"verdict on the run", func(c *events.Control) { c.Lane = events.RunLane }},
		{"bad verdict state", func(c *events.Control) { c.Verdict.State = "maybe" }},
		{"cancel naming an execution", func(c *events.Control) {
			c.Kind, c.Verdict, c.Cancel = events.ControlCancel, nil, &events.Cancel{Reason: "r", By: "b"}
		}},
		{"unknown kind", func(c *events.Control) { c.Kind = "pause" }},
		{"bad run id", func(c *events.Control) { c.Run = "a.b" }},
		{"no time", func(c *events.Control) { c.Time = time.Time{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleControl()
			v := *c.Verdict
			c.Verdict = &v
			tc.mut(&c)
			_, err := events.EncodeControl(c)
			require.ErrorIs(t, err, events.ErrInvalid)
		})
	}
	_, err = events.DecodeControl([]byte(`{"schema":1,"id":"c1","kind":"cancel","run":"R","lane":-1,"cancel":{"reason":"r","by":"b"},"time":"2026-11-29T12:00:00Z","extra":1}`))
	require.ErrorIs(t, err, events.ErrInvalid, "unknown key")
}

// TestControlsJoinTheRunsReports proves, on both queues, that a control is
// delivered in order among the run's reports as undecodable report bytes
// that DecodeControl reads, and that a retried publish is stored once.
func TestControlsJoinTheRunsReports(t *testing.T) {
	t.Parallel()
	srv := eventstest.StartServer(t, eventstest.WithFsync(events.FsyncInterval))
	js := eventstest.Open(t, srv, events.JetStreamConfig{})
	for name, q := range map[string]interface {
		events.Queue
		events.ControlQueue
	}{"memory": events.NewMemoryQueue(), "jetstream": js.Queue()} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			run := eventstest.NewRunID()
			rep := events.Report{ExecutionID: "x1", Run: run, Lane: 0, Kind: events.ReportAbandoned, WorkerID: "w", Time: eventstest.T0}
			_, err := q.PublishReport(ctx, rep)
			require.NoError(t, err)
			c := events.Control{ID: "c-" + run, Kind: events.ControlCancel, Run: run, Lane: events.RunLane,
				Cancel: &events.Cancel{Reason: "stop", By: "parent"}, Time: eventstest.T0}
			seq, err := q.PublishControl(ctx, c)
			require.NoError(t, err)
			again, err := q.PublishControl(ctx, c)
			require.NoError(t, err)
			require.Equal(t, seq, again, "a retried control is stored once")
			rep.Kind, rep.Lease = events.ReportClaimed, &events.LeaseInfo{TTLMs: 1000, Revision: 1}
			_, err = q.PublishReport(ctx, rep)
			require.NoError(t, err)

			ch, err := q.SubscribeReports(ctx, run, 0)
			require.NoError(t, err)
			var got []string
			for len(got) < 3 {
				d := <-ch
				if d.Err != nil {
					ctl, err := events.DecodeControl(d.Raw)
					require.NoError(t, err)
					got = append(got, "control:"+string(ctl.Kind))
					continue
				}
				got = append(got, "report:"+string(d.Report.Kind))
			}
			require.Equal(t, []string{"report:abandoned", "control:cancel", "report:claimed"}, got)
		})
	}
}
