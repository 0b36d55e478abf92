package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// These tests act as a hostile role-holder (issue 25): a real process's
// connection with the role's real credentials, against the real embedded
// server with its authenticator and the engine's API proxy, using the
// JetStream API directly rather than Switchyard's client code.

// hostile is a role's raw connection: its JetStream handle as the role's
// clients get it (through the engine's proxy) and one straight at $JS.API.
type hostile struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	direct jetstream.JetStream
}

func connectHostile(t *testing.T, e *events.Embedded, path string, r events.Role) hostile {
	t.Helper()
	nc, err := events.Connect([]string{e.ClientURL()}, append(events.FileClientOptions(path, r), nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.NewWithAPIPrefix(nc, events.APIProxyPrefix+nc.Opts.InboxPrefix, jetstream.WithDefaultTimeout(5*time.Second))
	require.NoError(t, err)
	direct, err := jetstream.New(nc, jetstream.WithDefaultTimeout(2*time.Second))
	require.NoError(t, err)
	return hostile{nc: nc, js: js, direct: direct}
}

// refused requires err to be the proxy's refusal (a JetStream API error
// with code 403).
func refused(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	var apiErr *jetstream.APIError
	require.True(t, errors.As(err, &apiErr), "%s: want the engine's refusal, got %v", what, err)
	require.Equal(t, 403, apiErr.Code, "%s: %v", what, err)
}

func consumerNames(t *testing.T, js jetstream.JetStream, stream string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	require.NoError(t, err)
	l := st.ConsumerNames(ctx)
	var out []string
	for n := range l.Name() {
		out = append(out, n)
	}
	require.NoError(t, l.Err())
	return out
}

func ctx2(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestAttackReaderConsumers (issue 25, class 2): a reader cannot make a
// durable consumer, a consumer that takes acks or lives on disk, or a
// push consumer delivering outside its own inbox (the relay into the
// submission subject); it cannot use $JS.API itself; it cannot exhaust
// the consumers; and afterwards the engine still creates consumers and a
// reader still follows a stream.
func TestAttackReaderConsumers(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	run := eventstest.NewRunID()
	at := time.Now().UTC()
	_, err := engine.Store().Append(ctx30(t), eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, at), 0)
	require.NoError(t, err)
	engineJS, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	before := consumerNames(t, engineJS, events.EventsStream)

	// The engine's submission subject: nothing may be relayed there.
	relayed := make(chan *nats.Msg, 16)
	sub, err := e.Conn().ChanSubscribe(events.SubmitSubject, relayed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	r := connectHostile(t, e, path, events.RoleReader)
	ctx := ctx30(t)
	eph := func(c jetstream.ConsumerConfig) jetstream.ConsumerConfig {
		c.AckPolicy, c.MemoryStorage, c.Replicas, c.InactiveThreshold = jetstream.AckNonePolicy, true, 1, 5*time.Second
		return c
	}
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Durable: "evil", AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, InactiveThreshold: time.Second})
	refused(t, err, "a durable consumer")
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Name: "evil", AckPolicy: jetstream.AckExplicitPolicy, MemoryStorage: true, InactiveThreshold: time.Second})
	refused(t, err, "a consumer taking acks")
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Name: "evil", AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Second})
	refused(t, err, "a consumer on disk")
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Name: "evil", AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Hour})
	refused(t, err, "a consumer living idle for an hour")
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Name: "evil", DeliverSubject: events.SubmitSubject,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: 5 * time.Second})
	refused(t, err, "a push consumer relaying into the submission subject")
	_, err = r.js.CreateOrUpdateConsumer(ctx, events.JobsStream, eph(jetstream.ConsumerConfig{Name: "evil"}))
	refused(t, err, "a consumer on the jobs")
	// The same with $JS.API itself: the server refuses the publish.
	_, err = r.direct.CreateOrUpdateConsumer(ctx2(t), events.EventsStream, jetstream.ConsumerConfig{Durable: "evil2"})
	require.Error(t, err, "$JS.API straight")
	require.ErrorIs(t, r.nc.LastError(), nats.ErrPermissionViolation)
	err = r.js.DeleteStream(ctx, events.EventsStream)
	refused(t, err, "deleting the events stream")
	jobs, err := r.js.Stream(ctx, events.JobsStream)
	require.NoError(t, err, "stream info is a read")
	_, err = jobs.GetMsg(ctx, 1)
	refused(t, err, "reading a job's payload")
	_, err = jobs.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(events.JobSubject("codex")))
	refused(t, err, "reading a job's payload by subject")

	// A stream-info request whose answer should go to the submission
	// subject is dropped; the request after it is answered, so the first
	// one was handled before it.
	require.NoError(t, r.nc.PublishRequest(events.APIProxyPrefix+r.nc.Opts.InboxPrefix+".STREAM.INFO."+events.EventsStream, events.SubmitSubject, nil))
	_, err = r.js.Stream(ctx, events.EventsStream)
	require.NoError(t, err, "a reader reads stream info")

	// A pull consumer under another inbox's owner token (the worker's)
	// is refused: it could read or delete the worker's consumers.
	workerToken := events.ConsumerOwnerToken(events.InboxPrefix(events.RoleWorker))
	_, err = r.js.CreateConsumer(ctx, events.EventsStream, eph(jetstream.ConsumerConfig{Name: workerToken + "-x"}))
	refused(t, err, "a consumer in another role's name")
	refused(t, r.js.DeleteConsumer(ctx, events.EventsStream, workerToken+"-x"), "deleting another role's consumer")

	// Exhaustion: the consumers one connection holds are bounded.
	mine := events.ConsumerOwnerToken(r.nc.Opts.InboxPrefix)
	var last error
	for i := range 300 {
		// Idle for up to the longest the proxy allows, so none expires
		// while a slow machine creates the rest.
		c := eph(jetstream.ConsumerConfig{Name: fmt.Sprintf("%s-many%d", mine, i)})
		c.InactiveThreshold = 10 * time.Minute
		_, last = r.js.CreateConsumer(ctx, events.EventsStream, c)
		if last != nil {
			require.GreaterOrEqual(t, i, 200, "legitimate consumers are refused too early")
			break
		}
	}
	refused(t, last, "the 300th consumer of one reader")

	// Nothing changed: no consumer of the attacker's but the legitimate
	// ephemeral ones, nothing relayed, and the engine and another reader
	// still work.
	after := consumerNames(t, engineJS, events.EventsStream)
	for _, n := range after {
		require.NotContains(t, []string{"evil", "evil2"}, n)
	}
	require.Empty(t, relayed, "nothing reached the submission subject")
	_, err = engineJS.OrderedConsumer(ctx, events.EventsStream, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err, "the engine still creates consumers")
	_ = before
	other := connectAs(t, e, path, events.RoleReader)
	envs, err := other.Store().Load(ctx, run, events.RunLane)
	require.NoError(t, err, "another reader still reads")
	require.Len(t, envs, 1)
	ch, err := other.Store().Watch(ctx, run, 0)
	require.NoError(t, err, "another reader still follows a run")
	select {
	case env := <-ch:
		require.Equal(t, run, env.Run)
	case <-ctx.Done():
		t.Fatal("the watch delivered nothing")
	}
}

