package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestJobChatGPTSubscriptionNeedsItsOneAttempt: a job carries the
// ChatGPT-subscription opt-in only for opencode:openai/gpt-6.1-sol@default
// under apiSpend deny; anything else is invalid, and the field survives
// encoding.
func TestJobChatGPTSubscriptionNeedsItsOneAttempt(t *testing.T) {
	t.Parallel()
	ok := eventstest.SampleJob("R1", 0, "x1")
	ok.Provider, ok.Model, ok.Effort, ok.APISpend = policy.OpenCode, events.OpenCodeChatGPTModel, policy.EffortDefault, policy.APISpendDeny
	ok.Descriptor = "opencode:" + events.OpenCodeChatGPTModel + "@default"
	ok.OpenCodeChatGPTSubscription = true
	require.NoError(t, ok.Validate())
	b, err := events.EncodeJob(ok)
	require.NoError(t, err)
	require.Contains(t, string(b), `"opencodeChatGPTSubscription":true`)

	for name, bad := range map[string]func(*events.Job){
		"another provider": func(j *events.Job) { j.Provider = policy.Codex },
		"another model":    func(j *events.Job) { j.Model = "openai/gpt-5.5" },
		"another effort":   func(j *events.Job) { j.Effort = policy.EffortHigh },
		"approved spend":   func(j *events.Job) { j.APISpend = policy.APISpendApproved },
	} {
		j := ok
		bad(&j)
		require.ErrorIs(t, j.Validate(), events.ErrInvalid, name)
	}
}
