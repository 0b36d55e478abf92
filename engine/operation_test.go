package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// repoGit runs git in the harness repository with a fixed identity.
func (h *harness) repoGit(args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", h.repo, "-c", "user.email=p@example.com", "-c", "user.name=parent", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(h.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// editReadme is the worker's edit the simulated handoff asks the parent
// to commit (the handoff names README.md).
func (h *harness) editReadme(text string) {
	h.t.Helper()
	require.NoError(h.t, os.WriteFile(filepath.Join(h.repo, "README.md"), []byte(text), 0o644))
}

// operate is the parent's whole path for the lane's README.md handoff:
// validate, begin, git commit, done. It returns the commit.
func (h *harness) operate(run string, lane int) string {
	h.t.Helper()
	ctx := context.Background()
	head := h.repoGit("rev-parse", "HEAD")
	h.editReadme("# fixture, edited by the worker\n")
	v, err := h.eng.OperationValidate(ctx, run, lane, engine.OperationScope{ExpectedHead: head, Files: []string{"README.md"}})
	require.NoError(h.t, err)
	h.waitValidated(run, lane, v.Digest)
	_, err = h.eng.OperationBegin(ctx, run, lane, v.Digest, waitTimeout)
	require.NoError(h.t, err)
	h.repoGit("add", "--", "README.md")
	h.repoGit("commit", "-q", "-m", "checkpoint C-1")
	commit := h.repoGit("rev-parse", "HEAD")
	require.NoError(h.t, h.eng.OperationDone(ctx, run, lane, events.OperationSucceeded, commit))
	return commit
}

// waitValidated polls status until the lane's validated digest is digest.
func (h *harness) waitValidated(run string, lane int, digest string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		st, err := h.eng.Status(context.Background(), run)
		require.NoError(h.t, err)
		return st.Lanes[lane].Validated != nil && st.Lanes[lane].Validated.Digest == digest
	}, waitTimeout, 20*time.Millisecond, "lane %d validated %s", lane, digest)
}

// TestOperationLedgerCommitCheckpoint walks a handoff from worker to
// commit through the engine with a real git repository: every refusal
// (HEAD that moved, file not allowed, digest changed between validate and
// begin, done without a matching commit) records nothing; each accepted
// step is an event; status shows the pending operation; replay verifies.
func TestOperationLedgerCommitCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorker(map[string]string{"claude": "handoff"})
	run := h.submit(sheet("", "judgment and prose: claude:sonnet@low"), "judgment and prose", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateAwaitingOperation)
	head := h.repoGit("rev-parse", "HEAD")

	// done without begin is refused: the old "records whatever it is told".
	err := h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, "c0ffee")
	require.True(t, contract.IsRefusal(err), "%v", err)
	require.ErrorContains(t, err, "no pending operation")
	_, err = h.eng.OperationBegin(ctx, run, 0, strings.Repeat("a", 64), time.Second)
	require.ErrorContains(t, err, "no validated operation")

	h.editReadme("# fixture, edited by the worker\n")
	_, err = h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: strings.Repeat("0", 40), Files: []string{"README.md"}})
	require.ErrorContains(t, err, "HEAD moved")
	_, err = h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: head, Files: []string{"docs.md"}})
	require.ErrorContains(t, err, `"README.md" is not an allowed file`)

	v1, err := h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: head, Files: []string{"README.md"}})
	require.NoError(t, err)
	h.waitValidated(run, 0, v1.Digest)
	_, err = h.eng.OperationBegin(ctx, run, 0, strings.Repeat("b", 64), time.Second)
	require.ErrorContains(t, err, "is not the lane's last validated digest")

	// The digest changes between validate and begin: begin is refused.
	h.editReadme("# fixture, edited again after validation\n")
	_, err = h.eng.OperationBegin(ctx, run, 0, v1.Digest, time.Second)
	require.ErrorContains(t, err, "the worktree changed since it was validated")

	v2, err := h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: head, Files: []string{"README.md"}})
	require.NoError(t, err)
	require.NotEqual(t, v1.Digest, v2.Digest)
	h.waitValidated(run, 0, v2.Digest)
	step, err := h.eng.OperationBegin(ctx, run, 0, v2.Digest, waitTimeout)
	require.NoError(t, err)
	require.Equal(t, events.OperationBegun, step.Step)

	// A crashed parent finds its pending operation in status.
	st, err := h.eng.Status(ctx, run)
	require.NoError(t, err)
	require.NotNil(t, st.Lanes[0].Pending)
	require.Equal(t, v2.Digest, st.Lanes[0].Pending.Digest)
	require.Equal(t, head, st.Lanes[0].Pending.Head)
	_, err = h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: head, Files: []string{"README.md"}})
	require.ErrorIs(t, err, engine.ErrOperationPending, "a pending operation is settled, never begun again")

	// done succeeded needs the commit that records exactly the pending files.
	err = h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, "")
	require.ErrorContains(t, err, "needs --ref COMMIT")
	err = h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, head)
	require.ErrorContains(t, err, "does not have exactly one parent")
	h.editReadme("# fixture, edited by the parent instead\n")
	h.repoGit("commit", "-q", "-am", "not the checkpoint")
	bad := h.repoGit("rev-parse", "HEAD")
	err = h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, bad)
	require.ErrorContains(t, err, "the committed files differ from the validated ones")
	h.repoGit("reset", "-q", "--hard", head)
	h.editReadme("# fixture, edited again after validation\n")
	h.repoGit("commit", "-q", "-am", "checkpoint C-1")
	commit := h.repoGit("rev-parse", "HEAD")
	require.NoError(t, h.eng.OperationDone(ctx, run, 0, events.OperationSucceeded, commit))

	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateStopped, r.Lanes[0].State)
	steps := ofType(envs, events.TypeOperationStep)
	require.Len(t, steps, 3, "two validations and one begin")
	require.Equal(t, events.OperationBegun, steps[2].Payload.(events.OperationStep).Step)
	done := ofType(envs, events.TypeOperationDone)
	require.Len(t, done, 1)
	d := done[0].Payload.(events.OperationDone)
	require.Equal(t, events.LedgerComplete, d.Ledger)
	require.Equal(t, v2.Digest, d.Digest)
	require.Equal(t, commit, d.Ref)
	h.verifyReplay(run)
}

