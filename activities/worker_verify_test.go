package activities

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// TestWorkerRefusesJobsUnlikeTheirLaunch: a job whose launch is recorded
// but which differs from the job the log gives (events.JobOf) in any one
// field the runner is built from, or the engine acts on, is refused with
// job-mismatch naming that field, never claimed and never run; a genuine
// job beside them runs. One row per field (and per path); the rows run
// codex on lane 0, but the ChatGPT-subscription flag, which only an
// OpenCode attempt of one model may carry, differs on lane 1's OpenCode
// attempt.
func TestWorkerRefusesJobsUnlikeTheirLaunch(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	cfg := e.workerConfig("worker-m")
	cfg.Providers = []policy.Provider{policy.Codex, policy.OpenCode}
	w := e.startWorker(cfg)
	ctx := context.Background()
	newOpenCodeJob := func() events.Job {
		j := e.newJob(1)
		j.Descriptor, j.Provider, j.Model, j.Effort = "opencode:"+events.OpenCodeChatGPTModel+"@default", policy.OpenCode, events.OpenCodeChatGPTModel, policy.EffortDefault
		return j
	}
	genuine := e.newJob(0)
	e.recordRun(genuine, newOpenCodeJob())

	rows := []struct {
		field  string
		base   func() events.Job
		change func(*events.Job)
		queue  policy.Provider // the job's queue if not its recorded provider's
	}{
		{"provider", nil, func(j *events.Job) { j.Provider = policy.Grok }, ""},
		{"model", nil, func(j *events.Job) { j.Model = "gpt-5.4" }, ""},
		{"effort", nil, func(j *events.Job) { j.Effort = policy.EffortMax }, ""},
		{"apiSpend", nil, func(j *events.Job) { j.APISpend = policy.APISpendApproved }, ""},
		{"mode", nil, func(j *events.Job) { j.Mode = policy.IsolatedWrite }, ""},
		{"parent", nil, func(j *events.Job) { j.Parent = policy.ParentCodex }, ""},
		{"contract", nil, func(j *events.Job) { j.Contract = policy.ContractStrict }, ""},
		{"timeoutMs", nil, func(j *events.Job) { j.TimeoutMs = 1 }, ""},
		{"timeoutMs", nil, func(j *events.Job) { j.TimeoutMs = 0 }, ""}, // no deadline at all
		{"stallTimeoutMs", nil, func(j *events.Job) { j.StallTimeoutMs = 500 }, ""},
		{"allowUnverifiedContainment", nil, func(j *events.Job) { j.AllowUnverifiedContainment = true }, ""},
		{"opencodeChatGPTSubscription", newOpenCodeJob, func(j *events.Job) { j.OpenCodeChatGPTSubscription = true }, ""},
		{"descriptor", nil, func(j *events.Job) { j.Descriptor = "codex:gpt-5.4@high" }, ""},
		{"attemptIndex", nil, func(j *events.Job) { j.AttemptIndex = 1 }, ""},
		{"route", nil, func(j *events.Job) { j.Route = policy.RouteNative }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Prompt = filepath.Join(filepath.Dir(j.Paths.Prompt), "other.md") }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Output = filepath.Join(filepath.Dir(j.Paths.Output), "other.md") }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Receipt = filepath.Join(filepath.Dir(j.Paths.Receipt), "other.json") }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Progress = filepath.Join(filepath.Dir(j.Paths.Progress), "other.json") }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Cwd = filepath.Dir(j.Paths.Cwd) }, ""},
		{"paths", nil, func(j *events.Job) { j.Paths.Worktree = j.Paths.Cwd }, ""},
		{"queue", nil, func(*events.Job) {}, policy.OpenCode}, // a codex launch's job on OpenCode's queue
	}
	var refused []events.Job
	for _, row := range rows {
		recorded := e.newJob(0)
		if row.base != nil {
			recorded = row.base()
		}
		e.recordLaunch(recorded.Provider, recorded)
		job := recorded
		row.change(&job)
		require.NoError(t, job.Validate(), "the %s row's job is well formed", row.field)

		queue := cmp.Or(row.queue, recorded.Provider)
		why, detail, err := w.verifyJob(ctx, queue, job)
		require.NoError(t, err)
		require.Equal(t, events.RefusalMismatch, why, "a job unlike its launch in %s", row.field)
		require.Equal(t, "the job's "+row.field+" differ from the recorded launch", detail)

		require.NoError(t, e.js.Queue().PublishJob(ctx, events.JobSubject(string(queue)), job))
		refused = append(refused, job)
	}
	// The genuine job, published after them, runs.
	e.publish(genuine)
	e.waitReport(events.ReportFinished, genuine.ExecutionID)
	require.Len(t, e.workloads(genuine), 1, "the genuine job ran")

	for i, job := range refused {
		all := e.reports.waitFor(t, "a report of the "+rows[i].field+" row", func(rs []events.Report) bool {
			return len(reportsOf(rs, job.ExecutionID)) > 0
		})
		rep := reportsOf(all, job.ExecutionID)[0]
		require.Equal(t, events.ReportRefused, rep.Kind, "the %s row's first report", rows[i].field)
		require.Equal(t, events.RefusalMismatch, rep.Refusal, "the %s row", rows[i].field)
		w.waitEvent(t, evRefused, job.ExecutionID, 1)
	}
	for i, job := range refused {
		require.Empty(t, e.workloads(job), "the %s row's job never starts a CLI", rows[i].field)
		require.Equal(t, []events.ReportKind{events.ReportRefused}, kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)), "the %s row", rows[i].field)
		_, err := e.js.Claims().Inspect(ctx, job.ExecutionID)
		require.ErrorIs(t, err, events.ErrNotFound, "the %s row's job is never claimed", rows[i].field)
	}
}

// TestWorkerAcceptsTheDefaultStallAsZero: the stall timeout is compared as
// the runner applies it, so a job carrying 0 (the default on the wire)
// where the run's effective timeout is the default is the same job.
func TestWorkerAcceptsTheDefaultStallAsZero(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	w := e.startWorker(e.workerConfig("worker-z"))
	job := e.newJob(0)
	e.recordLaunch(policy.Codex, job)
	job.StallTimeoutMs = 0
	why, detail, err := w.verifyJob(context.Background(), policy.Codex, job)
	require.NoError(t, err)
	require.Empty(t, why, detail)
	require.NoError(t, e.js.Queue().PublishJob(context.Background(), events.JobSubject(string(policy.Codex)), job))
	e.waitReport(events.ReportFinished, job.ExecutionID)
	require.Len(t, e.workloads(job), 1)
}

// TestJobChecksCoverEveryJobField: verifyJob compares every key of
// events.Job but those naming the log it reads (executionId, run, lane)
// and the schema (checked by decoding), so a field added to jobs is
// either compared with the launch or fails here.
func TestJobChecksCoverEveryJobField(t *testing.T) {
	t.Parallel()
	checked := map[string]bool{}
	for _, c := range jobChecks {
		require.False(t, checked[c.key], "%s is checked twice", c.key)
		checked[c.key] = true
	}
	addressing := map[string]bool{"schema": true, "executionId": true, "run": true, "lane": true}
	typ := reflect.TypeFor[events.Job]()
	keys := map[string]bool{}
	for f := range typ.Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys[key] = true
		require.True(t, checked[key] || addressing[key], "job field %s (%s) is not compared with the launch", f.Name, key)
	}
	for key := range checked {
		require.True(t, keys[key], "jobChecks names %s, which is not a job key", key)
	}
}