// TestAttackWorkerJobConsumers (issue 25, class 2): a worker cannot change
// a provider's job consumer (its cap is the deployment's), delete it, make
// a consumer of its own on the jobs, or take a parent's native jobs; the
// cap and the native job stay as they were, and the worker's own
// Queue.Jobs still works.
func TestAttackWorkerJobConsumers(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	ctx := ctx30(t)
	prov := policy.Provider("codex")
	require.NoError(t, engine.SetProviderCaps(ctx, map[policy.Provider]int{prov: 3}))
	nativeSubj := events.NativeJobSubject(string(policy.ParentClaude))
	_, err := engine.Queue().Jobs(ctx, nativeSubj, events.JobOptions{})
	require.NoError(t, err)
	run := eventstest.NewRunID()
	require.NoError(t, engine.Queue().PublishJob(ctx, nativeSubj, eventstest.SampleJob(run, 0, eventstest.NewExecutionID())))
	engineJS, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	capOf := func() int {
		c, err := engineJS.Consumer(ctx, events.JobsStream, "jobs_codex")
		require.NoError(t, err)
		return c.CachedInfo().Config.MaxAckPending
	}

	w := connectHostile(t, e, path, events.RoleWorker)
	c, err := w.js.Consumer(ctx, events.JobsStream, "jobs_codex")
	require.NoError(t, err, "a worker reads its job consumer")
	cfg := c.CachedInfo().Config
	cfg.MaxAckPending = events.MaxProviderCap
	_, err = w.js.UpdateConsumer(ctx, events.JobsStream, cfg)
	refused(t, err, "raising the deployment's cap")
	refused(t, w.js.DeleteConsumer(ctx, events.JobsStream, "jobs_codex"), "deleting a provider's job consumer")
	_, err = w.js.CreateOrUpdateConsumer(ctx, events.JobsStream, jetstream.ConsumerConfig{Durable: "jobs_evil", FilterSubject: nativeSubj, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	refused(t, err, "a filtered consumer on the native queue")
	nc, err := engineJS.Consumer(ctx, events.JobsStream, "jobs_native_claude")
	require.NoError(t, err)
	ncfg := nc.CachedInfo().Config
	ncfg.AckWait = time.Hour
	_, err = w.js.UpdateConsumer(ctx, events.JobsStream, ncfg)
	refused(t, err, "changing the parent's native consumer")
	native, err := w.js.Consumer(ctx, events.JobsStream, "jobs_native_claude")
	require.NoError(t, err, "consumer info is a read")
	_, err = native.Next(jetstream.FetchMaxWait(2 * time.Second))
	require.Error(t, err, "a worker pulling the parent's native job")
	require.ErrorContains(t, err, "may not")
	// $JS.API itself: refused by the server.
	_, err = w.direct.CreateOrUpdateConsumer(ctx2(t), events.JobsStream, jetstream.ConsumerConfig{Durable: "jobs_codex", FilterSubject: events.JobSubject("codex"), MaxAckPending: 64})
	require.Error(t, err)
	require.ErrorIs(t, w.nc.LastError(), nats.ErrPermissionViolation)

	// Nothing changed: the cap, the native job still queued, the
	// consumers; and a worker still binds to its job consumer with its own
	// ack wait.
	require.Equal(t, 3, capOf(), "the cap is the engine's")
	nc, err = engineJS.Consumer(ctx, events.JobsStream, "jobs_native_claude")
	require.NoError(t, err)
	require.EqualValues(t, 1, nc.CachedInfo().NumPending, "the native job is still queued")
	require.Equal(t, ncfg.AckWait != nc.CachedInfo().Config.AckWait, true)
	names := consumerNames(t, engineJS, events.JobsStream)
	require.ElementsMatch(t, []string{"jobs_codex", "jobs_native_claude"}, names)
	worker := connectAs(t, e, path, events.RoleWorker)
	jc, err := worker.Queue().Jobs(ctx, events.JobSubject("codex"), events.JobOptions{AckWait: 45 * time.Second})
	require.NoError(t, err, "a worker binds to its job consumer")
	require.NotNil(t, jc)
	c, err = engineJS.Consumer(ctx, events.JobsStream, "jobs_codex")
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, c.CachedInfo().Config.AckWait)
	require.Equal(t, 3, capOf(), "a worker's ack wait keeps the cap")
}

// TestAttackBucketRollups (issue 25, class 4): neither a worker nor a
// parent can roll up the claims bucket (wiping every claim) or the
// capacity bucket, through the engine's proxy, through the key-value
// client's purge, or by publishing to $KV itself; the claim and the
// capacity report are still there. A reader writes no bucket at all.
func TestAttackBucketRollups(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	ctx := ctx30(t)
	exec := eventstest.NewExecutionID()
	lease, err := engine.Claims().Claim(ctx, exec, "w1", time.Minute)
	require.NoError(t, err)
	report := eventstest.SampleCapacityReport(policy.Provider("codex"), time.Now().UTC())
	require.NoError(t, engine.Capacity().Put(ctx, report))

	for _, r := range []events.Role{events.RoleWorker, events.RoleParent, events.RoleReader} {
		h := connectHostile(t, e, path, r)
		for _, bucket := range []string{events.ClaimsBucket, events.CapacityBucket} {
			for _, how := range []string{"all", "sub"} {
				m := nats.NewMsg(events.APIProxyPrefix + h.nc.Opts.InboxPrefix + ".$KV." + bucket + "." + exec)
				m.Header.Set(jetstream.MsgRollup, how)
				_, err := h.js.PublishMsg(ctx, m)
				refused(t, err, fmt.Sprintf("a %s rolling up %s (%s)", r, bucket, how))
			}
			kv, err := h.js.KeyValue(ctx, bucket)
			require.NoError(t, err, "binding is a read")
			refused(t, kv.Purge(ctx, exec), fmt.Sprintf("a %s purging a key of %s", r, bucket))
			// $KV itself: the server refuses the publish.
			m := nats.NewMsg("$KV." + bucket + "." + exec)
			m.Header.Set(jetstream.MsgRollup, "all")
			_, err = h.direct.PublishMsg(ctx2(t), m)
			require.Error(t, err)
			require.ErrorIs(t, h.nc.LastError(), nats.ErrPermissionViolation)
		}
	}
	// Even the engine cannot roll the buckets up: the streams refuse it.
	m := nats.NewMsg("$KV." + events.ClaimsBucket + "." + exec)
	m.Header.Set(jetstream.MsgRollup, "all")
	engineJS, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	_, err = engineJS.PublishMsg(ctx, m)
	require.Error(t, err, "the claims stream allows no roll-up")

	got, err := engine.Claims().Inspect(ctx, exec)
	require.NoError(t, err, "the claim is still there")
	require.Equal(t, lease.Revision, got.Revision)
	require.Equal(t, "w1", got.WorkerID)
	back, err := engine.Capacity().Get(ctx, report.Provider)
	require.NoError(t, err, "the capacity report is still there")
	require.Equal(t, report.Provider, back.Provider)

	// The roles' own writes still work.
	worker := connectAs(t, e, path, events.RoleWorker)
	_, err = worker.Claims().Claim(ctx, eventstest.NewExecutionID(), "w2", time.Minute)
	require.NoError(t, err, "a worker claims")
	require.NoError(t, worker.Capacity().Put(ctx, eventstest.SampleCapacityReport(policy.Provider("claude"), time.Now().UTC())), "a worker puts capacity")
	reader := connectAs(t, e, path, events.RoleReader)
	list, err := reader.Capacity().List(ctx)
	require.NoError(t, err, "a reader lists the capacity reports")
	require.Len(t, list, 2)
}

// subscribeRefused requires the server to refuse nc's subscription to
// subject, and the subscription to receive nothing.
func subscribeRefused(t *testing.T, nc *nats.Conn, subject string) *nats.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(subject)
	require.NoError(t, err, "the client sends it; the server refuses it")
	require.Eventually(t, func() bool {
		_ = nc.Flush()
		err := nc.LastError()
		return err != nil && errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `Subscription to "`+subject+`"`)
	}, 10*time.Second, 50*time.Millisecond, "the server refuses the subscription to %s", subject)
	return sub
}

