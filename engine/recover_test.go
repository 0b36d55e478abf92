package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// handoffThenSuccess makes claude's first invocation (its workload: no probe) hand
// off and every later invocation succeed.
var handoffThenSuccess = simenv.Config{Providers: map[string]simenv.ProviderConfig{
	"claude": {Queue: []string{"handoff"}, Scenario: "success"},
}}

const continuation = `# continuation: {"on":["handoff"]}`

// recovery is a complete clear answer.
func recovery() engine.RecoverInput {
	return engine.RecoverInput{Clear: true, EvidenceRef: "review/lane0.md",
		Correction: "checkpoint C-1 committed as c0ffee", BlockageID: "handoff-C-1", SnapshotRef: "c0ffee",
		SnapshotDigest: strings.Repeat("ab", 32), PartialWorkRef: "review/partial.md",
		SideEffectsRef: "review/effects.md", StoppedWritersRef: "review/stopped.md"}
}

// waitWaiting polls run's status until lane waits for kind.
func (h *harness) waitWaiting(run string, lane int, kind engine.WaitKind) engine.RunStatus {
	h.t.Helper()
	var st engine.RunStatus
	require.Eventually(h.t, func() bool {
		var err error
		st, err = h.eng.Status(context.Background(), run)
		require.NoError(h.t, err)
		return st.Lanes[lane].WaitingFor == kind
	}, waitTimeout, 20*time.Millisecond, "lane %d waiting for %s", lane, kind)
	return st
}

// handoffAwaitingRecovery starts a worker replaying handoffThenSuccess,
// submits a one-lane handoff run under # continuation, answers its
// operation and waits until the lane waits for the recovery.
func (h *harness) handoffAwaitingRecovery() (string, engine.RunStatus) {
	h.t.Helper()
	h.startWorkerConfig(handoffThenSuccess)
	run := h.submit(sheet(continuation, "judgment and prose: claude:sonnet@low"), "judgment and prose", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateAwaitingOperation)
	h.operate(run, 0)
	return run, h.waitWaiting(run, 0, engine.WaitRecovery)
}

// TestE2EHandoffContinuesOnTheSameRoute: under # continuation for
// handoffs, a handoff whose operation succeeded waits for the parent's
// recovery (not a stop); the recover is recorded with the execution the
// engine prepared; policy.Next continues on the same descriptor with
// exactly that execution, which runs and completes; replay verifies.
func TestE2EHandoffContinuesOnTheSameRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	run, st := h.handoffAwaitingRecovery()
	require.Equal(t, machines.StateTerminal, st.Lanes[0].State)
	envs, err := h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	require.Empty(t, ofType(envs, events.TypeStop), "waiting, not stopped")
	err = h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, "again")
	require.ErrorIs(t, err, engine.ErrNotWaiting, "the lane waits for a recover, not an operation")

	require.NoError(t, h.eng.Recover(ctx, run, 0, recovery()))
	rep, changes := h.wait(run)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	var notice bool
	for _, c := range changes {
		notice = notice || (c.WaitingFor == engine.WaitRecovery && strings.Contains(c.Notice, "switchyard recover --run "+run+" --lane 0"))
	}
	require.True(t, notice, "the wait for the recovery is announced with its command")

	envs, err = h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	recs := ofType(envs, events.TypeRecover)
	require.Len(t, recs, 1)
	rec := recs[0].Payload.(events.Recover)
	require.Equal(t, events.VerdictClear, rec.State)
	next := rec.Recovery.NextExecution
	require.NotNil(t, next, "the engine prepared the continuation")
	launches := ofType(envs, events.TypeLaunch)
	require.Len(t, launches, 1)
	first := launches[0].Payload.(events.Launch)
	conts := ofType(envs, events.TypeContinue)
	require.Len(t, conts, 1)
	cont := conts[0].Payload.(events.Continue)
	require.Equal(t, next.ID, cont.ExecutionID, "the continue runs the prepared execution")
	require.Equal(t, policy.DecideContinue, cont.Decision.Kind)
	require.Equal(t, 2, cont.Decision.Execution, "the attempt's second execution")
	require.Equal(t, first.AttemptIndex, cont.AttemptIndex)
	require.Equal(t, first.Descriptor, cont.Descriptor, "the same route")
	require.NotEqual(t, first.ExecutionID, cont.ExecutionID)
	require.Equal(t, next.OutputPath, cont.Paths.Output)
	require.Equal(t, next.ReceiptPath, cont.Paths.Receipt)
	require.FileExists(t, next.ReceiptPath, "the continuation ran and wrote its receipt")
	firstPrompt, err := os.ReadFile(first.Paths.Prompt)
	require.NoError(t, err)
	contPrompt, err := os.ReadFile(cont.Paths.Prompt)
	require.NoError(t, err)
	require.NotContains(t, string(firstPrompt), "Continuation:")
	require.True(t, strings.HasPrefix(string(contPrompt), string(firstPrompt)), "the task first")
	require.Contains(t, string(contPrompt), "Correction: checkpoint C-1 committed as c0ffee\nContinue from the reviewed snapshot c0ffee;")
	h.verifyReplay(run)

	// Answering again is refused: the lane is final.
	err = h.eng.Recover(ctx, run, 0, recovery())
	require.ErrorIs(t, err, engine.ErrFinal)
}

