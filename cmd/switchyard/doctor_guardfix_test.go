package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestGuardFixNamesOnlyVariablesToUnset (issue 28, finding 10): doctor's
// billing-guard fix tells the user to unset variables, never a route that
// is not one (OpenCode's native authentication, as the guard names it).
func TestGuardFixNamesOnlyVariablesToUnset(t *testing.T) {
	spec, err := providers.Lookup(policy.OpenCode)
	require.NoError(t, err)
	routes := providers.GuardNames(spec, nil, providers.Request{Provider: policy.OpenCode, Mode: "read-only", APISpend: policy.APISpendDeny})
	require.NotEmpty(t, routes, "opencode's guard names its native authentication under deny")

	fix := guardFix(policy.OpenCode, routes)
	require.NotContains(t, fix, "unset", fix)
	require.Contains(t, fix, `approve API spend for opencode in the sheet (apiSpend "approved")`)

	fix = guardFix(policy.Grok, []string{"XAI_API_KEY"})
	require.Equal(t, `unset XAI_API_KEY in the environment that launches grok, or approve API spend for grok in the sheet (apiSpend "approved")`, fix)

	fix = guardFix(policy.OpenCode, append([]string{"OPENAI_API_KEY"}, routes...))
	require.Contains(t, fix, "unset OPENAI_API_KEY in the environment")
	require.NotContains(t, fix, "unset OPENAI_API_KEY, ")
}
