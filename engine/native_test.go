package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
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
	require.NoError(t, os.WriteFile(job.Paths.Artifact, []byte("# Notes\n"), 0o600))
	require.NoError(t, h.eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeComplete, &notStarted, "host envelope 42"))
	r, envs := h.waitFinal(run)
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Equal(t, job.Paths.Artifact, rep.Lanes[0].Attempts[0].Artifact, "the report names the artifact the subagent wrote")
	require.Contains(t, rep.Text(), ", artifact "+job.Paths.Artifact+"\n")
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

// submitNative submits role on sheetBytes for a claude parent in mode with
// the worker contract contract.
func (h *harness) submitNative(sheetBytes []byte, role string, mode policy.Access, contract policy.Contract) string {
	h.t.Helper()
	return h.submitParent(sheetBytes, role, policy.ParentClaude, mode, contract)
}

// submitParent is submitNative for parent.
func (h *harness) submitParent(sheetBytes []byte, role string, parent policy.Parent, mode policy.Access, contract policy.Contract) string {
	h.t.Helper()
	id, err := h.eng.Submit(context.Background(), engine.RunRequest{
		Sheet: sheetBytes, Role: role, Parent: parent, Mode: mode, Contract: contract,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: h.repo, Timeout: time.Minute,
	})
	require.NoError(h.t, err)
	return id
}

// TestNativeJobPromptIsPreparedContractThenTask proves a native job's
// prompt is the prepared worker contract (route native, the lane's mode,
// contract legacy: providers.PrepareContract, the one text `switchyard
// contract prepare` prints) followed by the assignment and the task; that the job names the shipped Claude agent covering its
// descriptor (a versioned pin normalized first); and that a read-only lane
// gets a distinct output artifact while a writer works in its worktree.
func TestNativeJobPromptIsPreparedContractThenTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, row, model string
		mode             policy.Access
		agent            string
		parent           policy.Parent
	}{
		{"read-only opus@max", "claude:opus@max", "opus", policy.ReadOnly, "pstack-opus-max", policy.ParentClaude},
		{"read-only versioned pin", "claude:claude-opus-4-5@xhigh", "opus", policy.ReadOnly, "pstack-opus-xhigh", policy.ParentClaude},
		{"writer sonnet@high", "claude:sonnet@high", "sonnet", policy.IsolatedWrite, "pstack-sonnet-high", policy.ParentClaude},
		{"alias", "inherit-parent", "", policy.ReadOnly, "", policy.ParentClaude},
		{"codex parent spawn_agent", "codex:gpt-5.6-sol@high", "gpt-5.6-sol", policy.ReadOnly, "", policy.ParentCodex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := newHarness(t, memory)
			h.run()
			run := h.submitParent(sheet("", "judgment and prose: "+tc.row), "judgment and prose", tc.parent, tc.mode, "")
			h.waitLane(run, 0, machines.StateLaunching)
			job, err := h.eng.NativeNext(ctx, tc.parent, false)
			require.NoError(t, err)
			require.NotNil(t, job)
			require.Equal(t, tc.agent, job.Agent)
			require.Equal(t, tc.model, job.Model)
			if tc.model != "" {
				require.NotEmpty(t, job.Effort)
			}
			require.Equal(t, policy.ContractLegacy, job.Contract)

			prompt, err := os.ReadFile(job.Paths.Prompt)
			require.NoError(t, err)
			text := string(prompt)
			provider := policy.Provider(tc.parent) // a native lane runs on the parent's own provider
			contract, err := providers.PrepareContract(providers.ContractRequest{Parent: tc.parent, Provider: provider,
				Route: providers.RouteNative, Mode: tc.mode, Contract: policy.ContractLegacy})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(text, contract), "the prompt starts with the prepared contract:\n%s", text)
			require.True(t, strings.HasSuffix(contract, "\n"+providers.AssignedTaskHeading+"\n"), "the contract ends with the task heading")
			require.True(t, strings.HasSuffix(text, "\n\nSummarize README.md in one sentence.\n"), "the task follows:\n%s", text)
			require.Contains(t, contract, "The parent owns the\nrepository", "the runner's ownership rules")
			require.Contains(t, contract, "pstack-handoff")
			assignment := text[len(contract):]
			require.True(t, strings.HasPrefix(assignment, "Access mode: "+string(tc.mode)+"\n"), assignment)
			if tc.mode == policy.ReadOnly {
				require.Contains(t, contract, "you may write\nthat artifact and nothing else")
				require.NotEmpty(t, job.Paths.Artifact)
				require.NotEqual(t, job.Paths.Output, job.Paths.Artifact)
				require.Equal(t, filepath.Dir(job.Paths.Prompt), filepath.Dir(job.Paths.Artifact), "private to the execution")
				require.NoFileExists(t, job.Paths.Artifact, "named, not created: the subagent writes it")
				require.Contains(t, assignment, "Output artifact (the only file you may write): "+job.Paths.Artifact+"\n")
				require.Contains(t, assignment, "Checkout to inspect (do not modify it): "+h.repo+"\n")
			} else {
				require.Contains(t, contract, "run the local checks that fit the change")
				require.Contains(t, contract, "nothing in this contract is enforced for you")
				require.Empty(t, job.Paths.Artifact, "a writer delivers in its worktree")
				require.NotEmpty(t, job.Paths.Worktree)
				require.Contains(t, assignment, "Working directory: "+job.Paths.Worktree+" (your dedicated worktree")
			}
			// The launch event records the artifact, so history shows it.
			r, err := h.eng.Status(ctx, run)
			require.NoError(t, err)
			require.Equal(t, policy.RouteNative, r.Lanes[0].Route)
		})
	}
}

// TestNativeStrictContractEndsUnsupported proves a --contract strict
// native lane ends unsupported without being handed out: failed, never
// started, no claim, no fallback to the lane's next descriptor, and the
// run report names the missing capability.
func TestNativeStrictContractEndsUnsupported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submitNative(sheet(`# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure","deadline-exceeded"]}`,
		"judgment and prose: claude:opus@max -> codex:gpt-5.6-sol@high"), "judgment and prose", policy.ReadOnly, policy.ContractStrict)
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateStopped, r.Lanes[0].State, dump(envs))
	job, err := h.eng.NativeNext(ctx, policy.ParentClaude, false)
	require.NoError(t, err)
	require.Nil(t, job, "a strict native lane is never handed out")
	require.Len(t, ofType(envs, events.TypeLaunch), 1, "no other provider is tried: %s", dump(envs))
	require.Empty(t, ofType(envs, events.TypeClaim))
	fin := ofType(envs, events.TypeFinish)
	require.Len(t, fin, 1)
	f := fin[0].Payload.(events.Finish)
	require.Contains(t, f.Unsupported, "unsupported-capability")
	require.Equal(t, policy.OutcomeFailed, f.Event.Status)
	require.NotNil(t, f.Event.ProcessStarted)
	require.False(t, *f.Event.ProcessStarted)
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Contains(t, rep.Lanes[0].Attempts[0].Cause, "strict worker contract has no native route")
	h.verifyReplay(run)
}
