package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestLaunchRefusal: a role whose external attempt the runner would refuse
// at launch without a receipt is refused before the run is recorded, as a
// policy error naming the lane row, the attempt and the fix; rows the
// runner accepts pass.
func TestLaunchRefusal(t *testing.T) {
	t.Parallel()
	resolve := func(t *testing.T, text, role string) []policy.LanePolicy {
		t.Helper()
		s, err := policy.ParseSheet([]byte(text), policy.DefaultOptions())
		require.NoError(t, err)
		rp, err := policy.Resolve(s, role, policy.ParentClaude, policy.DefaultOptions())
		require.NoError(t, err)
		return rp.Lanes
	}
	const devin = `# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}` + "\n"
	const cursor = `# access: {"provider":"cursor","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}` + "\n"
	for _, tc := range []struct {
		name, sheet, want string
	}{
		{"devin swe-2 at low", devin + "bug-fix: devin:swe-2@low\n", "lane bug-fix"},
		{"devin swe-2 at xhigh", devin + "bug-fix: devin:swe-2@xhigh\n", "devin:swe-2@xhigh is invalid: SWE-2 supports medium, high and max"},
		{"effort on an unmapped devin id", devin + "bug-fix: devin:swe-3-preview@high\n", "effort is part of a Devin model UID"},
		{"cursor with an effort", cursor + "bug-fix: cursor:composer-2.5@high\n", "use @default"},
		{"antigravity without a saved apiSpend", "bug-fix: antigravity:gemini-3.1-pro-high@default\n", "needs a saved apiSpend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := engine.LaunchRefusal(resolve(t, tc.sheet, "bug-fix"))
			require.Error(t, err)
			require.True(t, policy.IsPolicy(err), "a policy error (exit 65): %v", err)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "attempt 0")
		})
	}
	for _, ok := range []string{devin + "bug-fix: devin:swe-2@high\n", cursor + "bug-fix: cursor:composer-2.5@default\n", devin + "bug-fix: devin:swe-1.6@default\n"} {
		require.NoError(t, engine.LaunchRefusal(resolve(t, ok, "bug-fix")), ok)
	}
}

// TestSubmitRefusesWhatTheRunnerWould: Submit (every client's path)
// refuses such a role before recording anything.
func TestSubmitRefusesWhatTheRunnerWould(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	_, err := h.eng.Submit(context.Background(), engine.RunRequest{
		Sheet: sheet("", "bug-fix: cursor:composer-2.5@high"), Role: "bug-fix", Parent: policy.ParentClaude,
		Prompt: []byte("x\n"), Cwd: h.repo, RunID: "refused",
	})
	require.True(t, policy.IsPolicy(err), "%v", err)
	require.ErrorContains(t, err, "cursor:composer-2.5@high")
	envs, err := h.store.LoadRun(context.Background(), "refused")
	require.NoError(t, err)
	require.Empty(t, envs, "nothing recorded")
}
