package events_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestOpenJetStreamStreams pins the stream settings DESIGN.md relies on.
func TestOpenJetStreamStreams(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	eventstest.Open(t, e, events.JetStreamConfig{})
	eventstest.Open(t, e, events.JetStreamConfig{}) // reopening is idempotent.
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	ctx := context.Background()
	info := func(name string) jetstream.StreamConfig {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		return s.CachedInfo().Config
	}
	ev := info(events.EventsStream)
	require.Equal(t, jetstream.LimitsPolicy, ev.Retention)
	require.Equal(t, jetstream.FileStorage, ev.Storage)
	require.Zero(t, ev.MaxAge, "events are kept forever")
	require.True(t, ev.AllowDirect)
	require.True(t, ev.DenyDelete)
	require.Equal(t, events.DefaultDuplicateWindow, ev.Duplicates)
	require.Equal(t, jetstream.WorkQueuePolicy, info(events.JobsStream).Retention)
	require.Equal(t, jetstream.LimitsPolicy, info(events.ReportsStream).Retention)
	require.EqualValues(t, 1, info("KV_"+events.ClaimsBucket).MaxMsgsPerSubject)
	capacity := info("KV_" + events.CapacityBucket)
	require.EqualValues(t, 1, capacity.MaxMsgsPerSubject, "history 1: only each provider's current report")
	require.Equal(t, jetstream.FileStorage, capacity.Storage)
	require.Zero(t, capacity.MaxAge, "a report stays until replaced; staleness is judged by its acquisition time")
	require.True(t, capacity.DenyDelete)
	require.Equal(t, []string{"$KV." + events.CapacityBucket + ".>"}, capacity.Subjects)
}

// TestOpenJetStreamFailsFast refuses an incompatible existing stream at
// once instead of retrying until SetupTimeout.
func TestOpenJetStreamFailsFast(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: events.JobsStream, Subjects: []string{"sy.job.>"}, Retention: jetstream.LimitsPolicy})
	require.NoError(t, err)
	start := time.Now()
	_, err = events.OpenJetStream(ctx, e.Conn(), events.JetStreamConfig{SetupTimeout: 2 * time.Minute})
	require.Error(t, err)
	require.ErrorContains(t, err, events.JobsStream)
	require.Less(t, time.Since(start), time.Minute, "retried until SetupTimeout instead of failing at once")
}

// TestWatchRunLevel pins what the engine's watch for new runs receives:
// the run-level events of every run after the given sequence, in stream
// order, and never a lane event (the server filters them out, so they are
// not delivered and decoded a second time).
func TestWatchRunLevel(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	s := eventstest.Open(t, e, events.JetStreamConfig{}).Store()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a, b := eventstest.NewRunID(), eventstest.NewRunID()
	appendOne := func(env events.Envelope, expected uint64) uint64 {
		t.Helper()
		seq, err := s.Append(ctx, env, expected)
		require.NoError(t, err)
		return seq
	}
	aCreated := appendOne(eventstest.SampleEnvelope(events.TypeRunCreated, a, events.RunLane, eventstest.T0), 0)
	aLaunch := appendOne(eventstest.SampleEnvelope(events.TypeLaunch, a, 0, eventstest.T0.Add(1)), 0)

	ch, err := s.WatchRunLevel(ctx, 0)
	require.NoError(t, err)
	next := func() events.Envelope {
		t.Helper()
		select {
		case env, ok := <-ch:
			require.True(t, ok, "the watch ended early")
			return env
		case <-ctx.Done():
			t.Fatal("no event within the deadline")
			return events.Envelope{}
		}
	}
	got := next()
	require.Equal(t, aCreated, got.Seq)
	require.Equal(t, events.TypeRunCreated, got.Type)

	appendOne(eventstest.SampleEnvelope(events.TypeClaim, a, 0, eventstest.T0.Add(2)), aLaunch)
	bCreated := appendOne(eventstest.SampleEnvelope(events.TypeRunCreated, b, events.RunLane, eventstest.T0), 0)
	got = next()
	require.Equal(t, bCreated, got.Seq, "the lane events in between are not delivered")
	require.Equal(t, b, got.Run)
	require.Equal(t, events.RunLane, got.Lane)

	after, err := s.WatchRunLevel(ctx, aCreated)
	require.NoError(t, err)
	select {
	case env := <-after:
		require.Equal(t, bCreated, env.Seq, "after skips what the caller has")
	case <-ctx.Done():
		t.Fatal("no event within the deadline")
	}
	cancel()
	for range ch {
	}
}

