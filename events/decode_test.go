package events_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

func encoded(t *testing.T, typ events.Type, lane int) string {
	t.Helper()
	b, err := events.Encode(eventstest.SampleEnvelope(typ, "R", lane, eventstest.T0))
	require.NoError(t, err)
	return string(b)
}

// TestDecodeRejects proves the strict rules: each row is a valid encoding
// with one defect, and names the sentinel the error must match.
func TestDecodeRejects(t *testing.T) {
	launch := encoded(t, events.TypeLaunch, 0)
	created := encoded(t, events.TypeRunCreated, events.RunLane)
	exclude := encoded(t, events.TypeExclude, 0)
	sub := func(s, old, new string) string {
		t.Helper()
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	for _, tc := range []struct {
		name string
		in   string
		want error
	}{
		{"unknown type", sub(launch, `"type":"launch"`, `"type":"launched"`), events.ErrInvalid},
		{"unknown envelope key", sub(launch, `"run":"R"`, `"run":"R","extra":1`), events.ErrInvalid},
		{"key in the wrong case", sub(launch, `"run":"R"`, `"Run":"R"`), events.ErrInvalid},
		{"duplicate key", sub(launch, `"run":"R"`, `"run":"R","run":"S"`), events.ErrInvalid},
		{"unknown payload key", sub(launch, `"executionId"`, `"nope":true,"executionId"`), events.ErrInvalid},
		{"unknown nested key", sub(launch, `"funding":"included"`, `"funding":"included","fund":1`), events.ErrInvalid},
		{"payload of another type", sub(launch, `"type":"launch"`, `"type":"continue"`), events.ErrInvalid},
		{"wrong schema version", sub(launch, `"schema":1`, `"schema":2`), events.ErrSchemaVersion},
		{"missing schema", sub(launch, `"schema":1,`, ``), events.ErrSchemaVersion},
		{"trailing data", launch + `{}`, events.ErrInvalid},
		{"trailing garbage", launch + `x`, events.ErrInvalid},
		{"null for a string", sub(launch, `"run":"R"`, `"run":null`), events.ErrInvalid},
		{"number for a string", sub(launch, `"run":"R"`, `"run":7`), events.ErrInvalid},
		{"null payload", launch[:strings.Index(launch, `"payload":`)] + `"payload":null}`, events.ErrInvalid},
		{"negative lane", sub(launch, `"lane":0`, `"lane":-1`), events.ErrInvalid},
		{"lane-level event without lane", sub(launch, `"lane":0,`, ``), events.ErrInvalid},
		{"run-level event with a lane", sub(created, `"run":"R"`, `"run":"R","lane":0`), events.ErrInvalid},
		{"time not in UTC", sub(launch, `.123456789Z"`, `.123456789+02:00"`), events.ErrInvalid},
		{"time not RFC 3339", sub(launch, `"2026-11-29T12:00:00.123456789Z"`, `"yesterday"`), events.ErrInvalid},
		{"run id not token-safe", sub(launch, `"run":"R"`, `"run":"R.S"`), events.ErrInvalid},
		{"sheet digest mismatch", sub(created, `"sheetDigest":"sha256:f`, `"sheetDigest":"sha256:0`), events.ErrInvalid},
		{"bad decision kind", sub(launch, `"kind":"launch"`, `"kind":"stop"`), events.ErrInvalid},
		{"unknown provider allowed unknown quota", sub(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["gemini"]`), events.ErrInvalid},
		{"provider allowed unknown quota twice", sub(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["grok","codex","grok"]`), events.ErrInvalid},
		{"unknown provider allowed unverified containment", sub(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["grok"],"allowUnverifiedContainment":["gemini"]`), events.ErrInvalid},
		{"provider allowed unverified containment twice", sub(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["grok"],"allowUnverifiedContainment":["grok","grok"]`), events.ErrInvalid},
		{"unverified containment under the strict contract", sub(sub(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["grok"],"allowUnverifiedContainment":["grok"]`), `"contract":"legacy"`, `"contract":"strict"`), events.ErrInvalid},
		{"exclude of an eligible verdict", sub(exclude, `"eligible":false`, `"eligible":true`), events.ErrInvalid},
		{"exclude of an overridden verdict", sub(exclude, `"eligible":false`, `"eligible":false,"overridden":true`), events.ErrInvalid},
		{"exclude with an unknown code", sub(exclude, `"code":"execution_policy_blocked"`, `"code":"too_expensive"`), events.ErrInvalid},
		{"exclude without a code", sub(exclude, `"code":"execution_policy_blocked",`, ``), events.ErrInvalid},
		{"exclude with an unknown capacity evidence", sub(exclude, `"capacity":"measured"`, `"capacity":"guessed"`), events.ErrInvalid},
		{"exclude of a negative attempt", sub(exclude, `"attemptIndex":0`, `"attemptIndex":-1`), events.ErrInvalid},
		{"exclude without a descriptor", sub(exclude, `"descriptor":"codex:gpt-5.6-sol@max"`, `"descriptor":" "`), events.ErrInvalid},
		{"exclude of an unknown provider", sub(exclude, `"provider":"codex","source"`, `"provider":"gemini","source"`), events.ErrInvalid},
		{"exclude with an unknown source", sub(exclude, `"source":"LIVE_RPC","verdict"`, `"source":"LIVE_GUESS","verdict"`), events.ErrInvalid},
		{"exclude whose report was changed", sub(exclude, `"used_percent":42`, `"used_percent":43`), events.ErrInvalid},
		{"exclude whose digest was changed", sub(exclude, `"reportDigest":"sha256:e`, `"reportDigest":"sha256:f`), events.ErrInvalid},
		{"exclude with a malformed report digest", sub(exclude, `"reportDigest":"sha256:e`, `"reportDigest":"md5:e`), events.ErrInvalid},
		{"exclude with a report but no digest", regexp.MustCompile(`"reportDigest":"[^"]*",`).ReplaceAllString(exclude, ``), events.ErrInvalid},
		{"exclude with a digest but no report", regexp.MustCompile(`"report":\{.*\},"reportDigest"`).ReplaceAllString(exclude, `"reportDigest"`), events.ErrInvalid},
		{"exclude whose report is of another provider", strings.ReplaceAll(exclude, `"provider":"codex","snapshot"`, `"provider":"claude","snapshot"`), events.ErrInvalid},
		{"exclude whose report has an unknown key", sub(exclude, `"acquired_at"`, `"balance":1,"acquired_at"`), events.ErrInvalid},
		{"exclude whose report has an unknown reason", sub(exclude, `"credits_present"`, `"credits_maybe"`), events.ErrInvalid},
		{"exclude without evaluation time", sub(exclude, `"evaluatedAt":"2026-11-29T12:00:00.123456789Z",`, ``), events.ErrInvalid},
		{"exclude with a bad input digest", sub(exclude, `"inputDigest":"sha256:`, `"inputDigest":"sha256:x`), events.ErrInvalid},
		{"exclude on the run subject", sub(exclude, `"lane":0,`, ``), events.ErrInvalid},
		{"not JSON", `{"schema":1,`, events.ErrInvalid},
		{"not an object", `[1,2]`, events.ErrInvalid},
		{"empty", ``, events.ErrInvalid},
		{"oversize", `{"schema":1,"pad":"` + strings.Repeat("x", events.MaxEventBytes) + `"}`, events.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.Decode([]byte(tc.in))
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, events.ErrInvalid, "every decode failure is ErrInvalid")
		})
	}
}

func TestDecodeJobAndReportReject(t *testing.T) {
	jb, err := events.EncodeJob(eventstest.SampleJob("R", 0, "x1"))
	require.NoError(t, err)
	job := string(jb)
	rb, err := events.EncodeReport(eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "w1"))
	require.NoError(t, err)
	rep := string(rb)
	db, err := events.EncodeReport(eventstest.SampleReport(events.ReportRedelivered, "R", 0, "x1", "w1"))
	require.NoError(t, err)
	redo := string(db)
	for _, tc := range []struct {
		name   string
		decode func([]byte) error
		in     string
		want   error
	}{
		{"job unknown key", decodeJob, strings.Replace(job, `"run"`, `"runs":1,"run"`, 1), events.ErrInvalid},
		{"job wrong schema", decodeJob, strings.Replace(job, `"schema":1`, `"schema":3`, 1), events.ErrSchemaVersion},
		{"job trailing data", decodeJob, job + " 1", events.ErrInvalid},
		{"job relative path", decodeJob, strings.Replace(job, `"cwd":"/srv/checkout"`, `"cwd":"srv"`, 1), events.ErrInvalid},
		{"job allowing unverified containment under strict", decodeJob, strings.Replace(job, `"contract":"legacy"`, `"contract":"strict","allowUnverifiedContainment":true`, 1), events.ErrInvalid},
		{"job oversize", decodeJob, strings.Repeat(" ", events.MaxMessageBytes+1), events.ErrTooLarge},
		{"report unknown kind", decodeReport, strings.Replace(rep, `"finished"`, `"done"`, 1), events.ErrInvalid},
		{"report unknown key", decodeReport, strings.Replace(rep, `"kind"`, `"Kind"`, 1), events.ErrInvalid},
		{"report finished without receipt", decodeReport, strings.Replace(rep, `"receiptPath"`, `"_"`, 1), events.ErrInvalid},
		{"report wrong schema", decodeReport, strings.Replace(rep, `"schema":1`, `"schema":0`, 1), events.ErrSchemaVersion},
		{"report finished with a delivery count", decodeReport, strings.Replace(rep, `"kind"`, `"delivery":2,"kind"`, 1), events.ErrInvalid},
		{"report redelivered without a delivery count", decodeReport, strings.Replace(redo, `"delivery":2,`, ``, 1), events.ErrInvalid},
		{"report redelivered without a job sequence", decodeReport, strings.Replace(redo, `"jobSeq":12,`, ``, 1), events.ErrInvalid},
		{"report redelivered with delivery 0", decodeReport, strings.Replace(redo, `"delivery":2`, `"delivery":0`, 1), events.ErrInvalid},
		{"report redelivered with a receipt", decodeReport, strings.Replace(redo, `"delivery":2`, `"delivery":2,"receiptPath":"/r.json"`, 1), events.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode([]byte(tc.in))
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, events.ErrInvalid)
		})
	}
}

