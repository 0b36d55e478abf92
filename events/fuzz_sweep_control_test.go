package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// sampleControls is one valid control of every kind, the run-wide cancel
// included.
func sampleControls() []events.Control {
	op := &events.OperationDone{
		Operation: policy.ParentOperation{Kind: policy.OpRunChecks, TaskID: "t1", CheckpointID: "c1"},
		Result:    events.OperationSucceeded, Ref: "checks:run-42",
	}
	return []events.Control{
		sampleControl(),
		{ID: "c2", Kind: events.ControlOperationDone, Run: "R", Lane: 3, ExecutionID: "x2", Operation: op, Time: eventstest.T0},
		{ID: "c3", Kind: events.ControlCancel, Run: "R", Lane: 1, Cancel: &events.Cancel{Reason: "r", By: "b"}, Time: eventstest.T0},
		{ID: "c4", Kind: events.ControlCancel, Run: "run-7", Lane: events.RunLane, Cancel: &events.Cancel{Reason: "stop all", By: "alice"}, Time: eventstest.T0},
	}
}

// FuzzDecodeControl feeds arbitrary bytes to DecodeControl, which the engine
// applies to every undecodable report on a run's reports subject. It
// proves: decoding never panics; every refusal matches ErrInvalid; an
// accepted control is valid, carries exactly the payload its kind names and
// round-trips through EncodeControl unchanged.
func FuzzDecodeControl(f *testing.F) {
	for _, c := range sampleControls() {
		b, err := events.EncodeControl(c)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"schema":1,"id":"c1","kind":"cancel","run":"R","lane":-1,"cancel":{"reason":"r","by":"b"},"time":"2026-11-29T12:00:00Z","extra":1}`))
	f.Add([]byte(`{"schema":1,"id":"c1","kind":"verdict","run":"R","lane":0,"verdict":{"state":"clear","evidenceRef":"e"},"cancel":{"reason":"r","by":"b"},"time":"2026-11-29T12:00:00Z"}`))
	f.Add([]byte(`{"schema":2}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := events.DecodeControl(b)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			require.Equal(t, events.Control{}, c)
			return
		}
		require.NoError(t, c.Validate())
		require.Equal(t, events.JobSchemaVersion, c.Schema)
		switch c.Kind {
		case events.ControlVerdict:
			require.NotNil(t, c.Verdict)
		case events.ControlOperationDone:
			require.NotNil(t, c.Operation)
		case events.ControlCancel:
			require.NotNil(t, c.Cancel)
			require.Empty(t, c.ExecutionID)
		default:
			t.Fatalf("accepted control kind %q", c.Kind)
		}
		again, err := events.EncodeControl(c)
		if errors.Is(err, events.ErrTooLarge) {
			return // re-encoding may escape characters the input had raw.
		}
		require.NoError(t, err)
		back, err := events.DecodeControl(again)
		require.NoError(t, err)
		require.Equal(t, c, back)
	})
}

// FuzzParseEventSubject feeds arbitrary subjects to ParseEventSubject, which
// reads the subject of every event a store returns. It proves: it never
// panics; a refusal matches ErrInvalid; an accepted subject is exactly
// EventSubject of what it parsed to (one spelling per run and lane).
func FuzzParseEventSubject(f *testing.F) {
	for _, s := range []string{
		events.EventSubject("R", 0), events.EventSubject("run-7", 12), events.EventSubject("R", events.RunLane),
		events.EventSubject("R", events.MaxLanes), "sy.ev.R.L01", "sy.ev.R.L+1", "sy.ev.R.L-0", "sy.ev.R.L",
		"sy.ev.R", "sy.ev..L0", "sy.ev.R.L0.x", "sy.rep.R.L0", "sy.ev.R.run", "sy.ev.R.L99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		run, lane, err := events.ParseEventSubject(subject)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		require.NoError(t, events.ValidateRunID(run))
		require.True(t, lane == events.RunLane || (lane >= 0 && lane <= events.MaxLanes), "lane %d", lane)
		require.Equal(t, subject, events.EventSubject(run, lane), "accepted subject is canonical")
	})
}

// FuzzParseLaneToken feeds arbitrary tokens to ParseLaneToken. It proves:
// it never panics; a refusal matches ErrInvalid; it is the exact inverse of
// LaneToken, so a lane has one token.
func FuzzParseLaneToken(f *testing.F) {
	for _, s := range []string{"L0", "L1", "L17", "run", "L", "L00", "L01", "L+1", "L-0", "L-1", "l1", "L1 ", "L٣", "Run"} {
		f.Add(s)
	}
	f.Add(events.LaneToken(events.MaxLanes))
	f.Add(events.LaneToken(events.MaxLanes + 1))
	f.Fuzz(func(t *testing.T, tok string) {
		lane, err := events.ParseLaneToken(tok)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		require.True(t, lane == events.RunLane || (lane >= 0 && lane <= events.MaxLanes), "lane %d", lane)
		require.Equal(t, tok, events.LaneToken(lane), "accepted token is canonical")
	})
}

// FuzzValidateJobSubject feeds arbitrary subjects to ValidateJobSubject,
// which guards every job consumer. It proves: it never panics; a refusal
// matches ErrInvalid; an accepted subject is exactly JobSubject or
// NativeJobSubject of a valid name.
func FuzzValidateJobSubject(f *testing.F) {
	for _, s := range []string{events.JobSubject("codex"), events.JobSubject("open-code"), events.NativeJobSubject("claude"),
		"sy.job.native", "sy.job.native.", "sy.job.", "sy.job.Codex", "sy.job.codex.x", "sy.job.native.a.b",
		"sy.job.-x", "sy.job.a_b", "sy.job.*", "sy.job.>", "sy.ev.R.L0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		if err := events.ValidateJobSubject(subject); err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		name, native := strings.CutPrefix(subject, events.JobSubjectPrefix+"native.")
		if !native {
			name = strings.TrimPrefix(subject, events.JobSubjectPrefix)
		}
		require.NoError(t, events.ValidateProvider(name))
		if native {
			require.Equal(t, subject, events.NativeJobSubject(name))
		} else {
			require.Equal(t, subject, events.JobSubject(name))
		}
	})
}
