package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// TestWorkerRefusesForgedJobs: a job the engine did not record (no
// launch), one whose paths differ from the recorded launch, and one whose
// files lie outside the data directory's area for its execution are each
// refused: a refused report naming why, the job removed, no claim and no
// CLI process; a genuine job beside them runs.
func TestWorkerRefusesForgedJobs(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	cfg := e.workerConfig("worker-v")
	cfg.DataDir = e.work
	w := e.startWorker(cfg)
	ctx := context.Background()
	q := e.js.Queue()
	subj := events.JobSubject(string(policy.Codex))

	// Never launched: no launch in the lane's log.
	unrecorded := e.newJob(0)
	require.NoError(t, q.PublishJob(ctx, subj, unrecorded))

	// Launched with the prepared paths, then published with another
	// output path (a forged job reusing a real execution id would look so).
	forged := e.newJob(1)
	e.recordLaunch(policy.Codex, forged)
	stolen := forged
	stolen.Paths.Output = "/tmp/elsewhere/out.md"
	require.NoError(t, q.PublishJob(ctx, subj, stolen))

	// Recorded and published alike, but its files lie outside the data
	// directory's area for the execution (the test's jobs live under
	// work/<id>, not work/runs/<run>/L<lane>/<id>).
	outside := e.newJob(2)
	e.publish(outside)

	for job, why := range map[string]events.Refusal{unrecorded.ExecutionID: events.RefusalNoLaunch, forged.ExecutionID: events.RefusalMismatch, outside.ExecutionID: events.RefusalOutsideDataDir} {
		rep := e.waitReport(events.ReportRefused, job)
		require.Equal(t, why, rep.Refusal, "execution %s", job)
		w.waitEvent(t, evRefused, job, 1)
	}
	for _, job := range []events.Job{unrecorded, stolen, outside} {
		require.Empty(t, e.workloads(job), "a refused job never starts a CLI")
		require.Equal(t, []events.ReportKind{events.ReportRefused}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
		_, err := e.js.Claims().Inspect(ctx, job.ExecutionID)
		require.ErrorIs(t, err, events.ErrNotFound, "a refused job is never claimed")
	}

	// A job prepared where the engine prepares them runs.
	genuine := e.newJob(3)
	dir := filepath.Join(e.work, "runs", genuine.Run, events.LaneToken(genuine.Lane), genuine.ExecutionID)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.Rename(genuine.Paths.Prompt, filepath.Join(dir, "prompt.md")))
	genuine.Paths.Prompt, genuine.Paths.Output = filepath.Join(dir, "prompt.md"), filepath.Join(dir, "out.md")
	genuine.Paths.Receipt, genuine.Paths.Progress = filepath.Join(dir, "receipt.json"), filepath.Join(dir, "progress.json")
	genuine.Paths.Cwd = forged.Paths.Cwd // the run's checkout, recorded with its first launch
	e.publish(genuine)
	e.waitReport(events.ReportFinished, genuine.ExecutionID)
	require.Len(t, e.workloads(genuine), 1)
}