func decodeJob(b []byte) error    { _, err := events.DecodeJob(b); return err }
func decodeReport(b []byte) error { _, err := events.DecodeReport(b); return err }

// TestValidateRejects covers rules that only construction can break.
func TestValidateRejects(t *testing.T) {
	for name, env := range map[string]events.Envelope{
		"type differs from payload": {Schema: 1, Type: events.TypeStop, Run: "R", Lane: 0, Time: eventstest.T0,
			Payload: eventstest.SamplePayload(events.TypeComplete)},
		"complete recorded as stop": events.NewEnvelope("R", 0, eventstest.T0,
			events.Stop(eventstest.SamplePayload(events.TypeComplete).(events.Complete))),
		"future schema": {Schema: 2, Type: events.TypeCancel, Run: "R", Lane: 0, Time: eventstest.T0,
			Payload: eventstest.SamplePayload(events.TypeCancel)},
		"finish without a source": events.NewEnvelope("R", 0, eventstest.T0, events.Finish{ExecutionID: "x1"}),
		"lane out of range":       events.NewEnvelope("R", events.MaxLanes+1, eventstest.T0, eventstest.SamplePayload(events.TypeCancel)),
		"exclude with another group's report": events.NewEnvelope("R", 0, eventstest.T0, func() events.Exclude {
			p := eventstest.SamplePayload(events.TypeExclude).(events.Exclude)
			r := eventstest.SampleCapacityReport(policy.Claude, eventstest.T0)
			p.Report, p.ReportDigest = &r, eventstest.SampleReportDigest(r)
			return p
		}()),
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, env.Validate(), events.ErrInvalid)
			_, err := events.Encode(env)
			require.ErrorIs(t, err, events.ErrInvalid)
		})
	}
}

