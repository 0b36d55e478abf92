package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// workloads counts the model invocations the simulated CLI of p logged.
func workloads(t *testing.T, s *engineSandbox, p string) int {
	t.Helper()
	return len(simlog.Filter(simenv.Invocations(t, s.bin), p, simlog.KindWorkload))
}

// TestDoctorRoundTrip: --probe --round-trip makes exactly one real attempt
// per ready provider through the runner and reports its receipt in brief
// (status, served model, usage); a signed-out provider is skipped and one
// the billing guard blocks under deny is refused, neither launched; the
// exit code says whether every round trip that ran ended complete.
func TestDoctorRoundTrip(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t) // claude missing, codex signed out, grok fine

	// grok's OAuth login cannot prove subscription routing under deny
	// (the runner's preflight says so), so its round trips approve spend.
	out := s.doctorJSON(t, 0, nil, "--probe", "--round-trip", "--api-spend", "approved", "--descriptor", "grok:grok-4.7@low")
	require.Len(t, out.Providers, 1, "the descriptors name the providers")
	rt := doctorOf(t, out, policy.Grok).RoundTrip
	require.NotNil(t, rt)
	require.Equal(t, roundTripRan, rt.State)
	require.Equal(t, policy.StatusComplete, rt.Status)
	require.Equal(t, 0, rt.ExitCode)
	require.NotEmpty(t, rt.ReportedModel, "the model the CLI served")
	require.NotNil(t, rt.InputTokens)
	require.Positive(t, *rt.InputTokens)
	require.Equal(t, 1, workloads(t, s, "grok"), "one round trip is one model invocation")

	// Signed out: skipped, nothing launched, and with no round trip run
	// doctor exits 1.
	out = s.doctorJSON(t, exitDoctorBlocked, nil, "--probe", "--round-trip", "--descriptor", "codex:gpt-5.6-luna@low")
	rt = doctorOf(t, out, policy.Codex).RoundTrip
	require.Equal(t, roundTripSkipped, rt.State)
	require.Equal(t, "not signed in", rt.Reason)
	require.Zero(t, workloads(t, s, "codex"))

	// The billing guard blocks grok under deny when its API key is set:
	// refused before a launch. Approved spend lets the same round trip run.
	out = s.doctorJSON(t, exitDoctorBlocked, []string{"XAI_API_KEY=" + doctorSentinel}, "--probe", "--round-trip", "--descriptor", "grok:grok-4.7@low")
	rt = doctorOf(t, out, policy.Grok).RoundTrip
	require.Equal(t, roundTripRefused, rt.State)
	require.Contains(t, rt.Reason, "XAI_API_KEY")
	require.Equal(t, 1, workloads(t, s, "grok"), "a refused round trip launches nothing")
	out = s.doctorJSON(t, 0, []string{"XAI_API_KEY=" + doctorSentinel}, "--probe", "--round-trip", "--api-spend", "approved", "--descriptor", "grok:grok-4.7@low")
	require.Equal(t, roundTripRan, doctorOf(t, out, policy.Grok).RoundTrip.State)
	require.Equal(t, 2, workloads(t, s, "grok"))

	// The human form prints one line per round trip; a skipped one does
	// not fail the check when another ran complete.
	r := s.run(t, 90*time.Second, "doctor", "--data-dir", s.data, "--probe", "--round-trip", "--api-spend", "approved", "--descriptor", "grok:grok-4.7@low,codex:gpt-5.6-luna@low")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "  round trip:   grok:grok-4.7@low -> complete (exit 0), served ")
	require.Contains(t, r.stdout, "  round trip:   skipped codex:gpt-5.6-luna@low: not signed in\n")
}

// TestDoctorRoundTripFlags: a round trip is only ever asked for
// explicitly, with the attempts to make.
func TestDoctorRoundTripFlags(t *testing.T) {
	t.Parallel()
	s := newDoctorSandbox(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"without probe", []string{"--round-trip", "--descriptor", "grok:grok-4.7@low"}, "--round-trip needs --probe"},
		{"without attempts", []string{"--probe", "--round-trip"}, "--round-trip needs the attempts to make"},
		{"descriptor alone", []string{"--descriptor", "grok:grok-4.7@low"}, "--descriptor applies to --round-trip"},
		{"bad descriptor", []string{"--probe", "--round-trip", "--descriptor", "grok-4.7"}, `--descriptor "grok-4.7"`},
		{"twice", []string{"--probe", "--round-trip", "--descriptor", "grok:a@low,grok:b@low"}, "names grok twice"},
		{"bad spend", []string{"--probe", "--round-trip", "--api-spend", "maybe", "--descriptor", "grok:a@low"}, `--api-spend "maybe"`},
	} {
		r := s.run(t, 60*time.Second, append([]string{"doctor", "--data-dir", s.data}, tc.args...)...)
		require.Equal(t, exitUsage, r.code, tc.name)
		require.Contains(t, r.stderr, tc.want, tc.name)
	}
	require.Zero(t, workloads(t, s, "grok"), "no refused command launched anything")
}
