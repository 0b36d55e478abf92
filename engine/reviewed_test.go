package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// gitOut runs git in dir and returns its trimmed stdout.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}

// snapshotRef commits reviewed.txt on top of repo's HEAD without moving
// HEAD or the checkout, and points refs/snapshots/lane0 at it, as a parent
// that snapshots the reviewed partial work does. It returns the commit.
func snapshotRef(t *testing.T, repo string) string {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "snap")
	gitOut(t, repo, "worktree", "add", "--detach", "--quiet", wt, "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "reviewed.txt"), []byte("the parent reviewed this partial work\n"), 0o644))
	gitOut(t, wt, "add", "reviewed.txt")
	gitOut(t, wt, "commit", "-q", "-m", "reviewed partial work")
	commit := gitOut(t, wt, "rev-parse", "HEAD")
	gitOut(t, repo, "update-ref", "refs/snapshots/lane0", commit)
	return commit
}

// TestFallbackWriterStartsFromReviewedState proves the fallback writer
// after a started writer's clear inspection starts its fresh worktree from
// the reviewed state the verdict names (resolved to its commit when the
// verdict is given), not from the checkout's HEAD; that without one it
// starts from HEAD and the report says the verdict named none; that a ref
// naming no commit is refused, naming it; and that the run report says
// where each writer started.
func TestFallbackWriterStartsFromReviewedState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, jetstream)
	head := gitOut(t, h.repo, "rev-parse", "HEAD")
	snap := snapshotRef(t, h.repo)
	require.NotEqual(t, head, snap)
	h.run()
	h.startWorker(map[string]string{"codex": "usage-exhausted", "cursor": "success"})
	row := "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"
	reviewed := h.submitUnrestricted(sheet("", row), "bug-fix", policy.IsolatedWrite, policy.Cursor)
	plain := h.submitUnrestricted(sheet("", row), "bug-fix", policy.IsolatedWrite, policy.Cursor)
	for _, run := range []string{reviewed, plain} {
		h.waitLane(run, 0, machines.StateInspecting)
	}

	err := h.eng.VerdictFrom(ctx, reviewed, 0, events.VerdictClear, "diff reviewed", "refs/snapshots/nope")
	require.ErrorIs(t, err, engine.ErrInvalidRequest)
	require.ErrorContains(t, err, `--from "refs/snapshots/nope" names no commit in `+h.repo)
	err = h.eng.VerdictFrom(ctx, reviewed, 0, events.VerdictUnsafe, "diff reviewed", "refs/snapshots/lane0")
	require.ErrorIs(t, err, engine.ErrInvalidRequest, "an unsafe verdict names no state to start from")
	require.NoError(t, h.eng.VerdictFrom(ctx, reviewed, 0, events.VerdictClear, "diff reviewed", "refs/snapshots/lane0"))
	require.NoError(t, h.eng.VerdictFrom(ctx, plain, 0, events.VerdictClear, "diff reviewed", ""))

	rep, _ := h.wait(reviewed)
	require.Equal(t, machines.StateComplete, rep.Lanes[0].State)
	a := rep.Lanes[0].Attempts
	require.Len(t, a, 2)
	require.Equal(t, &events.WorktreeBase{Source: events.BaseCheckoutHead, Ref: "HEAD", Commit: head}, a[0].WorktreeBase)
	require.Equal(t, &events.WorktreeBase{Source: events.BaseReviewed, Ref: "refs/snapshots/lane0", Commit: snap}, a[1].WorktreeBase)
	require.Equal(t, snap, gitOut(t, a[1].Worktree, "rev-parse", "HEAD"), "the fallback writer's worktree is the reviewed state")
	require.FileExists(t, filepath.Join(a[1].Worktree, "reviewed.txt"))
	require.Contains(t, a[1].StartedFrom, "reviewed state refs/snapshots/lane0 (commit "+snap+")")
	text := rep.Text()
	require.Contains(t, text, "       worktree from the reviewed state refs/snapshots/lane0 (commit "+snap+") the parent's clear verdict named\n", text)
	require.Contains(t, text, "       worktree from the checkout's HEAD (commit "+head+")\n", text)
	_, envs := h.waitFinal(reviewed)
	verdicts := ofType(envs, events.TypeVerdict)
	require.Len(t, verdicts, 1)
	v := verdicts[0].Payload.(events.Verdict)
	require.Equal(t, snap, v.FromCommit)

	// replay --verify holds the base to the verdict: a launch that claims
	// another base than the reviewed state, or a reviewed state no verdict
	// named, diverges.
	launches := []int{}
	for k, env := range envs {
		if env.Type == events.TypeLaunch {
			launches = append(launches, k)
		}
	}
	require.Len(t, launches, 2)
	for name, tc := range map[string]struct {
		at   int
		base events.WorktreeBase
	}{
		"fallback from HEAD despite the reviewed state": {launches[1], events.WorktreeBase{Source: events.BaseCheckoutHead, Ref: "HEAD", Commit: head}},
		"first writer from an unreviewed state":         {launches[0], events.WorktreeBase{Source: events.BaseReviewed, Ref: "refs/snapshots/lane0", Commit: snap}},
	} {
		altered := renumberedLog(t, envs, tc.at, func(p events.Payload) events.Payload {
			l := p.(events.Launch)
			b := tc.base
			l.WorktreeBase = &b
			return l
		})
		res, err := engine.Replay(ctx, altered, reviewed, policy.DefaultOptions())
		require.NoError(t, err, name)
		require.False(t, res.Verified, name)
		require.Equal(t, engine.FieldWorktreeBase, res.Divergence.Field, name)
		require.Equal(t, events.TypeLaunch, res.Divergence.Type, name)
	}

	rep, _ = h.wait(plain)
	a = rep.Lanes[0].Attempts
	require.Len(t, a, 2)
	require.Equal(t, head, a[1].WorktreeBase.Commit)
	require.Equal(t, events.BaseCheckoutHead, a[1].WorktreeBase.Source)
	require.Contains(t, a[1].StartedFrom, "the clear verdict named no reviewed state", "never silently from HEAD")
	require.NoFileExists(t, filepath.Join(a[1].Worktree, "reviewed.txt"))
	h.verifyReplay(reviewed)
	h.verifyReplay(plain)
}

// renumberedLog is copyLog for a log whose sequences are not 1..n (a
// JetStream stream shared by several runs): the copy is numbered afresh.
func renumberedLog(t *testing.T, envs []events.Envelope, at int, alter func(events.Payload) events.Payload) events.Store {
	t.Helper()
	s := events.NewMemoryStore()
	last := map[string]uint64{}
	for i, e := range envs {
		if i == at {
			e.Payload = alter(e.Payload)
		}
		seq, err := s.Append(context.Background(), e, last[e.Subject()])
		require.NoError(t, err)
		last[e.Subject()] = seq
	}
	return s
}
