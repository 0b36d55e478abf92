package machines_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestRunExcludeRule: an exclusion recorded with the fallback-stops rule
// keeps its group out of the lane's skipped groups, is the lane's
// StoppingExclusion, and no other exclusion may follow it; one recorded
// fallback-moves-on (or before the rule existed) is skipped as before.
func TestRunExcludeRule(t *testing.T) {
	t.Parallel()
	stops := excludeP(0, policy.ExcludePolicyBlocked)
	stops.Rule = policy.ExclusionStops
	l := newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).add(0, stops)
	r := fold(t, l)
	st, err := r.LaneState(0)
	require.NoError(t, err)
	assert.Empty(t, st.ExhaustedGroups, "a stopping exclusion's group is not skipped")
	x, ok := r.StoppingExclusion(0)
	require.True(t, ok)
	assert.Equal(t, policy.ExcludePolicyBlocked, x.Code)
	assert.Equal(t, policy.ExclusionStops, x.Rule)

	after := excludeP(1, policy.ExcludeQuotaExhausted)
	after.Rule = policy.ExclusionMovesOn
	_, err = machines.FoldRun(l.add(0, after).envs)
	var le *machines.LogError
	require.True(t, errors.As(err, &le), "an exclusion after the lane's stopping one is refused: %v", err)

	moves := excludeP(0, policy.ExcludePolicyBlocked)
	moves.Rule = policy.ExclusionMovesOn
	r = fold(t, newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).add(0, moves))
	_, ok = r.StoppingExclusion(0)
	assert.False(t, ok)
	d := next(t, r, 0)
	require.Equal(t, policy.DecideLaunch, d.Kind)
	assert.Equal(t, 1, *d.AttemptIndex, "a moves-on exclusion is skipped")
}

// TestExcludeRuleValidated: an exclude naming an unknown rule is refused
// by the codec's validation.
func TestExcludeRuleValidated(t *testing.T) {
	t.Parallel()
	x := excludeP(0, policy.ExcludePolicyBlocked)
	x.Rule = "sometimes"
	_, err := events.Encode(events.NewEnvelope("run-1", 0, t0, x))
	require.ErrorContains(t, err, "rule")
}