// TestOperationBeginRace: two parents begin the same validated operation
// at once; exactly one gets the pending record, the other is told it is
// pending for someone else and must not perform it.
func TestOperationBeginRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	h.run()
	h.startWorker(map[string]string{"claude": "handoff"})
	run := h.submit(sheet("", "judgment and prose: claude:sonnet@low"), "judgment and prose", policy.ReadOnly)
	h.waitLane(run, 0, machines.StateAwaitingOperation)
	head := h.repoGit("rev-parse", "HEAD")
	h.editReadme("# raced\n")
	v, err := h.eng.OperationValidate(ctx, run, 0, engine.OperationScope{ExpectedHead: head, Files: []string{"README.md"}})
	require.NoError(t, err)
	h.waitValidated(run, 0, v.Digest)

	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.eng.OperationBegin(ctx, run, 0, v.Digest, waitTimeout)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.ErrorIs(t, err, engine.ErrOperationPending)
	}
	require.Equal(t, 1, wins, "exactly one parent begins the operation: %v", errs)

	// The loser's view: reject needs the worktree unchanged; then it works.
	h.editReadme("# raced, then changed\n")
	err = h.eng.OperationSettle(ctx, run, 0, events.OperationFailed, true, "", "changed")
	require.ErrorContains(t, err, "the worktree changed since the operation was begun")
	h.editReadme("# raced\n")
	require.NoError(t, h.eng.OperationSettle(ctx, run, 0, events.OperationFailed, true, "", "not this checkpoint"))
	_, envs := h.waitFinal(run)
	d := ofType(envs, events.TypeOperationDone)[0].Payload.(events.OperationDone)
	require.Equal(t, events.LedgerRejected, d.Ledger)
	require.Equal(t, events.OperationFailed, d.Result)
	require.Len(t, ofType(envs, events.TypeOperationStep), 2, "one validation, one begin: the losing begin was dropped")
	rep, err := h.eng.Report(ctx, run)
	require.NoError(t, err)
	require.Contains(t, rep.Lanes[0].Attempts[0].Operation, "commit-checkpoint task T-1 checkpoint C-1: rejected by the parent")
	h.verifyReplay(run)
}
