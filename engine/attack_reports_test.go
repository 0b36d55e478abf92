package engine_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/machines"
)

// newAuthHarness is newHarness on the jetstream backend with a server
// that authenticates every connection as a role (the engine's own being
// in-process), and the credentials other connections use.
func newAuthHarness(t *testing.T) (*harness, *events.Credentials) {
	t.Helper()
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	srv := eventstest.StartServer(t, eventstest.WithFsync(events.FsyncInterval), eventstest.WithListen(),
		eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	js := eventstest.Open(t, srv, events.JetStreamConfig{})
	h := &harness{t: t, backend: jetstream, data: t.TempDir(), repo: gitRepo(t), srv: srv}
	h.store, h.queue, h.claims = js.Store(), js.Queue(), js.Claims()
	h.capacity = seeded(t, js.Capacity())
	h.cfg = engine.Config{
		Store: h.store, Queue: h.queue, Claims: h.claims, DataDir: h.data, NativePoll: 200 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		Capacity: h.capacity,
	}
	h.eng, err = engine.New(h.cfg)
	require.NoError(t, err)
	return h, creds
}

// roleQueue connects as role r with its real secret, over TCP, and opens
// the streams as that role's commands do.
func roleQueue(t *testing.T, h *harness, creds *events.Credentials, r events.Role) (events.Queue, string) {
	t.Helper()
	js, inbox := roleConn(t, h, creds, r)
	return js.Queue(), inbox
}

// roleConn is roleQueue's connection, with every seam.
func roleConn(t *testing.T, h *harness, creds *events.Credentials, r events.Role) (*events.JetStream, string) {
	t.Helper()
	nc, err := events.Connect([]string{h.srv.ClientURL()}, append(creds.ClientOptions(r), nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)
	return js, nc.Opts.InboxPrefix
}

// TestAttackForeignReports (issue 25, class 3): reports are accepted only
// from the connections that may make them. A parent's report on an
// external execution, and another worker's finish of an execution a
// worker claimed, are recorded as foreign-report audits and change
// nothing: the lane stays running under its claimer, whose claim names
// its connection.
func TestAttackForeignReports(t *testing.T) {
	t.Parallel()
	h, creds := newAuthHarness(t)
	h.run()
	run, job := h.submitOneLane()
	h.waitLane(run, 0, machines.StateLaunching)

	parentQ, _ := roleQueue(t, h, creds, events.RoleParent)
	claimerJS, claimer := roleConn(t, h, creds, events.RoleWorker)
	claimerQ := claimerJS.Queue()
	otherQ, other := roleQueue(t, h, creds, events.RoleWorker)
	require.NotEqual(t, claimer, other, "each connection has its own identity")

	publish := func(q events.Queue, kind events.ReportKind, worker string) {
		t.Helper()
		r := events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: kind, WorkerID: worker, Time: time.Now()}
		switch kind {
		case events.ReportClaimed:
			r.Lease = &events.LeaseInfo{TTLMs: 30_000, Revision: 1}
		case events.ReportFinished:
			r.ReceiptPath, r.ReceiptDigest = job.Paths.Receipt, events.Digest([]byte("forged"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_, err := q.PublishReport(ctx, r)
		require.NoError(t, err, "the report reaches the stream; the engine judges it")
	}

	// A parent claims the worker's execution: refused.
	publish(parentQ, events.ReportClaimed, "parent-as-worker")
	envs := h.waitType(run, events.TypeAudit, 1)
	audits := ofType(envs, events.TypeAudit)
	require.Equal(t, events.AuditForeignReport, audits[0].Payload.(events.Audit).Reason, dump(envs))
	require.Empty(t, ofType(envs, events.TypeClaim), "no claim from a parent")

	// Another worker reports the claim first, without the claims
	// bucket's lease: refused, or the worker running the attempt could
	// never report its outcome.
	publish(otherQ, events.ReportClaimed, "w-early")
	envs = h.waitType(run, events.TypeAudit, 2)
	audits = ofType(envs, events.TypeAudit)
	require.Contains(t, audits[1].Payload.(events.Audit).Detail, "claims bucket", dump(envs))
	require.Empty(t, ofType(envs, events.TypeClaim), "no claim from a worker without the lease")

	// The worker that runs it claims it in the bucket, then reports; the
	// claim names its connection.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, err := claimerJS.Claims().Claim(ctx, job.ExecutionID, "w-claimer", 30*time.Second)
	require.NoError(t, err)
	// The other worker reports the claim under the lease's worker id:
	// still not its lease, refused. Its report has the same message id
	// as the claimer's will have: the claimer's is not dropped as a
	// duplicate of it (the proxy makes each connection's ids its own).
	publish(otherQ, events.ReportClaimed, "w-claimer")
	envs = h.waitType(run, events.TypeAudit, 3)
	audits = ofType(envs, events.TypeAudit)
	require.Contains(t, audits[2].Payload.(events.Audit).Detail, "not this connection's lease", dump(envs))
	require.Empty(t, ofType(envs, events.TypeClaim), "no claim from a worker that is not the lease's writer")
	publish(claimerQ, events.ReportClaimed, "w-claimer")
	envs = h.waitType(run, events.TypeClaim, 1)
	claim := ofType(envs, events.TypeClaim)[0].Payload.(events.Claim)
	require.Equal(t, claimer, claim.Reporter)
	require.Equal(t, "w-claimer", claim.WorkerID)

	// Another worker, with the worker role's real secret, finishes it
	// under the claimer's worker id: refused, the lane still runs.
	publish(otherQ, events.ReportFinished, "w-claimer")
	envs = h.waitType(run, events.TypeAudit, 4)
	audits = ofType(envs, events.TypeAudit)
	last := audits[len(audits)-1].Payload.(events.Audit)
	require.Equal(t, events.AuditForeignReport, last.Reason, dump(envs))
	require.Contains(t, last.Detail, "claimed by another worker connection")
	require.Empty(t, ofType(envs, events.TypeFinish), "no finish from another connection")
	r := h.waitLane(run, 0, machines.StateRunning)
	require.Nil(t, r.Closed)

	// The other worker abandons it (stopping the lane), while the claims
	// bucket shows the lease held: refused, the lane still runs.
	publish(otherQ, events.ReportAbandoned, "w-other")
	envs = h.waitType(run, events.TypeAudit, 5)
	audits = ofType(envs, events.TypeAudit)
	last = audits[len(audits)-1].Payload.(events.Audit)
	require.Equal(t, events.AuditForeignReport, last.Reason, dump(envs))
	require.Contains(t, last.Detail, "claim", "the abandon is refused for the claim")
	r = h.waitLane(run, 0, machines.StateRunning)
	require.Nil(t, r.Closed)
}

// TestAttackJunkReports (issue 25, class 3): a worker flooding a run with
// reports that change nothing (here 100 on an execution the lane is not
// running) adds the first few to the run's log one by one and then only
// their count, at powers of two; the lane is untouched.
func TestAttackJunkReports(t *testing.T) {
	t.Parallel()
	h, creds := newAuthHarness(t)
	h.run()
	run, job := h.submitOneLane()
	h.waitLane(run, 0, machines.StateLaunching)
	q, _ := roleQueue(t, h, creds, events.RoleWorker)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	const flood = 100
	for i := range flood {
		r := events.Report{ExecutionID: eventstest.NewExecutionID(), Run: job.Run, Lane: job.Lane, Kind: events.ReportClaimed,
			WorkerID: "w-junk", Time: time.Now(), Lease: &events.LeaseInfo{TTLMs: 30_000, Revision: uint64(i + 1)}}
		_, err := q.PublishReport(ctx, r)
		require.NoError(t, err)
	}
	// 1..8 one by one, then the counts 16, 32 and 64.
	_, envs := h.waitRun(run, "the count of 64", func(_ *machines.Run, envs []events.Envelope) bool {
		for _, env := range ofType(envs, events.TypeAudit) {
			if a := env.Payload.(events.Audit); a.Reason == events.AuditStaleReport && strings.HasPrefix(a.Detail, "64 stale-report reports") {
				return true
			}
		}
		return false
	})
	// A legitimate claim after the flood is still handled, so every junk
	// report before it was.
	h.report(job, events.ReportClaimed)
	r, envs := h.waitRun(run, "the claim", func(_ *machines.Run, envs []events.Envelope) bool { return len(ofType(envs, events.TypeClaim)) == 1 })
	var stale []string
	for _, env := range ofType(envs, events.TypeAudit) {
		if a := env.Payload.(events.Audit); a.Reason == events.AuditStaleReport {
			stale = append(stale, a.Detail)
		}
	}
	require.Len(t, stale, 8+3, "8 recorded one by one, then the counts 16, 32, 64:\n%s", strings.Join(stale, "\n"))
	require.True(t, strings.HasPrefix(stale[8], "16 stale-report reports"), stale[8])
	require.Equal(t, machines.StateRunning, r.Lanes[0].State)
}