// TestAttackSharedInboxes (issue 25, class 5): every connection to the
// embedded server has its own reply subjects. Another connection of the
// same role, with the role's real secret, cannot subscribe to them, with
// its own nkey, without one, or with the victim's public key (it cannot
// sign for it); the victim's requests are still answered, to it alone.
func TestAttackSharedInboxes(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	ctx := ctx30(t)
	for _, r := range []events.Role{events.RoleReader, events.RoleWorker, events.RoleParent} {
		victim := connectHostile(t, e, path, r)
		inbox := victim.nc.Opts.InboxPrefix
		require.True(t, strings.HasPrefix(inbox, events.InboxPrefix(r)+"_"), "a connection's own inbox prefix: %s", inbox)

		attacker := connectHostile(t, e, path, r)
		require.NotEqual(t, inbox, attacker.nc.Opts.InboxPrefix)
		spy := subscribeRefused(t, attacker.nc, inbox+".>")

		// Without an nkey: the role's shared inbox prefix only.
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var file struct{ Secrets map[string]string }
		require.NoError(t, json.Unmarshal(raw, &file))
		bare, err := nats.Connect(e.ClientURL(), nats.UserInfo("switchyard-"+string(r), file.Secrets[string(r)]),
			nats.CustomInboxPrefix(inbox), nats.MaxReconnects(0))
		require.NoError(t, err, "a connection without an nkey is the role's, with its shared inbox")
		t.Cleanup(bare.Close)
		bareSpy := subscribeRefused(t, bare, inbox+".>")

		// With the victim's public key but its own signature: refused.
		kp, err := nkeys.CreateUser()
		require.NoError(t, err)
		pub := strings.TrimPrefix(inbox, events.InboxPrefix(r)+"_")
		_, err = nats.Connect(e.ClientURL(), nats.UserInfo("switchyard-"+string(r), file.Secrets[string(r)]),
			nats.Nkey(pub, kp.Sign), nats.CustomInboxPrefix(inbox), nats.MaxReconnects(0))
		require.ErrorContains(t, err, "Authorization Violation", "another connection's nkey without its seed")

		// The victim's requests are answered to it, and to no one else.
		_, err = victim.js.Stream(ctx, events.EventsStream)
		require.NoError(t, err, "the victim's request is answered")
		for _, s := range []*nats.Subscription{spy, bareSpy} {
			n, _, err := s.Pending()
			if err == nil {
				require.Zero(t, n, "a reply reached another connection")
			}
		}
	}
}

