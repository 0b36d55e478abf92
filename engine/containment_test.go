package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestAllowUnverifiedContainmentIsRecordedAndCarried: the run's explicit
// unrestricted contract is recorded in run-created (once each, in the order
// given) and set on the jobs of exactly the named providers; a run without
// it publishes jobs without it; unknown providers and a strict contract are
// refused.
func TestAllowUnverifiedContainmentIsRecordedAndCarried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory, withCapacity(events.NewMemoryCapacity()), withEligibilityWait(200*time.Millisecond))
	h.run()
	s := sheet("", "bug-fix: codex:gpt-5.6-sol@high")
	submit := func(contract policy.Contract, unrestricted ...policy.Provider) (string, error) {
		return h.eng.Submit(context.Background(), engine.RunRequest{
			Sheet: s, Role: "bug-fix", Parent: policy.ParentClaude, Mode: policy.ReadOnly,
			Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: h.repo, Timeout: time.Minute,
			Contract: contract, AllowUnknownQuota: []policy.Provider{policy.Codex}, AllowUnverifiedContainment: unrestricted,
		})
	}

	run, err := submit("", policy.Grok, policy.Codex, policy.Grok)
	require.NoError(t, err)
	job := h.nextJob(events.JobSubject("codex"))
	require.Equal(t, run, job.Run)
	require.True(t, job.AllowUnverifiedContainment, "codex is named: its job carries the allowance")
	h.finishWith(job, "success")
	r, _ := h.waitFinal(run)
	require.Equal(t, []policy.Provider{policy.Grok, policy.Codex}, r.Created.Options.AllowUnverifiedContainment)
	h.verifyReplay(run)

	run2, err := submit("", policy.Grok)
	require.NoError(t, err)
	job = h.nextJob(events.JobSubject("codex"))
	require.Equal(t, run2, job.Run)
	require.False(t, job.AllowUnverifiedContainment, "only the named providers' jobs carry it")
	h.finishWith(job, "success")
	h.waitFinal(run2)

	_, err = submit("", "codx")
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, "codx")
	_, err = submit(policy.ContractStrict, policy.Grok)
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, "legacy contract")
}
