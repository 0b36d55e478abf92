package activities

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// A job is only a request: before a worker claims it (and so before any
// CLI can start) it is checked against what the engine recorded for its
// execution, so a job that was forged by a process able to publish jobs,
// or corrupted on the way, never runs a CLI with the worker's logins on
// paths the engine did not prepare.

// verifyJob compares job, delivered from provider's queue, with its execution's
// launch (or continue) in the lane's log and the run's run-created. It
// returns the refusal and a detail for the log when they differ; err is a
// failure to read the log (the job is then returned for later).
func (w *Worker) verifyJob(ctx context.Context, provider policy.Provider, job events.Job) (events.Refusal, string, error) {
	actx, cancel := context.WithTimeout(ctx, w.opTimeout())
	defer cancel()
	lane, err := w.cfg.Store.Load(actx, job.Run, job.Lane)
	if err != nil {
		return "", "", fmt.Errorf("read lane %d of run %s: %w", job.Lane, job.Run, err)
	}
	var launch *events.Launch
	for _, env := range lane {
		switch p := env.Payload.(type) {
		case events.Launch:
			if p.ExecutionID == job.ExecutionID {
				launch = &p
			}
		case events.Continue:
			if p.ExecutionID == job.ExecutionID {
				l := events.Launch(p)
				launch = &l
			}
		}
	}
	if launch == nil {
		return events.RefusalNoLaunch, "the lane's log records no launch of this execution", nil
	}
	runEnvs, err := w.cfg.Store.Load(actx, job.Run, events.RunLane)
	if err != nil {
		return "", "", fmt.Errorf("read run %s: %w", job.Run, err)
	}
	var created *events.RunCreated
	if len(runEnvs) > 0 {
		if c, ok := runEnvs[0].Payload.(events.RunCreated); ok {
			created = &c
		}
	}
	if created == nil {
		return events.RefusalNoLaunch, "the run has no run-created event", nil
	}
	var diffs []string
	check := func(field string, got, want any) {
		if got != want {
			diffs = append(diffs, field)
		}
	}
	check("provider", string(job.Provider), string(provider))
	check("paths", job.Paths, launch.Paths)
	check("descriptor", job.Descriptor, launch.Descriptor)
	check("attemptIndex", job.AttemptIndex, launch.AttemptIndex)
	check("route", job.Route, launch.Route)
	check("queue", events.JobSubject(string(provider)), launch.JobSubject)
	check("mode", job.Mode, created.Access)
	check("parent", job.Parent, created.Parent)
	check("contract", job.Contract, created.Options.Contract)
	if len(diffs) > 0 {
		return events.RefusalMismatch, "the job's " + strings.Join(diffs, ", ") + " differ from the recorded launch", nil
	}
	if w.cfg.DataDir != "" {
		if bad := outsideArea(w.cfg.DataDir, job, created.Cwd); bad != "" {
			return events.RefusalOutsideDataDir, bad, nil
		}
	}
	return "", "", nil
}

// outsideArea names the first of job's paths outside its execution's area
// of dataDir (cwd: the run's checkout, where a read-only attempt runs), or
// returns "".
func outsideArea(dataDir string, job events.Job, cwd string) string {
	exec := filepath.Join(dataDir, "runs", job.Run, events.LaneToken(job.Lane), job.ExecutionID)
	tree := filepath.Join(dataDir, "worktrees", job.Run, events.LaneToken(job.Lane), job.ExecutionID)
	p := job.Paths
	for _, f := range []struct{ name, path string }{
		{"prompt", p.Prompt}, {"output", p.Output}, {"receipt", p.Receipt}, {"progress", p.Progress},
	} {
		if !within(exec, f.path) {
			return fmt.Sprintf("its %s path lies outside the execution's directory %s", f.name, exec)
		}
	}
	switch {
	case p.Worktree != "" && filepath.Clean(p.Worktree) != tree:
		return "its worktree is not the execution's worktree " + tree
	case p.Worktree != "" && filepath.Clean(p.Cwd) != tree:
		return "a writer's cwd must be its worktree " + tree
	case p.Worktree == "" && filepath.Clean(p.Cwd) != filepath.Clean(cwd):
		return "a read-only attempt's cwd must be the run's checkout"
	}
	return ""
}

// within reports whether path (cleaned) lies strictly inside dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// refuse ends a delivery whose job failed verifyJob: the engine is told
// (a refused report, recorded as an audit event) and the job removed;
// nothing was claimed, so the real execution, if any, stays runnable.
func (w *Worker) refuse(ctx context.Context, log *slog.Logger, d *events.Delivery, why events.Refusal, detail string) {
	log.Error("job refused: it does not match what the engine prepared for its execution; nothing runs", "refusal", why, "detail", detail)
	r := w.report(d.Job, events.ReportRefused, w.cfg.WorkerID)
	r.Refusal = why
	if err := w.publish(ctx, log, r); err != nil {
		w.nak(ctx, log, d, 0)
		w.emit(evReturned, d.Job.ExecutionID)
		return
	}
	w.term(ctx, log, d, "refused: "+string(why))
	w.emit(evRefused, d.Job.ExecutionID)
}
