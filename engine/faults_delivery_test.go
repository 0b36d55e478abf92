package engine_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// Duplicate and late delivery: reports delivered again, reports for lanes
// that are already final, and a job delivered again after its attempt
// finished. None may change a final state.

// TestFaultsLateAndDuplicateReportsChangeNoFinalState delivers, while the
// run is still open, every kind of report again for a lane that is already
// complete (its finished report from another worker, an abandoned report,
// a claimed report) and, for a lane cancelled while its attempt ran, a
// report naming another execution and then the attempt's own cancelled
// receipt. Each is recorded as one audit event with its reason and report
// sequence, no lane leaves its final state, no other event is added, the
// run closes once, and replay verifies.
func TestFaultsLateAndDuplicateReportsChangeNoFinalState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "arena runners: codex:gpt-5.6-sol@high, cursor:composer-2.5@default"), "arena runners", policy.ReadOnly)
	done := h.nextJob(events.JobSubject("codex"))
	running := h.nextJob(events.JobSubject("cursor"))

	h.execute(done, "success")
	h.report(done, events.ReportClaimed)
	h.report(done, events.ReportFinished)
	h.waitLane(run, 0, machines.StateComplete)
	h.report(running, events.ReportClaimed)
	h.waitLane(run, 1, machines.StateRunning)
	require.NoError(t, h.eng.Cancel(ctx, run, 1, "parent moved on"))
	h.waitLane(run, 1, machines.StateCancelled)
	before, err := h.store.LoadRun(ctx, run)
	require.NoError(t, err)

	type delivery struct {
		name   string
		job    events.Job
		kind   events.ReportKind
		mut    func(*events.Report)
		reason events.AuditReason
	}
	other := running
	other.ExecutionID = "x-not-this-lanes-execution"
	deliveries := []delivery{
		{"finished again, from another worker", done, events.ReportFinished, func(r *events.Report) { r.WorkerID = "second-worker" }, events.AuditLateReport},
		{"abandoned after it finished", done, events.ReportAbandoned, func(r *events.Report) { r.WorkerID = "third-worker" }, events.AuditLateReport},
		{"claimed again", done, events.ReportClaimed, func(r *events.Report) { r.WorkerID = "fourth-worker" }, events.AuditLateReport},
		{"another execution on the cancelled lane", other, events.ReportClaimed, nil, events.AuditLateReport},
	}
	var seqs []uint64
	for _, d := range deliveries {
		var muts []func(*events.Report)
		if d.mut != nil {
			muts = append(muts, d.mut)
		}
		seqs = append(seqs, h.report(d.job, d.kind, muts...))
	}
	envs := h.waitType(run, events.TypeAudit, len(deliveries))
	audits := ofType(envs, events.TypeAudit)
	require.Len(t, audits, len(deliveries))
	for i, d := range deliveries {
		a := audits[i].Payload.(events.Audit)
		require.Equal(t, d.reason, a.Reason, d.name)
		require.Equal(t, seqs[i], a.ReportSeq, d.name)
		require.Equal(t, d.job.ExecutionID, a.ExecutionID, d.name)
	}
	require.Len(t, envs, len(before)+len(deliveries), "nothing but the audits was added")

	// The cancelled attempt's own receipt comes last; the run then closes.
	executeCancelled(t, running)
	h.report(running, events.ReportFinished)
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	require.Equal(t, machines.StateCancelled, r.Lanes[1].State)
	audits = ofType(envs, events.TypeAudit)
	require.Len(t, audits, len(deliveries)+1)
	require.Equal(t, events.AuditReportAfterCancel, audits[len(deliveries)].Payload.(events.Audit).Reason, "the cancelled attempt's own report")
	require.Len(t, ofType(envs, events.TypeFinish), 1, "one finish: lane 0's")
	require.Len(t, ofType(envs, events.TypeRunFinal), 1)
	h.verifyReplay(run)
}

