package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/golden"
)

func resolveFull(t *testing.T, role string, parent Parent) *RolePolicy {
	t.Helper()
	s, err := ParseSheet(readSheet(t, "full.sheet"), DefaultOptions())
	require.NoError(t, err)
	rp, err := Resolve(s, role, parent, DefaultOptions())
	require.NoError(t, err)
	return rp
}

func TestResolveGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, role string
		parent     Parent
	}{
		{"swarm-workers-claude", "swarm workers", ParentClaude},
		{"swarm-workers-codex", "swarm workers", ParentCodex},
		{"arena-runners-claude", "arena runners", ParentClaude},
		{"interrogate-reviewers-claude", "interrogate reviewers", ParentClaude},
		{"judgment-leaf-codex", "judgment", ParentCodex},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.MarshalIndent(resolveFull(t, tc.role, tc.parent), "", "  ")
			require.NoError(t, err)
			golden.Check(t, "testdata/resolve/"+tc.name+".golden", append(got, '\n'))
		})
	}
}

func TestResolveRoutes(t *testing.T) {
	t.Parallel()
	const facts = `# access: {"provider":"claude","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
`
	cases := []struct {
		name    string
		attempt string
		parent  Parent
		route   Route
		group   Provider
		desc    string
	}{
		{"codex descriptor on codex parent is native", "codex:gpt-6-astra@low", ParentCodex, RouteNative, Codex, "codex:gpt-6-astra@low"},
		{"codex descriptor on claude parent is external", "codex:gpt-6-astra@low", ParentClaude, RouteExternal, Codex, "codex:gpt-6-astra@low"},
		{"covered claude agent is native", "claude:opus@xhigh", ParentClaude, RouteNative, Claude, "claude:opus@xhigh"},
		{"uncovered claude effort is external", "claude:opus@low", ParentClaude, RouteExternal, Claude, "claude:opus@low"},
		{"unlisted claude family is external", "claude:claude-haiku-4-5@high", ParentClaude, RouteExternal, Claude, "claude:claude-haiku-4-5@high"},
		{"versioned pin normalizes and routes native", "claude:claude-fable-5-1@max", ParentClaude, RouteNative, Claude, "claude:fable@max"},
		{"claude descriptor on codex parent is external", "claude:sonnet@high", ParentCodex, RouteExternal, Claude, "claude:sonnet@high"},
		{"alias groups with the claude parent", "inherit-parent", ParentClaude, RouteNative, Claude, "inherit-parent"},
		{"alias groups with the codex parent", "auto", ParentCodex, RouteNative, Codex, "auto"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, facts+"bug-fix: "+tc.attempt)
			rp, err := Resolve(s, "bug-fix", tc.parent, DefaultOptions())
			require.NoError(t, err)
			ap := rp.Lanes[0].Attempts[0]
			require.Equal(t, tc.route, ap.Route)
			require.Equal(t, tc.group, ap.ExhaustionGroup)
			require.Equal(t, tc.desc, ap.Descriptor)
		})
	}
}

func TestResolveNativeCoverageIsConfigurable(t *testing.T) {
	t.Parallel()
	opt := DefaultOptions()
	opt.ClaudeNative = []NativeAgent{{Model: "opus", Effort: EffortLow}}
	s := mustParse(t, "bug-fix: claude:opus@low\nhow explorer: claude:opus@max")
	rp, err := Resolve(s, "bug-fix", ParentClaude, opt)
	require.NoError(t, err)
	require.Equal(t, RouteNative, rp.Lanes[0].Attempts[0].Route)
	rp, err = Resolve(s, "how explorer", ParentClaude, opt)
	require.NoError(t, err)
	require.Equal(t, RouteExternal, rp.Lanes[0].Attempts[0].Route)
}

