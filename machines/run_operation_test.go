package machines_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

const (
	headA   = "0f848e97e8437ab55e133a19a5587045a9daaaa8"
	digestX = "becbe687a36ce14a227fcf92ec2c3b5694d17f49ddb900a3e26a86c6b576e9a7"
	digestY = "aecbe687a36ce14a227fcf92ec2c3b5694d17f49ddb900a3e26a86c6b576e9a7"
)

func stepP(step events.OperationStepKind, digest, nonce string) events.OperationStep {
	return events.OperationStep{ExecutionID: "e1", Step: step, Nonce: nonce,
		Operation: policy.ParentOperation{Kind: handoff.Operation, TaskID: handoff.TaskID, CheckpointID: handoff.CheckpointID},
		Repo:      "/work/wt/e1", Head: headA, Digest: digest, Files: []string{"src/a.go"}, Checks: []string{}, By: "parent"}
}

func settleP(r events.OperationResult, ledger, digest string) events.OperationDone {
	d := opDoneP(r)
	d.Ledger, d.Digest, d.Head = ledger, digest, headA
	return d
}

// TestRunOperationLedger folds the parent's path through a lane's
// operation: validated and begun steps change no state but are held on the
// lane (begun is the pending record); operation-done settles only the
// pending digest; out-of-order steps are inconsistent.
func TestRunOperationLedger(t *testing.T) {
	t.Parallel()
	delivered := outcome(0, policy.OutcomeNeedsParentOp, true)
	delivered.Handoff = &handoff
	awaiting := func() *runLog {
		return newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, finishP("e1", delivered)).add(0, requestP(0))
	}

	r := fold(t, awaiting().add(0, stepP(events.OperationValidated, digestY, "n0")).
		add(0, stepP(events.OperationValidated, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")))
	lane := r.Lanes[0]
	assert.Equal(t, machines.StateAwaitingOperation, lane.State, "a step is no transition")
	require.NotNil(t, lane.Pending)
	assert.Equal(t, digestX, lane.Pending.Digest)
	assert.Equal(t, "n1", lane.Pending.Nonce)
	assert.Equal(t, digestX, lane.Validated.Digest, "the last validation counts")

	r = fold(t, awaiting().add(0, stepP(events.OperationValidated, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")).
		add(0, settleP(events.OperationSucceeded, events.LedgerComplete, digestX)))
	lane = r.Lanes[0]
	assert.Equal(t, machines.StateTerminal, lane.State)
	assert.Nil(t, lane.Pending)
	assert.Nil(t, lane.Validated)
	assert.Equal(t, policy.OutcomeComplete, lane.History[1].Status)

	for name, l := range map[string]*runLog{
		"begun without validation":    awaiting().add(0, stepP(events.OperationBegun, digestX, "n1")),
		"begun with another digest":   awaiting().add(0, stepP(events.OperationValidated, digestY, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")),
		"begun twice":                 awaiting().add(0, stepP(events.OperationValidated, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n2")),
		"validated after begun":       awaiting().add(0, stepP(events.OperationValidated, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")).add(0, stepP(events.OperationValidated, digestX, "n2")),
		"settled with another digest": awaiting().add(0, stepP(events.OperationValidated, digestX, "n1")).add(0, stepP(events.OperationBegun, digestX, "n1")).add(0, settleP(events.OperationFailed, events.LedgerRejected, digestY)),
		"settled without begin":       awaiting().add(0, settleP(events.OperationFailed, events.LedgerRejected, digestX)),
		"step while running": newRunLog(t, policy.ReadOnly, lanePolicy("lane#1")).
			add(0, launchP(0, "e1")).add(0, claimP("e1")).add(0, stepP(events.OperationValidated, digestX, "n1")),
	} {
		_, err := machines.FoldRun(l.envs)
		require.ErrorIs(t, err, machines.ErrInconsistent, name)
	}

	// Logs from before the ledger (operation-done with no settlement)
	// still fold.
	r = fold(t, awaiting().add(0, opDoneP(events.OperationSucceeded)))
	assert.Equal(t, machines.StateTerminal, r.Lanes[0].State)
}
