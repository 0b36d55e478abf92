package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestCheckProbeIdentity: a health probe outcome counts only for the exact
// adapter and target that stalled; an empty or different identity on
// either side is identity_mismatch (health_unknown), whatever the probe
// said, and a missing probe hook stays unsupported.
func TestCheckProbeIdentity(t *testing.T) {
	t.Parallel()
	want := stallIdentity{adapter: "codex", target: "gpt-5.5"}
	tests := []struct {
		name string
		want stallIdentity
		got  probeOutcome
		out  string
	}{
		{name: "matching available", want: want, got: probeOutcome{want, probeAvailable}, out: probeAvailable},
		{name: "matching unavailable", want: want, got: probeOutcome{want, probeUnavailable}, out: probeUnavailable},
		{name: "matching timeout", want: want, got: probeOutcome{want, probeTimeout}, out: probeTimeout},
		{name: "another adapter", want: want, got: probeOutcome{stallIdentity{"grok", "gpt-5.5"}, probeAvailable}, out: probeMismatch},
		{name: "another target", want: want, got: probeOutcome{stallIdentity{"codex", "gpt-5.6-sol"}, probeUnavailable}, out: probeMismatch},
		{name: "empty adapter", want: want, got: probeOutcome{stallIdentity{"", "gpt-5.5"}, probeAvailable}, out: probeMismatch},
		{name: "empty target", want: want, got: probeOutcome{stallIdentity{"codex", ""}, probeAvailable}, out: probeMismatch},
		{name: "no identity to check against", want: stallIdentity{}, got: probeOutcome{want, probeAvailable}, out: probeMismatch},
		{name: "missing hook", want: want, got: probeOutcome{class: probeUnsupported}, out: probeUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := checkProbeIdentity(tc.want, tc.got)
			require.Equal(t, tc.out, out)
			if tc.out == probeMismatch {
				health, liveness := stallHealth(out)
				require.Equal(t, "health_unknown", health)
				require.Equal(t, "unknown", liveness)
			}
		})
	}
}

// TestStallProbeOfAnotherAdapterIsMismatch: the runner joins the probe's
// outcome only after checking its identity. Here the spec the probe runs
// as names another adapter than the attempt's provider, so the passing
// probe reads identity_mismatch and the stall health_unknown.
func TestStallProbeOfAnotherAdapterIsMismatch(t *testing.T) {
	t.Parallel()
	l := newLane(t, "hang")
	l.fake.Preflight = "ok"
	r := l.runner(func(c *Config) {
		c.Lookup = func(policy.Provider) (*providers.Spec, error) {
			s, err := l.fake.spec()
			if err != nil {
				return nil, err
			}
			s.Provider = policy.Grok // the adapter the probe answers for
			return s, nil
		}
	})
	res, err := r.Run(context.Background(), stallOptions(l, policy.Codex, "gpt-5.5", 300*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, policy.StatusTimedOut, res.Receipt.Status, "%s", res.Bytes)
	require.NotNil(t, res.Stall)
	require.Equal(t, "identity_mismatch", res.Stall.Probe)
	require.Equal(t, "health_unknown", res.Stall.ProviderHealth)
	require.Equal(t, "codex", res.Stall.Adapter, "the stall names the attempt's own adapter")
}
