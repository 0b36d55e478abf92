package engine_test

import (
	"context"
	"github.com/nats-io/nats.go"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// nativeSheet has one seat whose only attempt runs natively for a claude
// parent (claude:opus@max is covered by a Claude-native agent).
var nativeSheet = sheet("", "judgment and prose: claude:opus@max")

// TestNativeLaneWaitsForHostMetadata proves a native attempt is queued for
// the parent, handed out once, and finished only by the explicit host
// terminal metadata NativeReport records.
func TestNativeLaneWaitsForHostMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(nativeSheet, "judgment and prose", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateLaunching)
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.Equal(t, engine.WaitNative, st.Lanes[0].WaitingFor)
	require.Equal(t, policy.RouteNative, st.Lanes[0].Route)

	job, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
	require.NoError(t, err)
	require.NotNil(t, job)
	require.Equal(t, st.Lanes[0].ExecutionID, job.ExecutionID)
	require.Contains(t, job.ReportCommand, job.ExecutionID)
	none, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
	require.NoError(t, err)
	require.Nil(t, none)
	h.waitLane(run, 0, machines.StateRunning)

	require.ErrorIs(t, h.eng.NativeReport(ctx, "no-such-execution", policy.OutcomeComplete, nil, "x"), engine.ErrUnknownExecution)
	require.ErrorIs(t, h.eng.NativeReport(ctx, job.ExecutionID, "done", nil, "x"), engine.ErrInvalidRequest)
	notStarted := false
	// complete needs the final response at the output path.
	err = h.eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeComplete, &notStarted, "host envelope 42")
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, job.Paths.Output)
	require.NoError(t, os.WriteFile(job.Paths.Output, []byte("The README describes the checkout.\n"), 0o600))
	require.NoError(t, h.eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeComplete, &notStarted, "host envelope 42"))
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.Equal(t, "host envelope 42", fin.Host.EvidenceRef)
	require.Nil(t, fin.Receipt)
	lease, err := h.claims.Inspect(ctx, job.ExecutionID)
	require.NoError(t, err)
	require.Equal(t, events.LeaseReleased, lease.State)
	h.verifyReplay(run)
}

// TestNativeJobDeliveredAgainIsAbandoned proves a native job whose
// execution was claimed by an earlier NativeNext that never returned it is
// not handed out again: it is abandoned and the lane moves on.
func TestNativeJobDeliveredAgainIsAbandoned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(nativeSheet, "judgment and prose", policy.ReadOnly)
	r := h.waitLane(run, 0, machines.StateLaunching)
	_, err := h.claims.Claim(ctx, r.Lanes[0].Dispatch.ExecutionID, "native:claude", time.Hour)
	require.NoError(t, err)

	job, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
	require.NoError(t, err)
	require.Nil(t, job, "never handed out twice")
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateStopped, r.Lanes[0].State)
	require.True(t, ofType(envs, events.TypeFinish)[0].Payload.(events.Finish).Abandoned)
	h.verifyReplay(run)
}

// TestNativeJobOfCancelledLaneIsNotHandedOut proves NativeNext never hands
// out the job of a lane that was cancelled, whether the lane or the whole
// run was cancelled, and whether the engine had recorded the cancel or it
// was still on its way when the parent asked: no parent runs a subagent
// for a lane nobody waits for.
func TestNativeJobOfCancelledLaneIsNotHandedOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backend  backend
		runWide  bool
		recorded bool // the engine records the cancel before NativeNext
	}{
		{"lane cancel recorded", memory, false, true},
		{"run cancel recorded", memory, true, true},
		{"lane cancel not yet applied", jetstream, false, false},
		{"run cancel not yet applied", jetstream, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var opts []option
			if !tc.recorded {
				// NativeNext must find the queued job however busy the
				// machine: poll long enough for a fetch to come back.
				opts = append(opts, func(_ *harness, c *engine.Config) { c.NativePoll = 10 * time.Second })
			}
			h := newHarness(t, tc.backend, opts...)
			var published *nats.Subscription
			if !tc.recorded {
				var err error
				published, err = h.srv.Conn().SubscribeSync(events.NativeJobSubject(string(policy.ParentClaude)))
				require.NoError(t, err)
			}
			stop := h.run()
			run := h.submit(nativeSheet, "judgment and prose", policy.ReadOnly)
			r := h.waitLane(run, 0, machines.StateLaunching)
			exec := r.Lanes[0].Dispatch.ExecutionID
			if !tc.recorded {
				// The job is queued (seen published, not just recorded);
				// the cancel is sent while no engine applies it, as when
				// it races the parent's native next.
				_, err := published.NextMsg(60 * time.Second)
				require.NoError(t, err, "the launched job is published")
				stop()
			}
			target := 0
			if tc.runWide {
				target = events.RunLane
			}
			require.NoError(t, h.eng.Cancel(ctx, run, target, "superseded"))
			if tc.recorded {
				h.waitLane(run, 0, machines.StateCancelled)
			}

			job, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
			require.NoError(t, err)
			require.Nil(t, job, "the job of a cancelled lane is never handed out")
			if tc.recorded {
				_, err = h.claims.Inspect(ctx, exec)
				require.ErrorIs(t, err, events.ErrNotFound, "not even claimed")
			} else {
				lease, err := h.claims.Inspect(ctx, exec)
				require.NoError(t, err)
				require.Equal(t, events.LeaseReleased, lease.State, "the claim taken before the check is given up")
				h.startEngine()
			}
			r, envs := h.waitFinal(run)
			require.Equal(t, machines.StateCancelled, r.Lanes[0].State)
			require.Empty(t, ofType(envs, events.TypeClaim), "no claim recorded: %s", dump(envs))
			again, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
			require.NoError(t, err)
			require.Nil(t, again, "the job was removed, not returned to the queue")
			h.verifyReplay(run)
		})
	}
}
