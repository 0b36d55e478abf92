package events_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/testdata/golden"
)

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, b, "", "  "))
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestGoldenEnvelopes pins the wire form of every event type, and proves
// each golden decodes back to the value that produced it.
func TestGoldenEnvelopes(t *testing.T) {
	for _, typ := range events.Types {
		t.Run(string(typ), func(t *testing.T) {
			env := eventstest.SampleEnvelope(typ, "R", 0, eventstest.T0)
			env.Seq = 7
			b, err := events.Encode(env)
			require.NoError(t, err)
			file := indent(t, b)
			golden.Check(t, "testdata/golden/"+string(typ)+".golden", file)
			got, err := events.Decode(file)
			require.NoError(t, err)
			require.Equal(t, env, got)
		})
	}
}

func TestGoldenJobAndReports(t *testing.T) {
	job := eventstest.SampleJob("R", 0, "x1")
	b, err := events.EncodeJob(job)
	require.NoError(t, err)
	file := indent(t, b)
	golden.Check(t, "testdata/golden/job.golden", file)
	gotJob, err := events.DecodeJob(file)
	require.NoError(t, err)
	job.Schema = events.JobSchemaVersion
	require.Equal(t, job, gotJob)

	for _, kind := range []events.ReportKind{events.ReportClaimed, events.ReportFinished, events.ReportAbandoned, events.ReportRedelivered} {
		r := eventstest.SampleReport(kind, "R", 0, "x1", "worker-a:4242")
		b, err := events.EncodeReport(r)
		require.NoError(t, err)
		file := indent(t, b)
		golden.Check(t, "testdata/golden/report-"+string(kind)+".golden", file)
		got, err := events.DecodeReport(file)
		require.NoError(t, err)
		r.Schema = events.JobSchemaVersion
		require.Equal(t, r, got)
	}
}

// TestGoldenStall pins the wire form of a response_stalled attempt's
// stall metadata on its finished report and on the finish recorded from it.
func TestGoldenStall(t *testing.T) {
	st := eventstest.SampleStall()
	r := eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "worker-a:4242")
	r.Stall = &st
	b, err := events.EncodeReport(r)
	require.NoError(t, err)
	file := indent(t, b)
	golden.Check(t, "testdata/golden/report-finished-stall.golden", file)
	got, err := events.DecodeReport(file)
	require.NoError(t, err)
	r.Schema = events.JobSchemaVersion
	require.Equal(t, r, got)

	env := eventstest.SampleEnvelope(events.TypeFinish, "R", 0, eventstest.T0)
	env.Seq = 7
	fin := env.Payload.(events.Finish)
	fin.Stall = &st
	env.Payload = fin
	b, err = events.Encode(env)
	require.NoError(t, err)
	file = indent(t, b)
	golden.Check(t, "testdata/golden/finish-stall.golden", file)
	gotEnv, err := events.Decode(file)
	require.NoError(t, err)
	require.Equal(t, env, gotEnv)

	// A stall recorded before adapter, target and the observation
	// sequence were carried still decodes, without them.
	old := []byte(strings.Replace(string(file), `,
      "adapter": "codex",
      "target": "gpt-5.6-sol",
      "healthObservationSeq": 3`, "", 1))
	require.NotEqual(t, string(file), string(old), "the golden carries the identity")
	gotEnv, err = events.Decode(old)
	require.NoError(t, err)
	bare := st
	bare.Adapter, bare.Target, bare.HealthObservationSeq = "", "", nil
	require.Equal(t, &bare, gotEnv.Payload.(events.Finish).Stall)
}

// TestEnvelopeInsideJSON proves json.Marshal and json.Unmarshal of an
// Envelope use the strict wire form.
func TestEnvelopeInsideJSON(t *testing.T) {
	env := eventstest.SampleEnvelope(events.TypeVerdict, "R", 2, eventstest.T0)
	b, err := json.Marshal(struct{ E events.Envelope }{env})
	require.NoError(t, err)
	var back struct{ E events.Envelope }
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, env, back.E)
	bad := bytes.Replace(b, []byte(`"state"`), []byte(`"State"`), 1)
	require.ErrorIs(t, json.Unmarshal(bad, &back), events.ErrInvalid)
}

// TestEnvelopeReportSeq: the events that record a report (claim, finish,
// audit) give its sequence, run-final gives how far its driver read, and
// every other event gives 0.
func TestEnvelopeReportSeq(t *testing.T) {
	for _, tc := range []struct {
		p    events.Payload
		want uint64
	}{
		{events.Claim{ReportSeq: 3}, 3},
		{events.Finish{ReportSeq: 4}, 4},
		{events.Audit{ReportSeq: 5}, 5},
		{events.RunFinal{ReportsThrough: 6}, 6},
		{events.Cancel{Reason: "r"}, 0},
		{events.GroupExhausted{}, 0},
	} {
		env := events.NewEnvelope("R", 0, eventstest.T0, tc.p)
		require.Equal(t, tc.want, env.ReportSeq(), "%T", tc.p)
	}
}
