package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
)

// This file holds the checks of the inputs that name things in the store:
// a run (by its id or a unique prefix of it) and a lane of it, and the
// words the commands print about them.

// resolveRunID returns the run id that run names: the run with exactly that
// id, else the one run whose id starts with it. No match, or more than one,
// is a usage error (exit 64) that says what to do: list the runs, or pass
// more of the id (the candidates are listed). Every command that takes
// --run calls it once connected, before anything else uses the id.
func resolveRunID(ctx context.Context, conn *engineConn, f engineFlags, run string) (string, error) {
	if err := events.ValidateRunID(run); err != nil {
		return "", usagef("--run %q is not a run id; list runs with `switchyard status%s`", run, conn.connFlags(f))
	}
	store := conn.store()
	if _, err := store.Last(ctx, run, events.RunLane); err == nil {
		return run, nil
	} else if !errors.Is(err, events.ErrNotFound) {
		return "", failf("look up run %s in %s: %v", run, conn.describe(), err)
	}
	ids, err := store.Runs(ctx)
	if err != nil {
		return "", failf("list runs in %s: %v", conn.describe(), err)
	}
	var hits []string
	for _, id := range ids {
		if strings.HasPrefix(id, run) {
			hits = append(hits, id)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", usagef("--run %s: no run matches %q in %s; list runs with `switchyard status%s`", run, run, conn.describe(), conn.connFlags(f))
	}
	sort.Strings(hits)
	return "", usagef("--run %s is ambiguous: it starts %d runs (%s); pass more of the id", run, len(hits), strings.Join(hits, ", "))
}

// withRun connects as withEngine does and resolves run (an id or a unique
// prefix) before fn sees it: the one way a command that names a run reaches
// the store.
func withRun(ctx context.Context, stderr io.Writer, f engineFlags, run string, fn func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error) error {
	return withEngine(ctx, stderr, f, func(ctx context.Context, conn *engineConn, eng engineAPI) error {
		id, err := resolveRunID(ctx, conn, f, run)
		if err != nil {
			return err
		}
		return fn(ctx, conn, eng, id)
	})
}

// runLanes returns how many lanes run has, from its run-created event.
func runLanes(ctx context.Context, conn *engineConn, run string) (int, error) {
	envs, err := conn.store().Load(ctx, run, events.RunLane)
	if err != nil {
		return 0, failf("load run %s from %s: %v", run, conn.describe(), err)
	}
	for _, env := range envs {
		if c, ok := env.Payload.(events.RunCreated); ok {
			return len(c.Lanes), nil
		}
	}
	return 0, failf("run %s in %s has no run-created event; `switchyard history --run %s` shows what it has", run, conn.describe(), run)
}

// checkLaneOf is a usage error (exit 64) when lane is not one of run's
// lanes, naming their range: "--lane 7: run R has lanes 0..0".
func checkLaneOf(ctx context.Context, conn *engineConn, f engineFlags, run string, lane int) error {
	n, err := runLanes(ctx, conn, run)
	if err != nil {
		return err
	}
	if lane >= 0 && lane < n {
		return nil
	}
	return usagef("--lane %d: run %s has lanes 0..%d; see them with `switchyard status --run %s%s`", lane, run, n-1, run, conn.connFlags(f))
}

// plural is "1 lane", "3 lanes": n and the word, in the form n takes.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// requireFlags is a usage error naming every one of names not given, at
// once.
func requireFlags(c *cobra.Command, names ...string) error {
	var missing []string
	for _, n := range names {
		if f := c.Flags().Lookup(n); f != nil && !f.Changed {
			missing = append(missing, "--"+n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("missing required option %s", missing[0])
	}
	return usagef("missing required options %s and %s", strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
}

// checkGitWorkTree is a usage error unless dir is inside a git work tree
// with a commit, which --mode isolated-write needs: every writer attempt
// runs in a fresh worktree of HEAD.
func checkGitWorkTree(cwdFlag, dir string) error {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return usagef("--mode isolated-write needs git, which is not on PATH; install git, or use --mode read-only")
	}
	if out, err := git("rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return usagef("--cwd %s is not inside a git work tree, which --mode isolated-write needs (each writer attempt works in a fresh worktree of it); pass a git checkout, or use --mode read-only", cwdFlag)
	}
	if _, err := git("rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return usagef("--cwd %s is in a git repository with no commit yet; --mode isolated-write starts each writer attempt from HEAD, so commit first", cwdFlag)
	}
	return nil
}

// dataDirPath is the data directory --data-dir names (or the default), as
// an absolute path, without creating it.
func dataDirPath(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// storeMayExist reports whether the data directory at dir may hold a
// JetStream store (and so runs).
func storeMayExist(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "jetstream"))
	return err == nil
}

// checkRunIDFree is a usage error when --run-id names a run the store
// already has. It runs before run starts anything: a data directory with
// no store yet cannot hold the run, so it is not even created; otherwise
// it is read the way status reads it (no server is offered to others).
// Where the run goes to a server that is already there (a live serve of the
// data directory, or --nats) it checks nothing and reports onConn: the run
// looks the id up on its own connection (runIDFree), which saves a
// connection of its own.
func checkRunIDFree(ctx context.Context, f engineFlags, run string) (onConn bool, err error) {
	if run == "" {
		return false, nil
	}
	if f.nats != "" {
		return true, nil
	}
	dir, err := dataDirPath(f.dataDir)
	if err != nil {
		return false, usagef("%v", err)
	}
	if !storeMayExist(dir) {
		return false, nil
	}
	if engineconn.Served(dir) {
		return true, nil
	}
	conn, err := openEngineConn(ctx, f, connectOptions{})
	if err != nil {
		return false, err
	}
	defer conn.Close()
	return false, runIDFree(ctx, conn, f, run)
}

// runIDFree is a usage error when conn's store has run.
func runIDFree(ctx context.Context, conn *engineConn, f engineFlags, run string) error {
	switch _, err := conn.store().Last(ctx, run, events.RunLane); {
	case err == nil:
		return usagef("--run-id %s: run %s already exists in %s; pass a new id, or leave --run-id out for a fresh one (`switchyard status --run %s%s` shows the existing run)",
			run, run, conn.describe(), run, conn.connFlags(f))
	case errors.Is(err, events.ErrNotFound):
		return nil
	default:
		return failf("look up run %s in %s: %v", run, conn.describe(), err)
	}
}
