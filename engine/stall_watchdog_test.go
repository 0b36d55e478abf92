package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestStallWatchdogIsRecorded: every run's run-created says whether its
// attempts are watched for stalls. By default it records on and each job
// carries its effective stall timeout; a run submitted with
// NoStallWatchdog (run --stall-timeout off) records off, its jobs carry
// stallWatchdogOff with no stall timeout, and its report says so. Turning
// the watchdog off while setting stall timeouts is refused.
func TestStallWatchdogIsRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	submit := func(off bool) string {
		t.Helper()
		id, err := h.eng.Submit(context.Background(), engine.RunRequest{
			Sheet: sheet("", "bug-fix: codex:gpt-5.6-sol@high"), Role: "bug-fix", Parent: policy.ParentClaude,
			Prompt: []byte("x\n"), Cwd: h.repo, NoStallWatchdog: off,
		})
		require.NoError(t, err)
		return id
	}

	on := submit(false)
	job := h.nextJob(events.JobSubject("codex"))
	require.Equal(t, on, job.Run)
	require.False(t, job.StallWatchdogOff)
	require.Equal(t, int64(events.DefaultStallTimeoutMs), job.StallTimeoutMs)
	r := h.waitLane(on, 0, machines.StateLaunching)
	require.Equal(t, events.StallWatchdogOn, r.Created.Options.StallWatchdog)
	rep, err := h.eng.Report(context.Background(), on)
	require.NoError(t, err)
	require.Equal(t, events.StallWatchdogOn, rep.StallWatchdog)
	require.NotContains(t, rep.Text(), "stall watchdog off")

	off := submit(true)
	job = h.nextJob(events.JobSubject("codex"))
	require.Equal(t, off, job.Run)
	require.True(t, job.StallWatchdogOff)
	require.Zero(t, job.StallTimeoutMs)
	r = h.waitLane(off, 0, machines.StateLaunching)
	require.Equal(t, events.StallWatchdogOff, r.Created.Options.StallWatchdog)
	rep, err = h.eng.Report(context.Background(), off)
	require.NoError(t, err)
	require.Equal(t, events.StallWatchdogOff, rep.StallWatchdog)
	require.True(t, strings.Contains(rep.Text(), "\nstall watchdog off (run --stall-timeout off)"), rep.Text())

	_, err = h.eng.Submit(context.Background(), engine.RunRequest{
		Sheet: sheet("", "bug-fix: codex:gpt-5.6-sol@high"), Role: "bug-fix", Parent: policy.ParentClaude,
		Prompt: []byte("x\n"), Cwd: h.repo, NoStallWatchdog: true, StallTimeout: time.Minute,
	})
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, "stall watchdog off")
}