// TestExcludeWithoutReport: an exclusion computed with no report (a fresh
// deployment whose workers did not answer) is valid without one, and
// round-trips.
func TestExcludeWithoutReport(t *testing.T) {
	p := eventstest.SamplePayload(events.TypeExclude).(events.Exclude)
	p.Report, p.ReportDigest = nil, ""
	p.Verdict = policy.EligibilityVerdict{Code: policy.ExcludeQuotaUnknown, Capacity: policy.EvidenceUnknown, Detail: "no capacity report"}
	env := events.NewEnvelope("R", 0, eventstest.T0, p)
	b, err := events.Encode(env)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"report"`, "an absent report is omitted, not null")
	got, err := events.Decode(b)
	require.NoError(t, err)
	require.Equal(t, env, got)
}

// TestDecodeUnverifiedContainmentAllowance: the allowance decodes where it
// is valid (legacy contract), on the job and in run-created.
func TestDecodeUnverifiedContainmentAllowance(t *testing.T) {
	jb, err := events.EncodeJob(eventstest.SampleJob("R", 0, "x1"))
	require.NoError(t, err)
	require.NotContains(t, string(jb), "allowUnverifiedContainment", "omitted when false")
	j, err := events.DecodeJob([]byte(strings.Replace(string(jb), `"contract":"legacy"`, `"contract":"legacy","allowUnverifiedContainment":true`, 1)))
	require.NoError(t, err)
	require.True(t, j.AllowUnverifiedContainment)

	created := encoded(t, events.TypeRunCreated, events.RunLane)
	env, err := events.Decode([]byte(strings.Replace(created, `"allowUnknownQuota":["grok"]`, `"allowUnknownQuota":["grok"],"allowUnverifiedContainment":["grok","codex"]`, 1)))
	require.NoError(t, err)
	require.Equal(t, []policy.Provider{policy.Grok, policy.Codex}, env.Payload.(events.RunCreated).Options.AllowUnverifiedContainment)
}

// TestAuditReasonsAfterACancel: the report a cancel leads to is recorded
// as report-after-cancel, and a log written before that reason existed,
// which recorded it as late-report, still decodes; a reason outside the
// vocabulary is refused.
func TestAuditReasonsAfterACancel(t *testing.T) {
	rep := events.Report{ExecutionID: "x1", Run: "R", Kind: events.ReportFinished, WorkerID: "w1", Time: eventstest.T0,
		ReceiptPath: "/r/receipt.json", ReceiptDigest: events.Digest([]byte("{}"))}
	for _, reason := range []events.AuditReason{events.AuditReportAfterCancel, events.AuditLateReport} {
		env := events.NewEnvelope("R", 0, eventstest.T0, events.Audit{Reason: reason, ExecutionID: "x1", ReportSeq: 4, Report: &rep, Detail: "lane is cancelled"})
		b, err := events.Encode(env)
		require.NoError(t, err, reason)
		got, err := events.Decode(b)
		require.NoError(t, err, reason)
		require.Equal(t, env, got, reason)
	}
	_, err := events.Encode(events.NewEnvelope("R", 0, eventstest.T0, events.Audit{Reason: "report-after-cancellation"}))
	require.ErrorIs(t, err, events.ErrInvalid)
}
