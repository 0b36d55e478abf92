package engine_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestOpenCodeChatGPTSubscriptionIsRecordedAndCarried: run
// --opencode-chatgpt-subscription is recorded in run-created and set on
// the job of an opencode:openai/gpt-6.1-sol@default attempt under the
// sheet's apiSpend deny, whose runner then delivers on the ChatGPT login;
// a run without it carries nothing, and that attempt is blocked by the
// billing guard.
func TestOpenCodeChatGPTSubscriptionIsRecordedAndCarried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory, withCapacity(events.NewMemoryCapacity()), withEligibilityWait(200*time.Millisecond))
	h.run()
	s := sheet(`# access: {"provider":"opencode","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`,
		"bug-fix: opencode:openai/gpt-6.1-sol@default")
	submit := func(subscription bool) string {
		id, err := h.eng.Submit(context.Background(), engine.RunRequest{
			Sheet: s, Role: "bug-fix", Parent: policy.ParentClaude, Mode: policy.ReadOnly,
			Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: h.repo, Timeout: time.Minute,
			AllowUnknownQuota: []policy.Provider{policy.OpenCode}, OpenCodeChatGPTSubscription: subscription,
		})
		require.NoError(t, err)
		return id
	}

	run := submit(true)
	job := h.nextJob(events.JobSubject("opencode"))
	require.Equal(t, run, job.Run)
	require.True(t, job.OpenCodeChatGPTSubscription)
	require.Equal(t, policy.APISpendDeny, job.APISpend)
	h.finishWith(job, "v1-subscription")
	r, _ := h.waitFinal(run)
	require.True(t, r.Created.Options.OpenCodeChatGPTSubscription)
	raw, err := os.ReadFile(job.Paths.Receipt)
	require.NoError(t, err)
	rc, err := policy.DecodeReceipt(raw)
	require.NoError(t, err)
	require.Equal(t, policy.StatusComplete, rc.Status, "the runner delivered on the ChatGPT login")
	h.verifyReplay(run)

	run2 := submit(false)
	job = h.nextJob(events.JobSubject("opencode"))
	require.Equal(t, run2, job.Run)
	require.False(t, job.OpenCodeChatGPTSubscription)
	h.finishWith(job, "v1-subscription")
	h.waitFinal(run2)
	raw, err = os.ReadFile(job.Paths.Receipt)
	require.NoError(t, err)
	rc, err = policy.DecodeReceipt(raw)
	require.NoError(t, err)
	require.Equal(t, policy.StatusBillingPolicyBlocked, rc.Status, "without the opt-in, deny blocks OpenCode's native login")
}
