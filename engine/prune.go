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
}

// Prune removes a final run's files from the data directory: each writer
// worktree (with git worktree remove --force, then git worktree prune in
// the run's checkout) and the run's attempt files. The event log is kept,
// so status, report, history and replay still work; the report then names
// no output (the files are gone). It refuses a run that is not final
// (ErrNotFinal), and never touches a path outside the data directory's
// runs/<run> and worktrees/<run>, nor one that is or holds the run's
// checkout. With dryRun it only says what it would remove.
func (e *Engine) Prune(ctx context.Context, run string, dryRun bool) (PruneResult, error) {
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
	if !dryRun && len(errs) == 0 {
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
