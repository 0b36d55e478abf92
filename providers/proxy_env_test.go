package providers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestChildEnvKeepsProxyAndCertificateVariables: behind a corporate proxy
// every provider's child keeps the proxy and certificate variables,
// unchanged, under every spending policy and mode; the one mode that drops
// them is OpenCode's ChatGPT-subscription attempt, which drops proxy
// controls with every other inherited route.
func TestChildEnvKeepsProxyAndCertificateVariables(t *testing.T) {
	t.Parallel()
	parent := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/worker"}
	for _, name := range ProxyEnv {
		parent[name] = "value-of-" + strings.ToLower(name)
	}
	for _, p := range Names() {
		for _, spend := range []policy.APISpend{policy.APISpendDeny, policy.APISpendApproved, policy.APISpendLegacy} {
			t.Run(string(p)+"/"+string(spend), func(t *testing.T) {
				t.Parallel()
				spec := mustLookup(t, p)
				child := ChildEnv(spec, parent, envRequest(t, p, spend), nil)
				for _, name := range ProxyEnv {
					require.Contains(t, child, name+"="+parent[name], "%s reaches the %s child unchanged", name, p)
				}
			})
		}
	}
	t.Run("the opencode chatgpt subscription drops them", func(t *testing.T) {
		t.Parallel()
		req := envRequest(t, policy.OpenCode, policy.APISpendDeny)
		req.ChatGPTSubscription = true
		child := ChildEnv(mustLookup(t, policy.OpenCode), parent, req, nil)
		for _, name := range ProxyEnv {
			require.NotContains(t, envNames(child), name)
		}
		require.Contains(t, envNames(child), "HOME", "the native login's home stays")
	})
	for _, name := range []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"} {
		require.Contains(t, ProxyEnv, name, "the issue names %s", name)
	}
}
