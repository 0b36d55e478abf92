package activities

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// TestWorkerClaimRefused: a claim the engine's API proxy refuses (this
// worker's claims connection has the reader role, which may not write the
// claims bucket) was not stored, so the worker does not retry it: it logs
// an error naming the execution and the refusal, counts a failed claim
// and returns the job, which a worker allowed to claim then runs once.
func TestWorkerClaimRefused(t *testing.T) {
	t.Parallel()
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	e := newWorkerEnvScenarios(t, map[string]string{"codex": simconfig.ScenarioSuccess}, false,
		eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	cfg := e.workerConfig("worker-refused")
	cfg.Claims = e.openAs(events.RoleReader).Claims()
	logs := recordLogs(t, &cfg)
	obs := newClaimObserver()
	cfg.Observer = obs
	w := e.startWorker(cfg)
	job := e.newJob(0)
	id := job.ExecutionID
	e.publish(job)

	w.waitEvent(t, evReturned, id, 1)
	refusals := logs.waitFor(t, "the refusal logged", func(rs []logRecord) bool {
		return len(matching(rs, slog.LevelError, "claim refused", id)) > 0
	})
	require.Contains(t, matching(refusals, slog.LevelError, "claim refused", id)[0].Attrs["err"], "the reader role may not write bucket "+events.ClaimsBucket)
	require.Empty(t, matching(logs.snapshot(), slog.LevelWarn, "claim failed; retrying", id), "a refusal is not retried")
	require.NotEmpty(t, obs.failed.snapshot(), "the refusal counts as a failed claim")
	require.False(t, w.isUnconfirmed(id), "a refused claim was not stored: nothing may be this worker's")
	_, err = e.js.Claims().Inspect(context.Background(), id)
	require.ErrorIs(t, err, events.ErrNotFound, "no claim was stored")
	require.Zero(t, countEvents(w.events.snapshot(), evClaimed, id))
	w.stop(t)
	require.Empty(t, e.workloads(job), "nothing started")

	// Returned, not removed: a worker allowed to claim runs it, once.
	w2 := e.startWorker(e.workerConfig("worker-allowed"))
	e.waitReport(events.ReportFinished, id)
	w2.waitEvent(t, evAcked, id, 1)
	require.Len(t, e.workloads(job), 1)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(reportsOf(e.reports.snapshot(), id)))
}

// TestWorkerDrainStopsUnknownClaimRetries: a claim that fails without an
// answer (the claims stream is gone, so no stream responds) is retried
// while the worker runs, and not once it drains: the retries stop, the
// job goes back, the execution stays marked unconfirmed (the claim might
// have been stored), nothing starts, and Run returns well within a bound
// instead of retrying until it is cancelled. The job, still queued, runs
// once the stream is back.
func TestWorkerDrainStopsUnknownClaimRetries(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	js, err := jetstream.New(e.srv.Conn())
	require.NoError(t, err)
	require.NoError(t, js.DeleteStream(ctx, "KV_"+events.ClaimsBucket))
	cfg := e.workerConfig("worker-draining")
	logs := recordLogs(t, &cfg)
	obs := newClaimObserver()
	cfg.Observer = obs
	w := e.startWorker(cfg)
	job := e.newJob(0)
	id := job.ExecutionID
	e.publish(job)

	logs.waitFor(t, "the claim retried", func(rs []logRecord) bool {
		return len(matching(rs, slog.LevelWarn, "claim failed; retrying", id)) >= 2
	})
	require.True(t, w.isUnconfirmed(id), "a claim without an answer may be this worker's")
	took := w.drain(t, 10*time.Second)
	t.Logf("Run returned %v after Drain", took)

	all := logs.snapshot()
	gaveUp := slices.IndexFunc(all, func(r logRecord) bool {
		return r.Level == slog.LevelWarn && strings.HasPrefix(r.Msg, "worker draining: claim outcome unknown") && r.Attrs["execution"] == id
	})
	require.GreaterOrEqual(t, gaveUp, 0, "giving up is logged")
	require.Empty(t, matching(all[gaveUp:], slog.LevelWarn, "claim failed; retrying", id), "no retry after giving up")
	require.Equal(t, 1, countEvents(w.events.snapshot(), evReturned, id), "the job was returned")
	require.True(t, w.isUnconfirmed(id), "the execution stays marked unconfirmed")
	require.NotEmpty(t, obs.failed.snapshot(), "giving up counts as a failed claim")
	require.Zero(t, countEvents(w.events.snapshot(), evClaimed, id))
	require.Empty(t, e.workloads(job), "nothing started")

	// Reopening the streams restores the claims bucket; the returned job
	// is claimed and run once by another worker.
	eventstest.Open(t, e.srv, events.JetStreamConfig{})
	w2 := e.startWorker(e.workerConfig("worker-next"))
	e.waitReport(events.ReportFinished, id)
	w2.waitEvent(t, evAcked, id, 1)
	require.Len(t, e.workloads(job), 1)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportFinished}, kinds(reportsOf(e.reports.snapshot(), id)))
}

