package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// withUncontained makes the gate find p's containment UNVERIFIED (a host
// whose sandbox could not be verified and a provider without its own),
// every other provider verified by the kernel.
func withUncontained(p policy.Provider) option {
	return func(h *harness, c *engine.Config) {
		c.Containment = func(spec *providers.Spec, mode policy.Access) policy.ContainmentEvidence {
			ev := policy.ContainmentEvidence{Mode: mode}
			if spec.Provider == p {
				ev.Class, ev.Why, ev.Fix = policy.ContainmentUnverified, "simulated host without Landlock", "run the worker on Linux 6.12 or newer"
				return ev
			}
			ev.Class, ev.By = ev.Required(), "the kernel (Landlock ABI 7)"
			return ev
		}
	}
}

// TestContainmentUnverifiedIsExcludedBeforeRouting: a writer attempt on a
// provider that cannot be contained is excluded before launch with
// containment_unverified (its CLI never gets a job), the exclusion records
// the containment evidence, replay recomputes it, and the lane moves on to
// the next route its sheet allows; the run's --allow-unverified-containment
// for that provider launches it instead.
func TestContainmentUnverifiedIsExcludedBeforeRouting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory, withUncontained(policy.Codex))
	h.run()
	s := sheet(routeFallback, "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default")
	run := h.submit(s, "bug-fix", policy.IsolatedWrite)
	cursor := h.nextJob(events.JobSubject("cursor"))
	require.Equal(t, 1, cursor.AttemptIndex)
	h.finishWith(cursor, "success")
	_, envs := h.waitFinal(run)
	h.noJob(run, events.JobSubject("codex"))

	ex := excludes(envs)
	require.Len(t, ex, 1, "one exclusion:\n%s", dump(envs))
	x := ex[0]
	require.Equal(t, "codex:gpt-5.6-sol@high", x.Descriptor)
	require.Equal(t, policy.ExcludeContainmentUnverified, x.Verdict.Code)
	require.True(t, strings.HasPrefix(x.Verdict.Detail, "codex: isolated-write containment is UNVERIFIED, not the required WORKSPACE_WRITE_NO_NETWORK: simulated host without Landlock; fix: run the worker on Linux 6.12 or newer, or pass --allow-unverified-containment codex"), x.Verdict.Detail)
	require.Equal(t, &policy.ContainmentEvidence{Mode: policy.IsolatedWrite, Class: policy.ContainmentUnverified,
		Why: "simulated host without Landlock", Fix: "run the worker on Linux 6.12 or newer"}, x.Containment)
	require.Nil(t, x.Report, "no capacity report is read for an uncontainable attempt")
	launches := ofType(envs, events.TypeLaunch)
	require.Len(t, launches, 1)
	require.Equal(t, &policy.ContainmentEvidence{Mode: policy.IsolatedWrite, Class: policy.ContainmentWorkspaceWrite,
		By: "the kernel (Landlock ABI 7)"}, launches[0].Payload.(events.Launch).Containment, "the launch names its containment")
	h.verifyReplay(run)

	run2 := h.submitUnrestricted(s, "bug-fix", policy.IsolatedWrite, policy.Codex)
	job := h.nextJob(events.JobSubject("codex"))
	require.Equal(t, run2, job.Run)
	require.True(t, job.AllowUnverifiedContainment)
	h.finishWith(job, "success")
	_, envs2 := h.waitFinal(run2)
	require.Empty(t, excludes(envs2))
	l2 := ofType(envs2, events.TypeLaunch)
	require.Len(t, l2, 1)
	require.Equal(t, policy.ContainmentUnverified, l2[0].Payload.(events.Launch).Containment.Class, "the opt-in launch says it is unverified")
	h.verifyReplay(run2)
}