// TestJetStreamLoadWithoutConsumer: on a stream of one replica, a log is
// read with batched direct gets, never a consumer: a log of one event (a
// run just created, which its driver loads first) and a longer one read
// exactly as before (each event with its sequence, nothing of another
// run's, in order), also when the log takes several batches; and a stored
// event that does not decode is refused.
func TestJetStreamLoadWithoutConsumer(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	s := j.Store()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, other := eventstest.NewRunID(), eventstest.NewRunID()
	_, err := s.Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, other, events.RunLane, eventstest.T0), 0)
	require.NoError(t, err)
	created := eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, eventstest.T0)
	created.Seq, err = s.Append(ctx, created, 0)
	require.NoError(t, err)
	_, err = s.Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, eventstest.NewRunID(), events.RunLane, eventstest.T0), 0)
	require.NoError(t, err)

	// The server announces every consumer it creates on the stream.
	advisories := make(chan string, 64)
	sub, err := e.Conn().Subscribe("$JS.EVENT.ADVISORY.CONSUMER.CREATED."+events.EventsStream+".>", func(m *nats.Msg) {
		advisories <- m.Subject
	})
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, e.Conn().Flush())

	got, err := s.LoadRun(ctx, run)
	require.NoError(t, err)
	require.Equal(t, []events.Envelope{created}, got)
	lane, err := s.Load(ctx, run, events.RunLane)
	require.NoError(t, err)
	require.Equal(t, []events.Envelope{created}, lane)

	want := []events.Envelope{created}
	for i := range 5 {
		launch := eventstest.SampleEnvelope(events.TypeLaunch, run, i, eventstest.T0.Add(time.Duration(i+1)))
		launch.Seq, err = s.Append(ctx, launch, 0)
		require.NoError(t, err)
		want = append(want, launch)
		_, err = s.Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, eventstest.NewRunID(), events.RunLane, eventstest.T0), 0)
		require.NoError(t, err)
	}
	got, err = s.LoadRun(ctx, run)
	require.NoError(t, err)
	require.Equal(t, want, got)
	for _, batch := range []int{1, 2, 5, 6} {
		events.SetDirectBatch(j, batch)
		got, err = s.LoadRun(ctx, run)
		require.NoError(t, err)
		require.Equal(t, want, got, "batches of %d", batch)
	}
	events.SetDirectBatch(j, 0)
	got, err = s.LoadRun(ctx, eventstest.NewRunID())
	require.NoError(t, err)
	require.Empty(t, got)

	// A consumer of our own, created after the reads, is announced after
	// any they made: it must be the first.
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	_, err = js.CreateConsumer(ctx, events.EventsStream, jetstream.ConsumerConfig{Name: "marker", InactiveThreshold: time.Minute})
	require.NoError(t, err)
	select {
	case subj := <-advisories:
		require.True(t, strings.HasSuffix(subj, ".marker"), "a read created consumer %s", subj)
	case <-ctx.Done():
		t.Fatal("no advisory for the marker consumer")
	}

	// One stored message that is not an event.
	bad := eventstest.NewRunID()
	_, err = js.Publish(ctx, events.EventSubject(bad, events.RunLane), []byte(`{"not":"an event"}`))
	require.NoError(t, err)
	_, err = s.LoadRun(ctx, bad)
	require.ErrorIs(t, err, events.ErrInvalid)
}

// TestWatchReportMarks: the watch the engine's catch-up of final runs uses
// streams every run's reports after the given sequence as their sequence
// and run (from the subject), in stream order, a report that does not
// decode included, and each mark's Delivery is the report WatchReports
// delivers.
func TestWatchReportMarks(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	q := eventstest.Open(t, e, events.JetStreamConfig{}).Queue()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a, b := eventstest.NewRunID(), eventstest.NewRunID()
	publish := func(run string) uint64 {
		t.Helper()
		seq, err := q.PublishReport(ctx, eventstest.SampleReport(events.ReportClaimed, run, 0, eventstest.NewExecutionID(), "w1"))
		require.NoError(t, err)
		return seq
	}
	s1 := publish(a)
	s2 := publish(b)
	js, err := jetstream.New(e.Conn())
	require.NoError(t, err)
	ack, err := js.Publish(ctx, events.ReportSubject(a, 1), []byte(`{"not":"a report"}`))
	require.NoError(t, err)
	s4 := publish(b)

	ch, err := q.WatchReportMarks(ctx, s1)
	require.NoError(t, err)
	var got []events.ReportMark
	for len(got) < 3 {
		select {
		case m, ok := <-ch:
			require.True(t, ok, "the watch ended early")
			got = append(got, m)
		case <-ctx.Done():
			t.Fatal("no mark within the deadline")
		}
	}
	type mark struct {
		seq uint64
		run string
	}
	var marks []mark
	for _, m := range got {
		marks = append(marks, mark{m.Seq, m.Run})
	}
	require.Equal(t, []mark{{s2, b}, {ack.Sequence, a}, {s4, b}}, marks)
	// Each decodes on demand to what WatchReports delivers.
	want, err := q.WatchReports(ctx, s1)
	require.NoError(t, err)
	for _, m := range got {
		require.Equal(t, <-want, m.Delivery())
	}
	bad := got[1].Delivery()
	require.ErrorIs(t, bad.Err, events.ErrInvalid)
	require.Equal(t, `{"not":"a report"}`, string(bad.Raw))
	require.Equal(t, events.ReportClaimed, got[2].Delivery().Report.Kind)
	cancel()
	for range ch {
	}
}
