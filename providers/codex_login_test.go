package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestCodexLoginQuotesItsSignedOutSentence: the real signed-out answer
// of codex 0.171.0 (stderr "Not logged in", exit 1) is quoted in the
// evidence; any other failing output is not, so raw output never leaks.
func TestCodexLoginQuotesItsSignedOutSentence(t *testing.T) {
	t.Parallel()
	spec := mustLookup(t, policy.Codex)
	req := baseRequest(policy.Codex)
	got := spec.ReadPreflight(req, 0, exit(1, "", "Not logged in\n"))
	require.Equal(t, policy.StatusUnauthenticated, got.Status)
	require.Equal(t, `codex login status reported no login: "Not logged in" (exit 1)`, got.Evidence)
	for _, out := range []string{"Not logged in yet\n", "Error checking login status: Not logged in\n", "Not logged in\nNot logged in\n", "WARNING: x\nNot logged in\n"} {
		got := spec.ReadPreflight(req, 0, exit(1, "", out))
		require.Equal(t, policy.StatusUnauthenticated, got.Status, "%q", out)
		require.Equal(t, "codex login status reported no login (exit 1)", got.Evidence, "%q is not the whole known sentence", out)
	}
}