// TestAttackReportFlood (issue 25, class 3): a worker flooding one run
// with reports is refused past the run's burst and rate; another run's
// reports still pass.
func TestAttackReportFlood(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	w := connectAs(t, e, path, events.RoleWorker)
	ctx := ctx30(t)
	run := eventstest.NewRunID()
	start := time.Now()
	accepted, refusedN := 0, 0
	for range 1000 {
		_, err := w.Queue().PublishReport(ctx, eventstest.SampleReport(events.ReportClaimed, run, 0, eventstest.NewExecutionID(), "w1"))
		if err != nil {
			require.True(t, events.IsPermissionDenied(err), "a refusal, not %v", err)
			refusedN++
			continue
		}
		accepted++
	}
	elapsed := time.Since(start).Seconds()
	require.NotZero(t, refusedN, "a flood is refused")
	require.LessOrEqual(t, float64(accepted), 200+50*elapsed+1, "at most the burst and the rate pass")
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	last, err := engine.Queue().LastReportSeq(ctx, run)
	require.NoError(t, err)
	require.NotZero(t, last)
	_, err = w.Queue().PublishReport(ctx, eventstest.SampleReport(events.ReportClaimed, eventstest.NewRunID(), 0, eventstest.NewExecutionID(), "w1"))
	require.NoError(t, err, "another run's report passes")
}

