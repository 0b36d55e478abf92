package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// TestContainmentFromTheSelfTest: what a worker (and doctor) reports per
// mode follows the sandbox self-test: verified by the kernel for every
// provider, with codex's own sandbox named as a second layer; without a
// verified sandbox, codex's own sandbox still verifies codex and every
// other provider is UNVERIFIED with the self-test's reason and fix.
func TestContainmentFromTheSelfTest(t *testing.T) {
	t.Parallel()
	lookup := func(p policy.Provider) *providers.Spec {
		s, err := providers.Lookup(p)
		require.NoError(t, err)
		return s
	}
	kernel := sandbox.Report{ABI: 7,
		ReadOnly: sandbox.Verification{Mode: policy.ReadOnly, Class: providers.ContainmentReadOnlyNoNetwork, Verified: true, By: "the kernel (Landlock ABI 7)"},
		Writer:   sandbox.Verification{Mode: policy.IsolatedWrite, Class: providers.ContainmentWorkspaceWriteNoNetwork, Verified: true, By: "the kernel (Landlock ABI 7)"}}
	grok := activities.ContainmentFrom(kernel, lookup(policy.Grok))
	require.Equal(t, []events.ContainmentEntry{
		{Mode: policy.ReadOnly, Class: "READ_ONLY_NO_NETWORK", Reason: "verified by the kernel (Landlock ABI 7)"},
		{Mode: policy.IsolatedWrite, Class: "WORKSPACE_WRITE_NO_NETWORK", Reason: "verified by the kernel (Landlock ABI 7)"},
	}, grok)
	codex := activities.ContainmentFrom(kernel, lookup(policy.Codex))
	require.Contains(t, codex[0].Reason, "verified by the kernel (Landlock ABI 7); the provider's own sandbox stays a second layer (")

	none := sandbox.Unverified(0, "Landlock is not available on this host", "run the worker on Linux 6.12 or newer")
	grok = activities.ContainmentFrom(none, lookup(policy.Grok))
	for _, e := range grok {
		require.Equal(t, "UNVERIFIED", e.Class)
		require.Contains(t, e.Reason, "the sandbox is unverified on this host: Landlock is not available on this host")
		require.Contains(t, e.Reason, "; fix: run the worker on Linux 6.12 or newer")
	}
	codex = activities.ContainmentFrom(none, lookup(policy.Codex))
	for _, e := range codex {
		require.NotEqual(t, "UNVERIFIED", e.Class)
		require.Contains(t, e.Reason, "verified by the provider's own sandbox (")
	}
}
