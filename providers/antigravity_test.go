package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// The seed blocks agy's gateway keys under deny when they are SET: an empty
// value or a falsy-looking one ("0", "false", "no") blocks too, because
// nothing proves agy reads such a value as "off".
func TestAntigravityGatewayBlocksWhenSetWhateverTheValue(t *testing.T) {
	t.Parallel()
	spec, err := Lookup(policy.Antigravity)
	require.NoError(t, err)
	for _, name := range []string{"AGY_GATEWAY_URL", "AGY_GATEWAY_OFF", "AGY_LLM_GATEWAY_ENDPOINT"} {
		for _, value := range []string{"", " ", "0", "false", "no", "1", "https://gw.example"} {
			env := map[string]string{name: value, "PATH": "/usr/bin"}
			req := envRequest(t, policy.Antigravity, policy.APISpendDeny)
			require.Equal(t, []string{name}, GuardNames(spec, env, req), "%s=%q must block under deny", name, value)

			approved := envRequest(t, policy.Antigravity, policy.APISpendApproved)
			require.Empty(t, GuardNames(spec, env, approved), "approved spending permits the gateway route")
			require.Contains(t, ChildEnv(spec, env, approved, nil), name+"="+value,
				"an approved gateway route reaches the child unchanged")
			require.NotContains(t, envNames(ChildEnv(spec, env, req, nil)), name)
		}
	}
	// Names that merely resemble the prefixes are not gateway keys.
	for _, name := range []string{"AGY_GATEWAY", "XAGY_GATEWAY_URL", "AGY_LLM_GATEWAY"} {
		env := map[string]string{name: "1"}
		require.Empty(t, GuardNames(spec, env, envRequest(t, policy.Antigravity, policy.APISpendDeny)), name)
	}
}
