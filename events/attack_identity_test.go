package events_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// identityServer is authServer with provisioned worker identities: one
// serving codex, one serving claude. serverChecks says whether the
// embedded server itself knows them (the data-directory case) or only
// the engine's proxy does (as with a deployment's nats-server whose
// worker users share a role user).
func identityServer(t *testing.T, serverChecks bool) (e *events.Embedded, path, codexSeed, claudeSeed string, engine *events.JetStream) {
	t.Helper()
	creds, path := credentialsFile(t)
	dir := filepath.Dir(path)
	reg := filepath.Join(dir, "workers.json")
	codexSeed, claudeSeed = filepath.Join(dir, "codex.nk"), filepath.Join(dir, "claude.nk")
	_, err := events.IssueWorkerIdentity(reg, codexSeed, []policy.Provider{"codex"})
	require.NoError(t, err)
	_, err = events.IssueWorkerIdentity(reg, claudeSeed, []policy.Provider{"claude"})
	require.NoError(t, err)
	workers, err := events.ReadWorkerIdentities(reg)
	require.NoError(t, err)
	require.Len(t, workers.Identities(), 2)
	e = eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) {
		c.Auth = creds
		if serverChecks {
			c.Workers = workers
		}
	}))
	engine = eventstest.Open(t, e, events.JetStreamConfig{Workers: workers})
	return e, path, codexSeed, claudeSeed, engine
}

