package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestAliasReducedDiversity: a lane that delivered through inherit-parent
// on the parent's claude while another lane also delivered on claude is
// named as reducing the run's provider diversity, in the JSON and the
// summary line; an alias lane whose provider no other lane delivered on
// reduces nothing.
func TestAliasReducedDiversity(t *testing.T) {
	t.Parallel()
	done := func(lane int, d string, p policy.Provider, alias bool) LaneReport {
		return LaneReport{Lane: lane, State: machines.StateComplete, Success: d,
			Attempts: []AttemptReport{{Descriptor: d, Provider: p, Outcome: policy.OutcomeComplete, Alias: alias}}}
	}
	rep := RunReport{Lanes: []LaneReport{
		done(0, "claude:sonnet@low", policy.Claude, false),
		done(1, "inherit-parent", policy.Claude, true),
		done(2, "codex:gpt-5.6-sol@high", policy.Codex, false),
	}}
	rep.Diversity = diversity(rep)
	require.Equal(t, []string{"lane 1 delivered through the alias inherit-parent on the parent's claude, as lane 0 also did: one provider fewer than its lanes"},
		rep.Diversity.AliasReduced)
	require.True(t, strings.HasSuffix(summaryLine(rep), "; an alias lane reduced provider diversity: "+rep.Diversity.AliasReduced[0]), summaryLine(rep))

	rep.Lanes[0] = done(0, "grok:grok-4.7@high", policy.Grok, false)
	rep.Diversity = diversity(rep)
	require.Empty(t, rep.Diversity.AliasReduced, "claude delivered only through the alias")
	require.NotContains(t, summaryLine(rep), "alias")
}