// TestE2EHandoffContinuationDeclined: a declined recovery is recorded as
// an unsafe inspection of the handoff, so policy.Next stops the lane
// unsafe-writer (POLICY-CLI.md section 4: the unsafe gate precedes the
// handoff's operation and continuation rules), with nothing launched again.
func TestE2EHandoffContinuationDeclined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	run, _ := h.handoffAwaitingRecovery()

	bad := recovery()
	bad.SnapshotDigest = "not-a-digest"
	require.ErrorIs(t, h.eng.Recover(ctx, run, 0, bad), engine.ErrInvalidRequest)
	require.ErrorIs(t, h.eng.Recover(ctx, run, 0, engine.RecoverInput{Clear: true}), engine.ErrInvalidRequest, "evidence required")

	require.NoError(t, h.eng.Recover(ctx, run, 0, engine.RecoverInput{EvidenceRef: "review/unsafe.md"}))
	rep, _ := h.wait(run)
	require.Equal(t, machines.StateStopped, rep.Lanes[0].State)
	require.Equal(t, string(policy.StopUnsafeWriter), rep.Lanes[0].Reason)
	envs, err := h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	require.Empty(t, ofType(envs, events.TypeContinue))
	require.Len(t, ofType(envs, events.TypeRecover), 1)
	h.verifyReplay(run)
}

// TestRecoverRefusedWhenNotWaiting: a lane that waits for something else
// refuses a recover, naming what it waits for.
func TestRecoverRefusedWhenNotWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run, _ := h.submitOneLane()
	h.waitLane(run, 0, machines.StateLaunching)
	err := h.eng.Recover(ctx, run, 0, recovery())
	var le *engine.LaneError
	require.True(t, errors.As(err, &le), "%v", err)
	require.ErrorIs(t, err, engine.ErrNotWaiting)
	require.Equal(t, machines.StateLaunching, le.State)
}

// refuseOnce fails the first append of one event type, as an engine that
// died after preparing its files and before recording it would leave
// them.
type refuseOnce struct {
	events.Store
	typ     events.Type
	refused atomic.Bool
}

func (s *refuseOnce) Append(ctx context.Context, env events.Envelope, expected uint64) (uint64, error) {
	if env.Type == s.typ && s.refused.CompareAndSwap(false, true) {
		return 0, errors.New("connection lost")
	}
	return s.Store.Append(ctx, env, expected)
}

// TestContinuationPreparedTwice: the continue's execution id is fixed by
// the recorded recovery, so when its first launch is not recorded (the
// files were prepared, the append failed) the next session prepares the
// same execution again over the files nothing ran in, and it completes.
func TestContinuationPreparedTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	store := &refuseOnce{Store: h.store, typ: events.TypeContinue}
	h.cfg.Store = store
	h.startEngine()
	run, _ := h.handoffAwaitingRecovery()
	require.NoError(t, h.eng.Recover(ctx, run, 0, recovery()))
	rep, _ := h.wait(run)
	require.True(t, store.refused.Load(), "the first continue was refused")
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	envs, err := h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	require.Len(t, ofType(envs, events.TypeContinue), 1)
	h.verifyReplay(run)
}

// TestE2EPermissionBlockageContinues: a Devin attempt whose write the CLI
// denied ends permission-blocked (a verified provider-owned denial); under
// # continuation for permission it waits for the parent's recovery, and
// the continued execution on the same route completes.
func TestE2EPermissionBlockageContinues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorkerConfig(simenv.Config{Providers: map[string]simenv.ProviderConfig{
		"devin": {Queue: []string{"write-denied", "write-denied"}, Scenario: "success"}, // probe, workload
	}})
	directive := `# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["permission"]}`
	run := h.submit(sheet(directive, "bug-fix: devin:swe-2@high"), "bug-fix", policy.ReadOnly)
	h.waitWaiting(run, 0, engine.WaitRecovery)
	envs, err := h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	fins := ofType(envs, events.TypeFinish)
	require.Len(t, fins, 1)
	require.Equal(t, policy.OutcomePermissionBlocked, fins[0].Payload.(events.Finish).Event.Status)

	in := recovery()
	in.Correction, in.BlockageID = "write access granted for docs/", "devin-write-denied-1"
	require.NoError(t, h.eng.Recover(ctx, run, 0, in))
	rep, _ := h.wait(run)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	envs, err = h.store.Load(ctx, run, 0)
	require.NoError(t, err)
	require.Len(t, ofType(envs, events.TypeContinue), 1)
	h.verifyReplay(run)
}
