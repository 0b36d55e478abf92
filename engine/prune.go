package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// PruneResult is what Prune removed from one final run (or, in a dry run,
// would remove).
type PruneResult struct {
	Run string `json:"run"`
	// Worktrees are the writer worktrees removed (git worktree remove),
	// under <DataDir>/worktrees/<run>/.
	Worktrees []string `json:"worktrees"`
	// Files is the run's attempt-file directory, <DataDir>/runs/<run>, when
	// it existed: every prompt copy, output, receipt and progress snapshot.
	Files string `json:"files,omitempty"`
	// Bytes is the disk space the removed files took.
	Bytes int64 `json:"bytes"`
	// DryRun: nothing was removed.
	DryRun bool `json:"dryRun,omitempty"`
	// Kept are the worktrees left in place because they hold a commit a
	// lane handed off that no branch or tag of the run's checkout holds
	// (the only copy); PruneOptions.Force removes them too.
	Kept []KeptWorktree `json:"kept,omitempty"`
}

// KeptWorktree is a worktree Prune left in place, and why.
type KeptWorktree struct {
	Worktree string `json:"worktree"`
	// Handoff is the committed handoff the worktree holds.
	Handoff Handoff `json:"handoff"`
	// Why says it in words: no branch or tag holds the commit, or that
	// could not be checked.
	Why string `json:"why"`
}

// PruneOptions are Prune's choices.
type PruneOptions struct {
	// DryRun only says what Prune would remove.
	DryRun bool
	// Force also removes a worktree holding an unmerged handed-off
	// commit, losing that commit.
	Force bool
}

// Prune removes a final run's files from the data directory: each writer
// worktree (with git worktree remove --force, then git worktree prune in
// the run's checkout) and the run's attempt files. The event log is kept,
// so status, report, history and replay still work; the report then names
// no output (the files are gone). It refuses a run that is not final
// (ErrNotFinal), and never touches a path outside the data directory's
// runs/<run> and worktrees/<run>, nor one that is or holds the run's
// checkout. With DryRun it only says what it would remove.
//
// A worktree holding a commit a lane handed off (see Handoff) is kept
// while no branch or tag of the run's checkout holds that commit, or
// while that cannot be checked: it is the commit's only copy. Kept lists
// it; Force removes it anyway.
func (e *Engine) Prune(ctx context.Context, run string, opt PruneOptions) (PruneResult, error) {
	dryRun := opt.DryRun
	r, envs, err := e.load(ctx, run)
	if err != nil {
		return PruneResult{}, err
	}
	if r.Closed == nil {
		return PruneResult{}, fmt.Errorf("run %s: %w", run, ErrNotFinal)
	}
	res := PruneResult{Run: run, Worktrees: []string{}, DryRun: dryRun}
	checkout := filepath.Clean(r.Created.Cwd)
	wtRoot := filepath.Join(e.cfg.DataDir, worktreesDir, run)
	filesRoot := e.runDir(run)
	safe := func(path, root string) error {
		if err := prunable(path, root, checkout); err != nil {
			return fmt.Errorf("prune run %s: %w", run, err)
		}
		return nil
	}
	// The worktrees the log names, and any other left under the run's
	// worktree directory.
	var trees []string
	for _, env := range envs {
		var p events.Paths
		switch pl := env.Payload.(type) {
		case events.Launch:
			p = pl.Paths
		case events.Continue:
			p = pl.Paths
		default:
			continue
		}
		if p.Worktree != "" && !slices.Contains(trees, filepath.Clean(p.Worktree)) {
			trees = append(trees, filepath.Clean(p.Worktree))
		}
	}
	if lanes, err := os.ReadDir(wtRoot); err == nil {
		for _, l := range lanes {
			ids, _ := os.ReadDir(filepath.Join(wtRoot, l.Name()))
			for _, id := range ids {
				if p := filepath.Join(wtRoot, l.Name(), id.Name()); id.IsDir() && !slices.Contains(trees, p) {
					trees = append(trees, p)
				}
			}
		}
	}
	keep := map[string]KeptWorktree{}
	if !opt.Force {
		keep = unmergedHandoffs(ctx, r, envs)
	}
	var errs []error
	removedTree := false
	for _, path := range trees {
		if err := safe(path, wtRoot); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			continue // already gone
		}
		if k, ok := keep[path]; ok {
			res.Kept = append(res.Kept, k)
			continue
		}
		res.Bytes += diskUsage(path)
		res.Worktrees = append(res.Worktrees, path)
		if dryRun {
			continue
		}
		if _, err := git(ctx, checkout, "worktree", "remove", "--force", path); err != nil {
			// The checkout moved or the worktree is broken: remove the
			// directory; git worktree prune below forgets it.
			if rerr := os.RemoveAll(path); rerr != nil {
				errs = append(errs, fmt.Errorf("prune run %s: remove worktree %s: %v (git: %v)", run, path, rerr, err))
				continue
			}
		}
		removedTree = true
	}
	if removedTree {
		if _, err := git(ctx, checkout, "worktree", "prune"); err != nil {
			e.log.Warn("git worktree prune failed; git forgets removed worktrees on its own later", "run", run, "err", err)
		}
	}
	if !dryRun && len(errs) == 0 && len(res.Kept) == 0 {
		if err := safe(wtRoot, filepath.Join(e.cfg.DataDir, worktreesDir)); err == nil {
			if err := os.RemoveAll(wtRoot); err != nil {
				errs = append(errs, fmt.Errorf("prune run %s: %v", run, err))
			}
		}
	}
	if _, err := os.Lstat(filesRoot); err == nil {
		if err := safe(filesRoot, filepath.Join(e.cfg.DataDir, runsDir)); err != nil {
			errs = append(errs, err)
		} else {
			res.Files = filesRoot
			res.Bytes += diskUsage(filesRoot)
			if !dryRun {
				if err := os.RemoveAll(filesRoot); err != nil {
					errs = append(errs, fmt.Errorf("prune run %s: %v", run, err))
				}
			}
		}
	}
	return res, errors.Join(errs...)
}

