package activities

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// A job is only a request: before a worker claims it (and so before any
// CLI can start) it is checked against what the engine recorded for its
// execution, so a job that was forged by a process able to publish jobs,
// or corrupted on the way, never runs a CLI with the worker's logins on
// paths the engine did not prepare.

// verifyJob compares job, delivered from provider's queue, with the job
// its execution's launch (or continue) in the lane's log and the run's
// run-created give (events.JobOf, as the engine built it), field by field
// (jobChecks). It returns the refusal and a detail naming the differing
// fields for the log when they differ; err is a failure to read the log
// (the job is then returned for later).
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
	want, err := events.JobOf(job.Run, job.Lane, *created, *launch, providers.UnsetStallTimeoutMs)
	if err != nil {
		return events.RefusalMismatch, "the run records no attempt for the job's launch: " + err.Error(), nil
	}
	var diffs []string
	if launch.JobSubject != events.JobSubject(string(provider)) || want.Provider != provider {
		diffs = append(diffs, "queue") // delivered from another provider's queue
	}
	for _, f := range jobChecks {
		if !f.same(job, want) {
			diffs = append(diffs, f.key)
		}
	}
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

// jobChecks are the job fields verifyJob compares with the job the log
// gives (events.JobOf), by JSON key: every field the runner is built from
// (runnerOptions) and every field the engine or its reports act on. The
// stall timeout is compared as the runner resolves it (0 is the default).
// The execution id, run and lane are not here: the log read is the one
// they name. A test checks that every other key of events.Job is here.
var jobChecks = []struct {
	key  string
	same func(job, want events.Job) bool
}{
	{"provider", func(j, w events.Job) bool { return j.Provider == w.Provider }},
	{"model", func(j, w events.Job) bool { return j.Model == w.Model }},
	{"effort", func(j, w events.Job) bool { return j.Effort == w.Effort }},
	{"descriptor", func(j, w events.Job) bool { return j.Descriptor == w.Descriptor }},
	{"attemptIndex", func(j, w events.Job) bool { return j.AttemptIndex == w.AttemptIndex }},
	{"route", func(j, w events.Job) bool { return j.Route == w.Route }},
	{"paths", func(j, w events.Job) bool { return j.Paths == w.Paths }},
	{"mode", func(j, w events.Job) bool { return j.Mode == w.Mode }},
	{"parent", func(j, w events.Job) bool { return j.Parent == w.Parent }},
	{"contract", func(j, w events.Job) bool { return j.Contract == w.Contract }},
	{"apiSpend", func(j, w events.Job) bool { return j.APISpend == w.APISpend }},
	{"timeoutMs", func(j, w events.Job) bool { return j.TimeoutMs == w.TimeoutMs }},
	{"stallTimeoutMs", func(j, w events.Job) bool { return resolvedStall(j) == resolvedStall(w) }},
	{"stallWatchdogOff", func(j, w events.Job) bool { return j.StallWatchdogOff == w.StallWatchdogOff }},
	{"allowUnverifiedContainment", func(j, w events.Job) bool { return j.AllowUnverifiedContainment == w.AllowUnverifiedContainment }},
	{"opencodeChatGPTSubscription", func(j, w events.Job) bool { return j.OpenCodeChatGPTSubscription == w.OpenCodeChatGPTSubscription }},
}

// resolvedStall is the stall timeout the runner would apply for j, or -1
// for one it refuses.
func resolvedStall(j events.Job) int64 {
	ms, err := runner.ResolveStallTimeoutMS(j.StallTimeoutMs)
	if err != nil {
		return -1
	}
	return ms
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