// TestAttackClaimTakeover (issue 25, class 4): another worker, with the
// worker role's real secret, cannot renew, release or abandon a claim a
// live worker holds; the claim stays as it was. Once the holder stops
// renewing for longer than the lease's TTL (a crashed worker), another
// worker abandons it, as workers do with stale leases.
func TestAttackClaimTakeover(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	ctx := ctx30(t)
	holder := connectAs(t, e, path, events.RoleWorker)
	thief := connectAs(t, e, path, events.RoleWorker)
	exec := eventstest.NewExecutionID()
	const ttl = 2 * time.Second
	lease, err := holder.Claims().Claim(ctx, exec, "w-holder", ttl)
	require.NoError(t, err)
	// Claiming it too (a job delivered to two workers) is told apart:
	// already claimed, which a worker drops, not a refusal it retries.
	_, err = thief.Claims().Claim(ctx2(t), exec, "w-thief", ttl)
	require.ErrorIs(t, err, events.ErrClaimed)

	_, err = thief.Claims().Abandon(ctx2(t), lease, "w-thief")
	require.True(t, events.IsPermissionDenied(err), "abandoning a live claim: %v", err)
	_, err = thief.Claims().Renew(ctx2(t), lease)
	require.True(t, events.IsPermissionDenied(err), "renewing another's claim: %v", err)
	_, err = thief.Claims().Release(ctx2(t), lease)
	require.True(t, events.IsPermissionDenied(err), "releasing another's claim: %v", err)
	got, err := holder.Claims().Inspect(ctx, exec)
	require.NoError(t, err)
	require.Equal(t, events.LeaseHeld, got.State)
	require.Equal(t, lease.Revision, got.Revision, "the claim is unchanged")

	renewed, err := holder.Claims().Renew(ctx, lease)
	require.NoError(t, err, "the holder renews its own claim")
	renewedAt := time.Now()

	// The holder stops renewing: after the TTL, the lease is stale.
	var took time.Duration
	require.Eventually(t, func() bool {
		cur, err := thief.Claims().Inspect(ctx, exec)
		if err != nil {
			return false
		}
		_, err = thief.Claims().Abandon(ctx, cur, "w-thief")
		took = time.Since(renewedAt)
		return err == nil
	}, 20*time.Second, 200*time.Millisecond, "a stale lease is abandoned by another worker")
	require.GreaterOrEqual(t, took, ttl, "not before its TTL passed")
	got, err = holder.Claims().Inspect(ctx, exec)
	require.NoError(t, err)
	require.Equal(t, events.LeaseAbandoned, got.State)
	require.Equal(t, "w-thief", got.AbandonedBy)
	require.Greater(t, got.Revision, renewed.Revision)
}

