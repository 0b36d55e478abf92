package events_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// stalledWire returns the sample finished report and finish event with the
// sample stall, encoded.
func stalledWire(t *testing.T) (report, finish string) {
	t.Helper()
	st := eventstest.SampleStall()
	r := eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "w1")
	r.Stall = &st
	rb, err := events.EncodeReport(r)
	require.NoError(t, err)
	env := eventstest.SampleEnvelope(events.TypeFinish, "R", 0, eventstest.T0)
	fin := env.Payload.(events.Finish)
	fin.Stall = &st
	env.Payload = fin
	fb, err := events.Encode(env)
	require.NoError(t, err)
	return string(rb), string(fb)
}

// TestDecodeStallRejects: a stall's vocabularies are closed and its
// timeouts bounded, on the job, the run's options, the finished report and
// the finish; each row is a valid encoding with one defect.
func TestDecodeStallRejects(t *testing.T) {
	jb, err := events.EncodeJob(eventstest.SampleJob("R", 0, "x1"))
	require.NoError(t, err)
	job := string(jb)
	created := encoded(t, events.TypeRunCreated, events.RunLane)
	rep, fin := stalledWire(t)
	sub := func(s, old, new string) string {
		t.Helper()
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	over := fmt.Sprint(events.MaxStallTimeoutMs + 1)
	type row struct{ name, in, want string }
	stallRows := func(s string) []row {
		return []row{
			{"another failure", sub(s, `"failure":"response_stalled"`, `"failure":"timed_out"`), "stall.failure"},
			{"no failure", sub(s, `"failure":"response_stalled",`, ``), "stall.failure"},
			{"unknown health", sub(s, `"providerHealth":"provider_unhealthy"`, `"providerHealth":"sick"`), "stall.providerHealth"},
			{"unhealthy but available", sub(s, `"liveness":"unavailable"`, `"liveness":"available"`), "stall.liveness"},
			{"stalled but unavailable", sub(s, `"providerHealth":"provider_unhealthy"`, `"providerHealth":"request_stalled"`), "stall.liveness"},
			{"unknown health but unavailable", sub(s, `"providerHealth":"provider_unhealthy"`, `"providerHealth":"health_unknown"`), "stall.liveness"},
			{"unknown liveness", sub(s, `"liveness":"unavailable"`, `"liveness":"gone"`), "stall.liveness"},
			{"unknown probe", sub(s, `"probe":"unavailable"`, `"probe":"maybe"`), "stall.probe"},
			{"negative idle", sub(s, `"idleMs":300012`, `"idleMs":-1`), "stall.idleMs"},
			{"negative timeout", sub(s, `"timeoutMs":300000`, `"timeoutMs":-5`), "stall.timeoutMs"},
			{"overflowing timeout", sub(s, `"timeoutMs":300000`, `"timeoutMs":`+over), "stall.timeoutMs"},
			{"unknown key", sub(s, `"fenceClosed":true`, `"fenceClosed":true,"output":"x"`), "output"},
			{"adapter without target", sub(s, `,"target":"gpt-5.6-sol"`, ``), "stall.adapter"},
			{"target without adapter", sub(s, `"adapter":"codex",`, ``), "stall.adapter"},
			{"unknown adapter", sub(s, `"adapter":"codex"`, `"adapter":"codx"`), "stall.adapter"},
			{"control character in target", sub(s, `"target":"gpt-5.6-sol"`, `"target":"gpt\u001b[31m"`), "stall.target"},
			{"observation seq zero", sub(s, `"healthObservationSeq":3`, `"healthObservationSeq":0`), "stall.healthObservationSeq"},
			{"negative observation seq", sub(s, `"healthObservationSeq":3`, `"healthObservationSeq":-1`), "healthObservationSeq"},
		}
	}
	for _, tc := range stallRows(rep) {
		t.Run("report "+tc.name, func(t *testing.T) {
			err := decodeReport([]byte(tc.in))
			require.ErrorIs(t, err, events.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for _, tc := range stallRows(fin) {
		t.Run("finish "+tc.name, func(t *testing.T) {
			_, err := events.Decode([]byte(tc.in))
			require.ErrorIs(t, err, events.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for _, tc := range []struct {
		name   string
		decode func([]byte) error
		in     string
	}{
		{"job negative stall timeout", decodeJob, sub(job, `"stallTimeoutMs":300000`, `"stallTimeoutMs":-1`)},
		{"job overflowing stall timeout", decodeJob, sub(job, `"stallTimeoutMs":300000`, `"stallTimeoutMs":`+over)},
		{"run negative stall timeout", decodeEvent, sub(created, `"stallTimeoutMs":600000`, `"stallTimeoutMs":-1`)},
		{"run overflowing stall timeout", decodeEvent, sub(created, `"stallTimeoutMs":600000`, `"stallTimeoutMs":`+over)},
		{"run stall timeout of an unknown provider", decodeEvent, sub(created, `{"grok":120000}`, `{"grok":120000,"gemini":1}`)},
		{"run negative provider stall timeout", decodeEvent, sub(created, `{"grok":120000}`, `{"grok":-120000}`)},
		{"run overflowing provider stall timeout", decodeEvent, sub(created, `{"grok":120000}`, `{"grok":`+over+`}`)},
		{"finish abandoned with a stall", decodeEvent, sub(fin, `"reportSeq":2`, `"reportSeq":2,"abandoned":true`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode([]byte(tc.in))
			require.ErrorIs(t, err, events.ErrInvalid)
			require.Contains(t, strings.ToLower(err.Error()), "stall")
		})
	}
	// Only a finished report backed by a receipt carries a stall.
	st := eventstest.SampleStall()
	for _, kind := range []events.ReportKind{events.ReportClaimed, events.ReportAbandoned, events.ReportRedelivered} {
		r := eventstest.SampleReport(kind, "R", 0, "x1", "w1")
		r.Stall = &st
		_, err := events.EncodeReport(r)
		require.ErrorIs(t, err, events.ErrInvalid, kind)
		require.ErrorContains(t, err, "stall", kind)
	}
	native := eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "w1")
	native.ReceiptPath, native.ReceiptDigest = "", ""
	native.Host = &events.HostMetadata{Status: "complete", ProcessStarted: new(true)}
	require.NoError(t, native.Validate())
	native.Stall = &st
	require.ErrorIs(t, native.Validate(), events.ErrInvalid, "a native execution has no runner watchdog")
}

func decodeEvent(b []byte) error { _, err := events.Decode(b); return err }

// TestStallAccepts: every allowed health/liveness pair and probe outcome
// decodes, and the stall timeout's bounds are inclusive.
func TestStallAccepts(t *testing.T) {
	for health, live := range events.StallHealthPairs {
		for _, probe := range events.StallProbes {
			st := eventstest.SampleStall()
			st.ProviderHealth, st.Liveness, st.Probe = health, live, probe
			require.NoError(t, st.Validate(), "%s/%s probe %s", health, live, probe)
		}
	}
	for _, ms := range []int64{0, 1, events.MaxStallTimeoutMs} {
		require.NoError(t, events.ValidateStallTimeoutMs(ms))
		j := eventstest.SampleJob("R", 0, "x1")
		j.StallTimeoutMs = ms
		_, err := events.EncodeJob(j)
		require.NoError(t, err)
	}
	got, err := events.ResolveStallTimeoutMs(0)
	require.NoError(t, err)
	require.EqualValues(t, 300000, got, "zero resolves to the contract's default")
	got, err = events.ResolveStallTimeoutMs(42)
	require.NoError(t, err)
	require.EqualValues(t, 42, got)
	_, err = events.ResolveStallTimeoutMs(-1)
	require.ErrorIs(t, err, events.ErrInvalid)
	_, err = events.ResolveStallTimeoutMs(events.MaxStallTimeoutMs + 1)
	require.ErrorIs(t, err, events.ErrInvalid)
}
