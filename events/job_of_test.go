package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestJobOf: the job a launch gives takes the attempt from the run's lane
// policy, the mode, parent, contract, timeouts and allow-flags from the
// run's options and the rest from the launch; the stall timeout is always
// the effective one; a lane or attempt the run lacks is invalid.
func TestJobOf(t *testing.T) {
	t.Parallel()
	base := func() (events.RunCreated, events.Launch) {
		return eventstest.SamplePayload(events.TypeRunCreated).(events.RunCreated), eventstest.SamplePayload(events.TypeLaunch).(events.Launch)
	}
	silent := func(policy.Provider) int64 { return 3_600_000 }
	none := func(policy.Provider) int64 { return 0 }

	c, l := base()
	job, err := events.JobOf("R", 0, c, l, none)
	require.NoError(t, err)
	require.Equal(t, events.Job{
		ExecutionID: "x1", Run: "R", Lane: 0, AttemptIndex: 0, Descriptor: "codex:gpt-5.6-sol@max",
		Provider: policy.Codex, Model: "gpt-5.6-sol", Effort: policy.EffortMax, Mode: policy.ReadOnly,
		APISpend: policy.APISpendDeny, Contract: policy.ContractLegacy, Parent: policy.ParentClaude,
		Route: policy.RouteExternal, Paths: l.Paths, TimeoutMs: 1800000, StallTimeoutMs: 600000,
	}, job)
	require.NoError(t, job.Validate())

	stall := func(edit func(*events.RunOptions), unset func(policy.Provider) int64) int64 {
		c, l := base()
		edit(&c.Options)
		job, err := events.JobOf("R", 0, c, l, unset)
		require.NoError(t, err)
		return job.StallTimeoutMs
	}
	require.Equal(t, int64(120000), stall(func(o *events.RunOptions) { o.ProviderStallTimeoutMs = map[policy.Provider]int64{policy.Codex: 120000} }, none),
		"the provider's override wins")
	require.Equal(t, int64(events.DefaultStallTimeoutMs), stall(func(o *events.RunOptions) { o.StallTimeoutMs = 0 }, none),
		"unset is the contract's default, never 0")
	require.Equal(t, int64(3_600_000), stall(func(o *events.RunOptions) { o.StallTimeoutMs = 0 }, silent),
		"unset is the provider's own default when it has one")
	require.Equal(t, int64(events.DefaultStallTimeoutMs), stall(func(o *events.RunOptions) { o.StallTimeoutMs = 0 }, nil))

	c, l = base()
	c.Options.AllowUnverifiedContainment = []policy.Provider{policy.Grok, policy.Codex}
	job, err = events.JobOf("R", 0, c, l, none)
	require.NoError(t, err)
	require.True(t, job.AllowUnverifiedContainment, "the run allows its provider")

	c, l = base()
	c.Options.OpenCodeChatGPTSubscription = true
	job, err = events.JobOf("R", 0, c, l, none)
	require.NoError(t, err)
	require.False(t, job.OpenCodeChatGPTSubscription, "only an OpenCode attempt of the one model carries the subscription")
	c.Lanes = []policy.LanePolicy{{ID: "l", Attempts: []policy.AttemptPolicy{{Descriptor: "opencode:openai/gpt-6.1-sol@default",
		Attempt:         policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.OpenCode, Model: events.OpenCodeChatGPTModel, Effort: policy.EffortDefault},
		ExhaustionGroup: policy.OpenCode, APISpend: policy.APISpendDeny, Route: policy.RouteExternal}}}}
	job, err = events.JobOf("R", 0, c, l, none)
	require.NoError(t, err)
	require.True(t, job.OpenCodeChatGPTSubscription)

	c, l = base()
	alias := c.Lanes[0].Attempts[0]                                   // a copy: the sample's slices are shared
	alias.Attempt.Provider, alias.ExhaustionGroup = "", policy.Claude // a parent alias runs on its group
	c.Lanes = []policy.LanePolicy{{ID: "l", Attempts: []policy.AttemptPolicy{alias}}}
	job, err = events.JobOf("R", 0, c, l, none)
	require.NoError(t, err)
	require.Equal(t, policy.Claude, job.Provider)

	c, l = base()
	_, err = events.JobOf("R", 1, c, l, none)
	require.ErrorIs(t, err, events.ErrInvalid, "a lane the run lacks")
	l.AttemptIndex = 1
	_, err = events.JobOf("R", 0, c, l, none)
	require.ErrorIs(t, err, events.ErrInvalid, "an attempt the lane lacks")
}