// TestRolesStillDoTheirJob: through the engine's proxy, a reader still
// makes every read its commands make, and a worker announces and
// withdraws its presence.
func TestRolesStillDoTheirJob(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	ctx := ctx30(t)
	run := eventstest.NewRunID()
	_, err := engine.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, time.Now().UTC()), 0)
	require.NoError(t, err)
	require.NoError(t, engine.SetProviderCaps(ctx, map[policy.Provider]int{"codex": 3}))
	worker := connectAs(t, e, path, events.RoleWorker)
	require.NoError(t, worker.Presence().Announce(ctx, events.WorkerPresence{WorkerID: "w1", Providers: []policy.Provider{"codex"}, Started: time.Now().UTC()}))
	_, err = worker.Queue().PublishReport(ctx, eventstest.SampleReport(events.ReportClaimed, run, 0, eventstest.NewExecutionID(), "w1"))
	require.NoError(t, err)

	r := connectAs(t, e, path, events.RoleReader)
	runs, err := r.Store().Runs(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{run}, runs)
	envs, err := r.Store().LoadRun(ctx, run)
	require.NoError(t, err)
	require.Len(t, envs, 1)
	// Its reads are batched direct gets through the proxy, not the
	// consumer read they fall back to.
	for _, c := range []*events.JetStream{r, worker} {
		envs, err = events.ReadDirect(ctx, c.Store(), events.RunEventsFilter(run))
		require.NoError(t, err)
		require.Len(t, envs, 1)
	}
	_, err = r.Store().Last(ctx, run, events.RunLane)
	require.NoError(t, err)
	_, _, err = r.Store().FinalRuns(ctx)
	require.NoError(t, err)
	live, err := r.Presence().Live(ctx)
	require.NoError(t, err)
	require.Len(t, live, 1)
	caps, err := r.ProviderCaps(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, caps)
	seq, err := r.Queue().LastReportSeq(ctx, run)
	require.NoError(t, err)
	require.NotZero(t, seq)
	ch, err := r.Queue().SubscribeReports(ctx, run, 0)
	require.NoError(t, err)
	select {
	case rd := <-ch:
		require.NoError(t, rd.Err)
		require.Equal(t, run, rd.Run)
		require.True(t, strings.HasPrefix(rd.Reporter, events.InboxPrefix(events.RoleWorker)+"_"), "the report names its worker connection: %q", rd.Reporter)
	case <-ctx.Done():
		t.Fatal("no report")
	}
	_, err = r.Claims().Inspect(ctx, eventstest.NewExecutionID())
	require.ErrorIs(t, err, events.ErrNotFound)

	require.NoError(t, worker.Presence().Withdraw(ctx, "w1"), "a worker withdraws its presence")
	live, err = r.Presence().Live(ctx)
	require.NoError(t, err)
	require.Empty(t, live)
}