func TestResolveAuthorization(t *testing.T) {
	t.Parallel()
	fact := func(funding, spend, prov string) string {
		return `# access: {"provider":"grok","funding":"` + funding + `","capacity":"standard","apiSpend":"` + spend + `","provenance":"` + prov + `"}` + "\n"
	}
	cases := []struct {
		name, fact, state, reason string
	}{
		{"included user deny allowed", fact("included", "deny", "user"), "allowed", ""},
		{"metered approved allowed", fact("metered", "approved", "user"), "allowed", ""},
		// Section 4: the reference's fixed sentence per cause.
		{"unknown funding blocked", fact("unknown", "approved", "user"), "blocked", "provider grok funding is unknown; unknown funding is not autoauthorized"},
		{"unknown funding blocked whatever the provenance", fact("unknown", "deny", "provider"), "blocked", "provider grok funding is unknown; unknown funding is not autoauthorized"},
		{"provider provenance blocked", fact("included", "deny", "provider"), "blocked", "provider grok access is provider-observed; funding and API spending require operator confirmation"},
		{"metered without approval blocked", fact("metered", "deny", "user"), "blocked", `provider grok funding is metered; metered routes require apiSpend "approved"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.fact+"bug-fix: grok:grok-4.7@high")
			rp, err := Resolve(s, "bug-fix", ParentClaude, DefaultOptions())
			require.NoError(t, err)
			a := rp.Lanes[0].Attempts[0].Authorization
			require.Equal(t, tc.state, a.State)
			require.Equal(t, tc.reason, a.Reason)
		})
	}
	t.Run("legacy sheet without facts is allowed and unset", func(t *testing.T) {
		rp, err := Resolve(mustParse(t, "bug-fix: grok:grok-4.7@high"), "bug-fix", ParentClaude, DefaultOptions())
		require.NoError(t, err)
		ap := rp.Lanes[0].Attempts[0]
		require.Equal(t, Authorization{State: "allowed"}, ap.Authorization)
		require.Equal(t, FundingUnset, ap.Funding)
		require.Equal(t, APISpendUnset, ap.APISpend)
		require.Equal(t, DefaultFallback(), rp.Lanes[0].Fallback, "quota-only by default")
		require.Nil(t, rp.Lanes[0].Continuation)
	})
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	const grok = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}` + "\n"
	const codex = `# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}` + "\n"
	cases := []struct {
		name, src, role string
		parent          Parent
		msg             string
	}{
		{"policy-enabled sheet missing role", grok + "bug-fix: grok:g@high", "how explorer", ParentClaude, `policy-enabled sheet has no role "how explorer"; repair it through setup before dispatch`},
		{"ambiguous leaf", "why investigators, synthesizer: auto\nreflect tooling, judgment, divergent, synthesizer: auto", "synthesizer", ParentClaude, `role "synthesizer" is ambiguous; name its row header: why investigators, synthesizer | reflect tooling, judgment, divergent, synthesizer`},
		{"missing access fact", grok + "bug-fix: grok:g@high -> claude:opus@low", "bug-fix", ParentClaude, "no access fact for provider claude"},
		{"alias and codex on codex parent", codex + "bug-fix: codex:x@high -> inherit-parent", "bug-fix", ParentCodex, "bug-fix seat 1: codex:x@high and inherit-parent: two attempts resolve to the codex account"},
		{"alias and codex apart", codex + grok + "bug-fix: codex:x@high -> grok:g@high -> inherit-parent", "bug-fix", ParentCodex, "bug-fix seat 1: codex:x@high and inherit-parent: two attempts resolve to the codex account"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(mustParse(t, tc.src), tc.role, tc.parent, DefaultOptions())
			require.True(t, IsPolicy(err), "want PolicyError, got %v", err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	t.Run("alias and codex on claude parent passes", func(t *testing.T) {
		_, err := Resolve(mustParse(t, codex+`# access: {"provider":"claude","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`+"\nbug-fix: codex:x@high -> inherit-parent"), "bug-fix", ParentClaude, DefaultOptions())
		require.NoError(t, err)
	})
	t.Run("legacy sheet missing role is unconfigured", func(t *testing.T) {
		_, err := Resolve(mustParse(t, "bug-fix: auto"), "how explorer", ParentClaude, DefaultOptions())
		require.True(t, errors.Is(err, ErrUnconfigured))
	})
	t.Run("leaf of one present row is not ambiguous", func(t *testing.T) {
		rp, err := Resolve(mustParse(t, "why investigators, synthesizer: auto"), "synthesizer", ParentClaude, DefaultOptions())
		require.NoError(t, err)
		require.Equal(t, "why investigators, synthesizer", rp.Header)
	})
	t.Run("unknown role on legacy sheet is unconfigured", func(t *testing.T) {
		_, err := Resolve(mustParse(t, "bug-fix: auto"), "no such role", ParentClaude, DefaultOptions())
		require.True(t, errors.Is(err, ErrUnconfigured))
	})
}

func TestResolveLeafRoles(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "feature, refactoring: grok:g@high\nreflect tooling, judgment, divergent, synthesizer: auto\njudgment and prose: codex:c@high")
	for role, header := range map[string]string{
		"feature":              "feature, refactoring",
		"refactoring":          "feature, refactoring",
		"feature, refactoring": "feature, refactoring",
		"judgment":             "reflect tooling, judgment, divergent, synthesizer",
		"divergent":            "reflect tooling, judgment, divergent, synthesizer",
		"judgment and prose":   "judgment and prose",
	} {
		rp, err := Resolve(s, role, ParentClaude, DefaultOptions())
		require.NoError(t, err, role)
		require.Equal(t, role, rp.Role)
		require.Equal(t, header, rp.Header, role)
		require.Equal(t, header+"#1", rp.Lanes[0].ID)
	}
}

func TestResolveContinuation(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `# continuation: {"on":["permission","handoff"],"max":3}`+"\n"+
		`# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`+"\narena runners: grok:g@high, grok:h@high")
	rp, err := Resolve(s, "arena runners", ParentClaude, DefaultOptions())
	require.NoError(t, err)
	require.Len(t, rp.Lanes, 2)
	for _, l := range rp.Lanes {
		require.Equal(t, &ContinuationPolicy{On: []ContinuationCause{ContinuePermission, ContinueHandoff}, MaxExecutions: 3}, l.Continuation)
	}
	rp.Lanes[0].Continuation.MaxExecutions = 1
	require.Equal(t, 3, rp.Lanes[1].Continuation.MaxExecutions, "lanes do not share policy values")
	require.Equal(t, 3, s.Continuation.MaxExecutions, "resolving does not alias the sheet")
}

func TestValidateSheet(t *testing.T) {
	t.Parallel()
	src := string(readSheet(t, "full.sheet"))
	n, err := ValidateSheet(mustParse(t, src), ParentClaude, DefaultOptions())
	require.NoError(t, err)
	require.Equal(t, 15, n)

	t.Run("no access facts", func(t *testing.T) {
		var lines []string
		for _, l := range strings.Split(src, "\n") {
			if !strings.HasPrefix(l, "# access:") {
				lines = append(lines, l)
			}
		}
		// Without facts the sheet is still policy-enabled (fallback line), so
		// every attempt also lacks its fact.
		_, err := ValidateSheet(mustParse(t, strings.Join(lines, "\n")), ParentClaude, DefaultOptions())
		require.ErrorContains(t, err, "setup requires access facts for every configured provider")
		require.ErrorContains(t, err, "no access fact for provider grok")
	})
	t.Run("missing row and too few architect seats", func(t *testing.T) {
		s := strings.Replace(src, "hillclimb: grok:grok-4.7@xhigh -> codex:gpt-5.6-sol@max\n", "", 1)
		s = strings.Replace(s, "architect runners: claude:opus@xhigh, codex:gpt-5.6-sol@max", "architect runners: claude:opus@xhigh", 1)
		_, err := ValidateSheet(mustParse(t, s), ParentClaude, DefaultOptions())
		var pe *PolicyError
		require.ErrorAs(t, err, &pe)
		require.Contains(t, pe.Issues, `missing role row "hillclimb"`)
		require.Contains(t, err.Error(), "architect runners needs at least 2 seats, got 1")
	})
	t.Run("unauthorized attempt", func(t *testing.T) {
		s := strings.Replace(src, `"provider":"grok","funding":"included"`, `"provider":"grok","funding":"unknown"`, 1)
		_, err := ValidateSheet(mustParse(t, s), ParentClaude, DefaultOptions())
		var pe *PolicyError
		require.ErrorAs(t, err, &pe)
		// Section 4: "<seat id>: <descriptor> is not authorized: <reason>".
		require.Contains(t, pe.Issues, "swarm workers#1: grok:grok-4.7@xhigh is not authorized: provider grok funding is unknown; unknown funding is not autoauthorized")
	})
	t.Run("parent-dependent group clash", func(t *testing.T) {
		s := strings.Replace(src, "bug-fix: codex:gpt-5.6-sol@max", "bug-fix: codex:gpt-5.6-sol@max -> auto", 1)
		_, err := ValidateSheet(mustParse(t, s), ParentClaude, DefaultOptions())
		require.NoError(t, err)
		_, err = ValidateSheet(mustParse(t, s), ParentCodex, DefaultOptions())
		require.ErrorContains(t, err, "two attempts resolve to the codex account")
	})
}