// connectWorker connects as the worker whose seed is at seed and opens the
// streams as the worker command does.
func connectWorker(t *testing.T, e *events.Embedded, path, seed string) *events.JetStream {
	t.Helper()
	opts, err := events.WorkerIdentityOptions(path, seed)
	require.NoError(t, err)
	nc, err := events.Connect([]string{e.ClientURL()}, append(opts, nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := events.OpenJetStream(ctx30(t), nc, events.JetStreamConfig{})
	require.NoError(t, err)
	return js
}

// TestAttackWorkerIdentityCapacity (issue 25, class 4): a worker whose
// identity serves codex cannot put claude's capacity report (here, to
// lift the exhaustion that excludes claude), pull or bind claude's jobs,
// or acknowledge them; claude's report and queued job are unchanged, and
// the codex worker still does its own provider's work. On the embedded
// server a worker connection without a provisioned key is refused
// outright.
func TestAttackWorkerIdentityCapacity(t *testing.T) {
	t.Parallel()
	e, path, codexSeed, claudeSeed, engine := identityServer(t, true)
	ctx := ctx30(t)
	engineJS, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	t0 := time.Now().UTC().Add(-time.Minute).Round(time.Millisecond)
	exhausted := eventstest.SampleCapacityReport("claude", t0)
	require.NoError(t, engine.Capacity().Put(ctx, exhausted))
	require.NoError(t, engine.SetProviderCaps(ctx, map[policy.Provider]int{"codex": 2, "claude": 2}))
	run := eventstest.NewRunID()
	require.NoError(t, engine.Queue().PublishJob(ctx, events.JobSubject("claude"), eventstest.SampleJob(run, 0, eventstest.NewExecutionID())))

	w := connectWorker(t, e, path, codexSeed)
	lifted := eventstest.SampleCapacityReport("claude", time.Now().UTC())
	err = w.Capacity().Put(ctx, lifted)
	require.True(t, events.IsPermissionDenied(err), "a codex worker putting claude's report: %v", err)
	require.ErrorContains(t, err, "serves only [codex]")
	// Binding to an existing consumer is a read; taking a job is not.
	if jc, err := w.Queue().Jobs(ctx, events.JobSubject("claude"), events.JobOptions{}); err == nil {
		nctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = jc.Next(nctx)
		cancel()
		require.Error(t, err, "a codex worker taking claude's job")
	}
	// Pulling from claude's job consumer straight through the proxy.
	raw, err := jetstream.NewWithAPIPrefix(connNC(t, e, path, codexSeed), events.APIProxyPrefix+events.ConnInboxPrefix(events.RoleWorker, keyOf(t, codexSeed)), jetstream.WithDefaultTimeout(5*time.Second))
	require.NoError(t, err)
	claudeJobs, err := raw.Consumer(ctx, events.JobsStream, "jobs_claude")
	require.NoError(t, err, "consumer info is a read")
	_, err = claudeJobs.Next(jetstream.FetchMaxWait(2 * time.Second))
	require.ErrorContains(t, err, "serves only [codex]", "a codex worker pulling claude's job")
	// Acknowledging claude's jobs: the server refuses the publish.
	nc := connNC(t, e, path, codexSeed)
	require.NoError(t, nc.Publish("$JS.ACK."+events.JobsStream+".jobs_claude.1.1.1.1.0", nil))
	require.Eventually(t, func() bool { _ = nc.Flush(); return errors.Is(nc.LastError(), nats.ErrPermissionViolation) }, 10*time.Second, 50*time.Millisecond)

	// A worker connection with the role's secret but no provisioned key.
	_, err = events.Connect([]string{e.ClientURL()}, append(events.FileClientOptions(path, events.RoleWorker), nats.MaxReconnects(0))...)
	require.ErrorContains(t, err, "Authorization Violation", "an unprovisioned worker")

	// Nothing changed.
	got, err := engine.Capacity().Get(ctx, "claude")
	require.NoError(t, err)
	require.True(t, got.Snapshot.AcquiredAt.Equal(exhausted.Snapshot.AcquiredAt), "claude's report is the engine's: %v", got.Snapshot.AcquiredAt)
	cons, err := engineJS.Consumer(ctx, events.JobsStream, "jobs_claude")
	require.NoError(t, err)
	require.EqualValues(t, 1, cons.CachedInfo().NumPending, "claude's job is still queued")
	require.Zero(t, cons.CachedInfo().NumAckPending, "and nobody holds it")

	// The workers still do their own providers' work.
	require.NoError(t, w.Capacity().Put(ctx, eventstest.SampleCapacityReport("codex", time.Now().UTC())), "codex's worker puts codex's report")
	jc, err := w.Queue().Jobs(ctx, events.JobSubject("codex"), events.JobOptions{})
	require.NoError(t, err, "codex's worker binds codex's jobs")
	require.NotNil(t, jc)
	cw := connectWorker(t, e, path, claudeSeed)
	require.NoError(t, cw.Capacity().Put(ctx, lifted), "claude's worker puts claude's report")
	got, err = engine.Capacity().Get(ctx, "claude")
	require.NoError(t, err)
	require.True(t, got.Snapshot.AcquiredAt.Equal(lifted.Snapshot.AcquiredAt))
}

// TestAttackUnprovisionedWorkerProxy (issue 25, class 4): where the
// server lets any worker user in (a deployment whose workers share the
// role's user), the engine's proxy still takes nothing but reads from a
// worker connection whose key it does not list: no capacity report, no
// claim, no report, no job.
func TestAttackUnprovisionedWorkerProxy(t *testing.T) {
	t.Parallel()
	e, path, codexSeed, _, engine := identityServer(t, false)
	ctx := ctx30(t)
	require.NoError(t, engine.SetProviderCaps(ctx, map[policy.Provider]int{"codex": 2}))
	require.NoError(t, engine.Queue().PublishJob(ctx, events.JobSubject("codex"), eventstest.SampleJob(eventstest.NewRunID(), 0, eventstest.NewExecutionID())))
	stranger := connectAs(t, e, path, events.RoleWorker) // a fresh key of its own
	err := stranger.Capacity().Put(ctx, eventstest.SampleCapacityReport("codex", time.Now().UTC()))
	require.True(t, events.IsPermissionDenied(err), "capacity: %v", err)
	require.ErrorContains(t, err, "no provisioned worker identity")
	_, err = stranger.Claims().Claim(ctx, eventstest.NewExecutionID(), "w-stranger", time.Minute)
	require.True(t, events.IsPermissionDenied(err), "claim: %v", err)
	_, err = stranger.Queue().PublishReport(ctx, eventstest.SampleReport(events.ReportClaimed, eventstest.NewRunID(), 0, eventstest.NewExecutionID(), "w-stranger"))
	require.True(t, events.IsPermissionDenied(err), "report: %v", err)
	if jc, err := stranger.Queue().Jobs(ctx, events.JobSubject("codex"), events.JobOptions{}); err == nil {
		nctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = jc.Next(nctx)
		cancel()
		require.Error(t, err, "jobs")
	}
	_, err = engine.Capacity().Get(ctx, "codex")
	require.ErrorIs(t, err, events.ErrNoCapacityReport, "nothing was put")
	engineJS, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	cons, err := engineJS.Consumer(ctx, events.JobsStream, "jobs_codex")
	require.NoError(t, err)
	require.EqualValues(t, 1, cons.CachedInfo().NumPending, "codex's job is still queued")
	require.Zero(t, cons.CachedInfo().NumAckPending, "and nobody holds it")
	_, err = stranger.Store().Runs(ctx)
	require.NoError(t, err, "it still reads")

	w := connectWorker(t, e, path, codexSeed)
	require.NoError(t, w.Capacity().Put(ctx, eventstest.SampleCapacityReport("codex", time.Now().UTC())), "the provisioned worker puts its report")
	_, err = w.Claims().Claim(ctx, eventstest.NewExecutionID(), "w-codex", time.Minute)
	require.NoError(t, err, "the provisioned worker claims")
}

// connNC is a raw connection as the worker whose seed is at seed.
func connNC(t *testing.T, e *events.Embedded, path, seed string) *nats.Conn {
	t.Helper()
	opts, err := events.WorkerIdentityOptions(path, seed)
	require.NoError(t, err)
	nc, err := events.Connect([]string{e.ClientURL()}, append(opts, nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// keyOf is the public key of the seed at path.
func keyOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw))))
	require.NoError(t, err)
	pub, err := kp.PublicKey()
	require.NoError(t, err)
	return pub
}

