package engine

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// Handoff is a commit a writer lane handed to the parent: the worker asked
// for a commit-checkpoint, the parent made the commit in the attempt's
// worktree and settled the operation succeeded (operation-done with the
// commit as its ref). The commit lives only in that worktree, on a
// detached HEAD with no branch, until the parent merges it or names it
// with a ref of its own; switchyard prune keeps the worktree until then.
//
// A lane whose handoff delivered may still end stopped (the sheet's
// # continuation does not resume it, its max was reached, or the parent
// declined the continuation): the lane's machine state and reason stay as
// recorded, and reports, status and the run summary present the lane as
// having handed off the commit.
type Handoff struct {
	AttemptIndex int             `json:"attemptIndex"`
	Descriptor   string          `json:"descriptor"`
	Provider     policy.Provider `json:"provider"` // the attempt's provider group
	ExecutionID  string          `json:"executionId"`
	Task         string          `json:"task"`
	Checkpoint   string          `json:"checkpoint"`
	// Commit is the full commit the parent made and operation done
	// verified.
	Commit string `json:"commit"`
	// Worktree is where the commit lives (the attempt's worktree, a
	// detached HEAD); Checkout is the run's repository it belongs to.
	Worktree string `json:"worktree"`
	Checkout string `json:"checkout"`
}

// Text says where the handed-off commit lives and that it is the only copy
// until merged, with the command that keeps it.
func (h Handoff) Text() string {
	return fmt.Sprintf("handed off commit %s (commit-checkpoint task %s checkpoint %s, from %s); it lives in worktree %s "+
		"(a detached HEAD, on no branch) and is the only copy until you merge it: keep it with git -C %s branch NAME %s "+
		"before you prune the run (prune keeps that worktree while no branch or tag holds the commit, unless --force)",
		h.Commit, h.Task, h.Checkpoint, h.Descriptor, h.Worktree, h.Checkout, h.Commit)
}

// laneHandoffs collects the committed handoffs of a run's log (envs in
// order), per lane: every operation-done that settled a commit-checkpoint
// succeeded, with the execution it answered.
func laneHandoffs(r *machines.Run, envs []events.Envelope) map[int][]Handoff {
	out := map[int][]Handoff{}
	cur := map[int]events.Launch{}
	checkout := ""
	if r.Created != nil {
		checkout = r.Created.Cwd
	}
	for _, env := range envs {
		switch p := env.Payload.(type) {
		case events.Launch:
			cur[env.Lane] = p
		case events.Continue:
			cur[env.Lane] = events.Launch(p)
		case events.OperationDone:
			if p.Result != events.OperationSucceeded || p.Operation.Kind != policy.OpCommitCheckpoint || p.Ref == "" {
				continue
			}
			l, ok := cur[env.Lane]
			if !ok {
				continue
			}
			h := Handoff{AttemptIndex: l.AttemptIndex, Descriptor: l.Descriptor, ExecutionID: l.ExecutionID,
				Task: p.Operation.TaskID, Checkpoint: p.Operation.CheckpointID, Commit: p.Ref,
				Worktree: l.Paths.Worktree, Checkout: checkout}
			if l.Paths.Worktree == "" {
				h.Worktree = l.Paths.Cwd
			}
			if env.Lane >= 0 && env.Lane < len(r.Lanes) && l.AttemptIndex >= 0 && l.AttemptIndex < len(r.Lanes[env.Lane].Policy.Attempts) {
				h.Provider = r.Lanes[env.Lane].Policy.Attempts[l.AttemptIndex].ExhaustionGroup
			}
			out[env.Lane] = append(out[env.Lane], h)
		}
	}
	return out
}

// handedOff reports whether a lane in state s with handoffs hs is shown as
// having handed off its commit rather than as stopped: it stopped (not
// complete, not cancelled) after at least one committed handoff.
func handedOff(s machines.State, hs []Handoff) bool {
	return s == machines.StateStopped && len(hs) > 0
}

// HandedOff reports whether status lane l stopped after it handed off a
// commit (see Handoff): status shows it as HandedOffState.
func HandedOff(l LaneStatus) bool { return handedOff(l.State, l.Handoffs) }

// HandedOffState is how reports, status and the run summary name a lane
// that stopped after it handed off a commit; the lane's machine state
// stays stopped.
const HandedOffState = "handed-off"

// handoffStopText says in words why a lane stopped after its committed
// handoff, from the recorded stop reason: the writer was never found
// unsafe there (the verdict before the operation was clear), so an
// unsafe-writer stop is the parent declining the continuation.
func handoffStopText(reason string) string {
	switch reason {
	case string(policy.StopUnsafeWriter):
		return "then stopped: the parent declined the continuation (recorded reason unsafe-writer)"
	case string(policy.DenyNoContinuation):
		return "then stopped: the sheet's # continuation does not resume a lane after a handoff (recorded reason no-continuation)"
	case string(policy.DenyExhaustedAllowance):
		return "then stopped: # continuation's max executions were used (recorded reason exhausted-allowance)"
	case "":
		return "then stopped"
	}
	return "then stopped (recorded reason " + reason + ")"
}

// Short is the commit's first 12 digits, for tables and summaries.
func (h Handoff) Short() string { return shortCommit(h.Commit) }

// shortCommit is a commit id's first 12 digits, for summaries.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// OperationSteps is the parent's path through a lane's handed-off
// operation, in order, each step valid only after the one before: the
// first command in full (validate), then begin, the parent's own
// operation, and done (operation done is refused until begin recorded the
// operation pending).
func OperationSteps(run string, lane int) string {
	return fmt.Sprintf("switchyard operation validate --run %s --lane %d --expected-head SHA --file PATH --check ID, then operation begin with the digest it prints, then perform the operation, then operation done", run, lane)
}