// prunable reports why path must not be removed: it is not strictly
// inside root, or it is the checkout or one of its ancestors.
func prunable(path, root, checkout string) error {
	path, root, checkout = filepath.Clean(path), filepath.Clean(root), filepath.Clean(checkout)
	rel, err := filepath.Rel(root, path)
	if !filepath.IsAbs(path) || err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside %s; left in place", path, root)
	}
	if path == checkout || strings.HasPrefix(checkout, path+string(filepath.Separator)) {
		return fmt.Errorf("%s is or holds the run's checkout %s; left in place", path, checkout)
	}
	return nil
}

// diskUsage is the size of the regular files under path.
func diskUsage(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// unmergedHandoffs are the worktrees of run r (log envs) that hold a
// handed-off commit no branch or tag of the checkout holds, or for which
// that cannot be checked (fail closed), by cleaned path.
func unmergedHandoffs(ctx context.Context, r *machines.Run, envs []events.Envelope) map[string]KeptWorktree {
	keep := map[string]KeptWorktree{}
	for _, hs := range laneHandoffs(r, envs) {
		for _, h := range hs {
			if h.Worktree == "" {
				continue
			}
			path := filepath.Clean(h.Worktree)
			if _, kept := keep[path]; kept {
				continue
			}
			out, err := git(ctx, r.Created.Cwd, "for-each-ref", "--count=1", "--format=%(refname)", "--contains", h.Commit, "refs/heads", "refs/tags")
			switch {
			case err != nil:
				keep[path] = KeptWorktree{Worktree: path, Handoff: h, Why: fmt.Sprintf("it holds handed-off commit %s and whether a branch or tag of %s holds it could not be checked (%v)", h.Commit, r.Created.Cwd, err)}
			case strings.TrimSpace(out) == "":
				keep[path] = KeptWorktree{Worktree: path, Handoff: h, Why: fmt.Sprintf("it holds handed-off commit %s, which no branch or tag of %s holds: the only copy", h.Commit, r.Created.Cwd)}
			}
		}
	}
	return keep
}