// TestWorkerDrainStopsWatchingAHeldLease: a job whose execution another
// holder claimed is watched until the lease is renewed or goes stale; a
// drain stops the watch at once. The job goes back unremoved, the lease
// is left as it was (held, not abandoned), nothing starts, and Run
// returns well before the lease could go stale.
func TestWorkerDrainStopsWatchingAHeldLease(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioSuccess, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	job := e.newJob(0)
	id := job.ExecutionID
	const ttl = time.Minute // stale no sooner than this; never renewed
	held, err := e.js.Claims().Claim(ctx, id, "holder", ttl)
	require.NoError(t, err)
	cfg := e.workerConfig("worker-draining")
	logs := recordLogs(t, &cfg)
	w := e.startWorker(cfg)
	e.publish(job)

	w.waitEvent(t, evWatching, id, 1)
	took := w.drain(t, 15*time.Second)
	t.Logf("Run returned %v after Drain", took)

	evs := w.events.snapshot()
	require.Equal(t, 1, countEvents(evs, evReturned, id), "the job was returned: %v", evs)
	for _, k := range []workerEventKind{evAbandonedStale, evClaimed, evAlreadyAbandoned, evAlreadyReleased} {
		require.Zero(t, countEvents(evs, k, id), "%s: %v", k, evs)
	}
	require.NotEmpty(t, matching(logs.snapshot(), slog.LevelInfo, "worker draining: stopped watching the execution's lease; job returned", id))
	now, err := e.js.Claims().Inspect(ctx, id)
	require.NoError(t, err)
	require.Equal(t, events.LeaseHeld, now.State)
	require.Equal(t, held.Revision, now.Revision, "the lease is as the holder left it")
	require.Empty(t, e.workloads(job), "nothing started")
	require.Empty(t, reportsOf(e.reports.snapshot(), id), "nothing reported")
}

// openAs opens the streams on a new in-process connection to the test's
// server as role r (what the role may do matters when the server
// authenticates).
func (e *workerEnv) openAs(r events.Role) *events.JetStream {
	e.t.Helper()
	nc, err := e.srv.ConnectAs(r)
	require.NoError(e.t, err)
	e.t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(e.t, err, "open the streams as %s", r)
	return j
}

// isUnconfirmed reports whether id is marked unconfirmed.
func (w *Worker) isUnconfirmed(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unconfirmed[id]
}

// claimObserver records the worker's failed claims.
type claimObserver struct{ failed *observed[policy.Provider] }

func newClaimObserver() *claimObserver {
	return &claimObserver{failed: newObserved[policy.Provider]()}
}

func (o *claimObserver) ClaimFailed(p policy.Provider) { o.failed.add(p) }
func (o *claimObserver) LeaseFailed(policy.Provider)   {}

// logRecord is one line of a worker's log, with its attributes (and the
// logger's) as text.
type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// recordLogs makes cfg's logger record every line, besides writing it to
// the test's output.
func recordLogs(t *testing.T, cfg *WorkerConfig) *observed[logRecord] {
	t.Helper()
	o := newObserved[logRecord]()
	cfg.Logger = slog.New(&recordingHandler{next: cfg.Logger.Handler(), into: o})
	return o
}

// matching lists the records at level whose message starts with msg,
// about execution id.
func matching(rs []logRecord, level slog.Level, msg, id string) []logRecord {
	var out []logRecord
	for _, r := range rs {
		if r.Level == level && strings.HasPrefix(r.Msg, msg) && r.Attrs["execution"] == id {
			out = append(out, r)
		}
	}
	return out
}

// recordingHandler records each record into an observed list and passes
// it on. Groups are not recorded (the worker logs none).
type recordingHandler struct {
	next  slog.Handler
	attrs []slog.Attr
	into  *observed[logRecord]
}

func (h *recordingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.into.add(rec)
	return h.next.Handle(ctx, r)
}

func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordingHandler{next: h.next.WithAttrs(as), attrs: append(slices.Clip(h.attrs), as...), into: h.into}
}

func (h *recordingHandler) WithGroup(name string) slog.Handler {
	return &recordingHandler{next: h.next.WithGroup(name), attrs: h.attrs, into: h.into}
}