// TestAttackReaderSubscriptions (issue 25, class 2): a reader piling up
// subscriptions on its own inbox hits the server's per-connection limit;
// the engine still appends and another reader still follows a run.
//
// Not parallel: sixteen thousand subscriptions load a shared machine
// enough to starve the tests beside it.
func TestAttackReaderSubscriptions(t *testing.T) {
	e, path, _ := authServer(t)
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	r := connectHostile(t, e, path, events.RoleReader)
	inbox := r.nc.Opts.InboxPrefix
	// Every subscription shares one small channel: a SubscribeSync each
	// would give this test process a 64k-message buffer per subscription,
	// gigabytes for the collector to scan beside the server under test,
	// which is the attacker's cost, not the server's.
	flood := make(chan *nats.Msg, 1)
	for i := range events.ServerMaxSubscriptions + 10 {
		if _, err := r.nc.ChanSubscribe(fmt.Sprintf("%s.flood.%d", inbox, i), flood); err != nil {
			break // the client noticed the server closing it
		}
	}
	require.Eventually(t, func() bool {
		_ = r.nc.Flush()
		err := r.nc.LastError()
		return err != nil && strings.Contains(strings.ToLower(err.Error()), "maximum subscriptions exceeded")
	}, 20*time.Second, 50*time.Millisecond, "the server refuses subscriptions past its limit")

	ctx := ctx30(t) // after the flood, which takes a while under -race
	run := eventstest.NewRunID()
	other := connectAs(t, e, path, events.RoleReader)
	_, err := engine.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, time.Now().UTC()), 0)
	require.NoError(t, err, "the engine still appends")
	ch, err := other.Store().Watch(ctx, run, 0)
	require.NoError(t, err, "another reader still follows a run")
	select {
	case env := <-ch:
		require.Equal(t, run, env.Run)
	case <-ctx.Done():
		t.Fatal("the watch delivered nothing")
	}
}
