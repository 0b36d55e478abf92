package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// TestGrokReadOnlyTemporaryCheckoutRefused: a read-only Grok lane whose
// --cwd lies under the temporary directory is refused before any Grok
// process starts (not even the models probe), with the dispatch seed's
// reason; the same lane on a checkout outside it runs.
func TestGrokReadOnlyTemporaryCheckoutRefused(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, outside bool) (Result, string) {
		bin := simenv.Install(t, "", simenv.Config{})
		l := newLane(t, "") // its checkout is under t.TempDir()
		if outside {
			l.cwd = simenv.Checkout(t)
		}
		r, err := New(Config{
			Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": l.dir, "LANG": "C.UTF-8"},
			Stdout: l.stdout, Stderr: l.stderr, KillGrace: 2 * time.Second,
		})
		require.NoError(t, err)
		res, err := r.Run(context.Background(), Options{Parent: parentFor(policy.Grok), Provider: policy.Grok, Model: "grok-4.7",
			Effort: policy.EffortHigh, Mode: policy.ReadOnly, Prompt: l.prompt, Cwd: l.cwd, Output: l.output, Receipt: l.receipt,
			APISpend: policy.APISpendApproved})
		require.NoError(t, err)
		return res, bin
	}
	t.Run("under the temporary directory", func(t *testing.T) {
		t.Parallel()
		res, bin := run(t, false)
		rc := res.Receipt
		require.Equal(t, policy.StatusUnsupportedCapability, rc.Status)
		require.NotNil(t, rc.FailurePhase)
		require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
		require.NotNil(t, rc.ProcessStarted)
		require.False(t, *rc.ProcessStarted)
		require.NotNil(t, rc.Error)
		require.Contains(t, rc.Error.Message+rc.Error.Evidence, "a read-only Grok lane must see the actual checkout")
		require.Empty(t, simenv.Invocations(t, bin), "no grok process may start")
	})
	t.Run("on a checkout outside it", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, true)
		require.Equal(t, policy.StatusComplete, res.Receipt.Status, "%+v", res.Receipt.Error)
	})
}
