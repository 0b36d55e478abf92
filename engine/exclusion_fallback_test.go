package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// routeFallback is a sheet's fallback that moves on from route-unavailable
// too, the class of every exclusion but a proven exhaustion: the tests
// whose lanes move past an excluded attempt declare it.
const routeFallback = `# fallback: {"on":["usage-exhausted","route-unavailable"]}`

// TestExclusionFollowsTheSheetsFallback: codex is policy blocked
// (execution_policy_blocked, outcome class route-unavailable). A sheet
// whose fallback moves on from route-unavailable skips it to cursor; a
// sheet with `# fallback: {"on":[]}`, or the quota-only default, stops the
// lane with reason excluded and launches nothing. Each exclusion records
// the rule applied, the report, status, history and live change say it,
// and replay verifies the run and catches a flipped rule.
func TestExclusionFollowsTheSheetsFallback(t *testing.T) {
	t.Parallel()
	row := "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"
	for _, tc := range []struct {
		name      string
		directive string
		rule      policy.ExclusionRule
	}{
		{"fallback on nothing stops", `# fallback: {"on":[]}`, policy.ExclusionStops},
		{"quota-only default stops", "", policy.ExclusionStops},
		{"fallback on route-unavailable moves on", routeFallback, policy.ExclusionMovesOn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, memory)
			h.put(codexEligibility(policy.EligibilityPolicyBlocked, "credits_present"))
			h.run()
			run := h.submit(sheet(tc.directive, row), "bug-fix", policy.ReadOnly)
			if tc.rule == policy.ExclusionMovesOn {
				h.finishWith(h.nextJob(events.JobSubject("cursor")), "success")
			}
			_, envs := h.waitFinal(run)
			h.noJob(run, events.JobSubject("codex"))
			ex := excludes(envs)
			require.Len(t, ex, 1, dump(envs))
			require.Equal(t, tc.rule, ex[0].Rule)
			exSeq := ofType(envs, events.TypeExclude)[0].Seq
			notes := engine.HistoryNotes(envs)
			rep, err := h.eng.Report(context.Background(), run)
			require.NoError(t, err)
			require.Equal(t, tc.rule, rep.Lanes[0].Attempts[0].ExclusionRule)
			st, err := h.eng.Status(context.Background(), run)
			require.NoError(t, err)
			require.Equal(t, tc.rule, st.Lanes[0].Exclusions[0].Rule)

			if tc.rule == policy.ExclusionMovesOn {
				require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
				require.Contains(t, notes[exSeq], "counts as route-unavailable, which the lane's fallback "+
					`{"on":["usage-exhausted","route-unavailable"]} moves on from`)
				require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "moves on from")
			} else {
				h.noJob(run, events.JobSubject("cursor"))
				require.Equal(t, []events.Type{events.TypeExclude, events.TypeStop}, types(onLane(envs, 0)), dump(envs))
				require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
				stopped := func(t *testing.T, reason string) {
					t.Helper()
					require.True(t, strings.HasPrefix(reason, "excluded: attempt 0 codex:gpt-5.6-sol@high execution_policy_blocked"), reason)
					require.Contains(t, reason, "counts as route-unavailable, which the lane's fallback")
					require.True(t, strings.HasSuffix(reason, "does not move on from: the lane stops"), reason)
				}
				stopped(t, rep.Lanes[0].Reason)
				stopped(t, st.Lanes[0].Reason)
				stop := ofType(envs, events.TypeStop)
				require.Len(t, stop, 1)
				require.Equal(t, string(policy.StopExcluded), stop[0].Payload.(events.Stop).Decision.Reason)
				stopped(t, strings.TrimPrefix(notes[stop[0].Seq], "lane stopped: stop "))
				require.Contains(t, notes[exSeq], "does not move on from: the lane stops")
				require.Contains(t, rep.Text(), "excluded: attempt 0")
			}
			res := h.verifyReplay(run)
			require.Equal(t, 1, res.Exclusions)

			// A flipped rule is a divergence at the exclusion.
			at := -1
			for i, e := range envs {
				if e.Type == events.TypeExclude {
					at = i
				}
			}
			flipped := policy.ExclusionStops
			if tc.rule == policy.ExclusionStops {
				flipped = policy.ExclusionMovesOn
			}
			altered := copyLog(t, envs, at, func(p events.Payload) events.Payload {
				x := p.(events.Exclude)
				x.Rule = flipped
				return x
			})
			res, err = engine.Replay(context.Background(), altered, run, policy.DefaultOptions())
			require.NoError(t, err)
			require.False(t, res.Verified)
			require.Equal(t, envs[at].Seq, res.Divergence.Seq)
			require.Equal(t, engine.FieldExclusionRule, res.Divergence.Field)
			require.Equal(t, string(tc.rule), res.Divergence.Expected)
		})
	}
}

// TestExclusionClasses pins the outcome class of every exclusion code and
// the rule each fallback applies, so a new code cannot go unclassified.
func TestExclusionClasses(t *testing.T) {
	t.Parallel()
	want := map[policy.ExclusionCode]policy.Outcome{
		policy.ExcludeQuotaExhausted:        policy.OutcomeUsageExhausted,
		policy.ExcludeAllowanceUnavailable:  policy.OutcomeUsageExhausted,
		policy.ExcludeQuotaUnknown:          policy.OutcomeRouteUnavailable,
		policy.ExcludeNotSignedIn:           policy.OutcomeRouteUnavailable,
		policy.ExcludePolicyBlocked:         policy.OutcomeRouteUnavailable,
		policy.ExcludeUnverified:            policy.OutcomeRouteUnavailable,
		policy.ExcludeProviderUnhealthy:     policy.OutcomeRouteUnavailable,
		policy.ExcludeContainmentUnverified: policy.OutcomeRouteUnavailable,
	}
	require.Len(t, want, len(policy.ExclusionCodes))
	for _, c := range policy.ExclusionCodes {
		require.Equal(t, want[c], c.OutcomeClass(), c)
		require.Equal(t, policy.ExclusionStops, policy.ExclusionRuleOf(policy.FallbackPolicy{On: []policy.Outcome{}}, c), c)
		require.Equal(t, want[c] == policy.OutcomeUsageExhausted, policy.ExclusionRuleOf(policy.DefaultFallback(), c).MovesOn(), c)
	}
	require.Equal(t, policy.ExclusionStops, policy.ExclusionRuleOf(policy.DefaultFallback(), "made_up"), "an unknown code never moves on")
}