// TestFaultsJobRedeliveredAfterItsAttemptFinished: a worker runs an
// attempt to its end (claim, receipt, claimed and finished reports, claim
// released) but dies before acknowledging the job, so JetStream delivers
// the job again after the ack wait. The worker that gets it finds the
// claim released and removes the job without starting anything: the
// simulated CLI never starts, the job is gone for good, and the only
// change to the run's log is one audit event (redelivered-job, after
// run-final, on the run subject) naming the job's delivery; the lane stays
// complete.
func TestFaultsJobRedeliveredAfterItsAttemptFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, srv := listeningHarness(t)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"), "bug-fix", policy.ReadOnly)

	// The first worker: takes the job and never acknowledges it.
	cons, err := h.queue.Jobs(ctx, events.JobSubject("codex"), events.JobOptions{AckWait: time.Second})
	require.NoError(t, err)
	d, err := cons.Next(ctx)
	require.NoError(t, err)
	job := d.Job
	lease, err := h.claims.Claim(ctx, job.ExecutionID, "first-worker", 30*time.Second)
	require.NoError(t, err)
	h.report(job, events.ReportClaimed, func(r *events.Report) { r.WorkerID = "first-worker" })
	h.execute(job, "success")
	h.report(job, events.ReportFinished, func(r *events.Report) { r.WorkerID = "first-worker" })
	_, before := h.waitFinal(run)
	_, err = h.claims.Release(ctx, lease)
	require.NoError(t, err)

	// Watch for the job being removed (terminated) by the next worker.
	nc := srv.Conn()
	terms := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED."+events.JobsStream+".>", terms)
	require.NoError(t, err)
	defer sub.Unsubscribe()

	cfg := simenv.Scenarios(map[string]string{"codex": "success", "cursor": "success"})
	bin := simenv.Install(t, "", cfg)
	home := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	w, err := activities.NewWorker(activities.WorkerConfig{
		Queue: h.queue, Claims: h.claims, Store: h.store, Providers: []policy.Provider{policy.Codex, policy.Cursor},
		WorkerID: "second-worker", LeaseTTL: time.Second, AckWait: time.Second,
		Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"},
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(wctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	defer func() { cancel(); wg.Wait() }()

	select {
	case m := <-terms:
		require.Contains(t, string(m.Data), "execution already finished")
	case <-time.After(waitTimeout):
		t.Fatal("the redelivered job was not removed")
	}
	l, err := h.claims.Inspect(ctx, job.ExecutionID)
	require.NoError(t, err)
	require.Equal(t, events.LeaseReleased, l.State)
	require.Equal(t, "first-worker", l.WorkerID)
	require.Empty(t, simlog.Filter(simenv.Invocations(t, bin), "codex", simlog.KindWorkload), "never started again")
	after := h.waitType(run, events.TypeAudit, 1)
	require.Len(t, after, len(before)+1, "one event added:\n%s", dump(after))
	require.Equal(t, before, after[:len(before)], "nothing before it changed")
	added := after[len(before)]
	require.Equal(t, events.RunLane, added.Lane, "recorded after run-final, on the run subject")
	a := added.Payload.(events.Audit)
	require.Equal(t, events.AuditRedeliveredJob, a.Reason)
	require.Equal(t, job.ExecutionID, a.ExecutionID)
	require.NotNil(t, a.Report)
	require.Equal(t, events.ReportRedelivered, a.Report.Kind)
	require.Equal(t, "second-worker", a.Report.WorkerID)
	require.Equal(t, d.Seq, a.Report.JobSeq, "the job message that came back")
	// The second delivery at the earliest: on a loaded machine the worker's
	// read of the recorded launch can time out, and it then returns the
	// job for a later delivery rather than guess (never a start).
	require.GreaterOrEqual(t, a.Report.Delivery, uint64(2))
	require.NotZero(t, a.ReportSeq)
	r, err := machines.FoldRun(after)
	require.NoError(t, err)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State)
	h.verifyReplay(run)
}
