package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestWorkerPromptIsPreparedContract proves the worker contract has one
// source: for every provider and mode, the prompt the runner sends is
// exactly `switchyard contract prepare --route external` followed by the
// task.
func TestWorkerPromptIsPreparedContract(t *testing.T) {
	t.Parallel()
	task := []byte("Fix the parser.\n")
	for _, p := range providers.Names() {
		spec, err := providers.Lookup(p)
		require.NoError(t, err)
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			for _, parent := range []policy.Parent{policy.ParentClaude, policy.ParentCodex} {
				prepared, err := providers.PrepareContract(providers.ContractRequest{Parent: parent, Provider: p,
					Route: providers.RouteExternal, Mode: mode, Contract: policy.ContractLegacy})
				require.NoError(t, err)
				require.Equal(t, prepared+string(task), string(workerPrompt(spec.Writer, mode, task)), "%s %s", p, mode)
			}
		}
	}
}
