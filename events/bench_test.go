package events_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// The two append benchmarks run in the same process against the same kind
// of server so their ratio (persisted transitions per raw publish) can be
// reported: BenchmarkAppend is the engine's write path (validate, encode,
// expected-last-subject-sequence, message id) and BenchmarkRawPublish a
// plain synchronous publish of the same bytes. Compare the same fsync
// sub-benchmark:
//
//	go test ./events -run '^$' -bench 'Append|RawPublish' -benchmem

var benchFsync = []events.FsyncPolicy{events.FsyncAlways, events.FsyncInterval}

const benchLanes = 16

func BenchmarkAppend(b *testing.B) {
	for _, fsync := range benchFsync {
		b.Run("fsync="+string(fsync), func(b *testing.B) {
			s := eventstest.Open(b, eventstest.StartServer(b, eventstest.WithFsync(fsync)), events.JetStreamConfig{}).Store()
			ctx := context.Background()
			run := eventstest.NewRunID()
			payload := eventstest.SamplePayload(events.TypeClaim)
			var last [benchLanes]uint64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lane := i % benchLanes
				env := events.NewEnvelope(run, lane, eventstest.T0.Add(time.Duration(i)), payload)
				seq, err := s.Append(ctx, env, last[lane])
				if err != nil {
					b.Fatal(err)
				}
				last[lane] = seq
			}
		})
	}
}

func BenchmarkRawPublish(b *testing.B) {
	for _, fsync := range benchFsync {
		b.Run("fsync="+string(fsync), func(b *testing.B) {
			e := eventstest.StartServer(b, eventstest.WithFsync(fsync))
			eventstest.Open(b, e, events.JetStreamConfig{})
			js, err := jetstream.New(e.Conn())
			require.NoError(b, err)
			ctx := context.Background()
			run := eventstest.NewRunID()
			data, err := events.Encode(eventstest.SampleEnvelope(events.TypeClaim, run, 0, eventstest.T0))
			require.NoError(b, err)
			subjects := make([]string, benchLanes)
			for i := range subjects {
				subjects[i] = events.EventSubject(run, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := js.Publish(ctx, subjects[i%benchLanes], data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadLane reads one lane's 20-event history, as the engine does
// after a conflict.
func BenchmarkLoadLane(b *testing.B) {
	s := eventstest.Open(b, eventstest.StartServer(b, eventstest.WithFsync(events.FsyncInterval)), events.JetStreamConfig{}).Store()
	ctx := context.Background()
	run := eventstest.NewRunID()
	var last uint64
	for i := range 20 {
		seq, err := s.Append(ctx, eventstest.SampleEnvelope(events.TypeClaim, run, 0, eventstest.T0.Add(time.Duration(i))), last)
		require.NoError(b, err)
		last = seq
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := s.Load(ctx, run, 0)
		if err != nil || len(evs) != 20 {
			b.Fatal(len(evs), err)
		}
	}
}

// BenchmarkCapacityGet is the eligibility gate's read of a provider's
// current report from the SY_CAPACITY bucket (strict decode included), next
// to BenchmarkLoadLane's read of a lane's log: what the gate adds to every
// launch when a report is current.
//
//	go test ./events -run '^$' -bench 'CapacityGet|LoadLane' -benchmem
func BenchmarkCapacityGet(b *testing.B) {
	capa := eventstest.Open(b, eventstest.StartServer(b), events.JetStreamConfig{}).Capacity()
	ctx := context.Background()
	require.NoError(b, capa.Put(ctx, eventstest.SampleExcludedReport()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := capa.Get(ctx, "codex"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPIProxy compares a JetStream API request (stream info of the
// events stream) made by a role's connection through the engine's API
// proxy with the same request made straight at $JS.API by an engine
// connection, both over TCP to the same authenticating server. The proxy
// handles requests one at a time (one subscription), so the parallel
// sub-benchmarks, 8 connections at once, show what that serialization
// costs:
//
//	go test ./events -run '^$' -bench APIProxy -benchtime 2000x
func BenchmarkAPIProxy(b *testing.B) {
	creds, err := events.NewCredentials()
	require.NoError(b, err)
	dir := b.TempDir()
	require.NoError(b, os.Chmod(dir, 0o700))
	path := filepath.Join(dir, "serve.auth")
	require.NoError(b, events.WriteCredentials(path, creds))
	e := eventstest.StartServer(b, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	eventstest.Open(b, e, events.JetStreamConfig{})
	conn := func(r events.Role) jetstream.JetStream {
		nc, err := events.Connect([]string{e.ClientURL()}, events.FileClientOptions(path, r)...)
		require.NoError(b, err)
		b.Cleanup(nc.Close)
		if r == events.RoleEngine {
			js, err := jetstream.New(nc)
			require.NoError(b, err)
			return js
		}
		js, err := jetstream.NewWithAPIPrefix(nc, events.APIProxyPrefix+nc.Opts.InboxPrefix)
		require.NoError(b, err)
		return js
	}
	for _, c := range []struct {
		name string
		role events.Role
	}{{"direct", events.RoleEngine}, {"proxied", events.RoleReader}} {
		b.Run(c.name, func(b *testing.B) {
			js := conn(c.role)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := js.Stream(ctx, events.EventsStream); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"-parallel8", func(b *testing.B) {
			pool := make(chan jetstream.JetStream, 8)
			for range 8 {
				pool <- conn(c.role)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				js := <-pool
				defer func() { pool <- js }()
				ctx := context.Background()
				for pb.Next() {
					if _, err := js.Stream(ctx, events.EventsStream); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAPIProxyClaim is BenchmarkAPIProxy for a claim (a key-value
// create), which the proxy checks against the claim's current writer
// with a request of its own before forwarding it: the proxy's slowest
// common request, and the one its one-at-a-time handling delays most.
func BenchmarkAPIProxyClaim(b *testing.B) {
	creds, err := events.NewCredentials()
	require.NoError(b, err)
	dir := b.TempDir()
	require.NoError(b, os.Chmod(dir, 0o700))
	path := filepath.Join(dir, "serve.auth")
	require.NoError(b, events.WriteCredentials(path, creds))
	e := eventstest.StartServer(b, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	eventstest.Open(b, e, events.JetStreamConfig{})
	claims := func(r events.Role) events.Claims {
		nc, err := events.Connect([]string{e.ClientURL()}, events.FileClientOptions(path, r)...)
		require.NoError(b, err)
		b.Cleanup(nc.Close)
		js, err := events.OpenJetStream(context.Background(), nc, events.JetStreamConfig{})
		require.NoError(b, err)
		return js.Claims()
	}
	for _, c := range []struct {
		name string
		role events.Role
	}{{"direct", events.RoleEngine}, {"proxied", events.RoleWorker}} {
		b.Run(c.name, func(b *testing.B) {
			cl := claims(c.role)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cl.Claim(ctx, eventstest.NewExecutionID(), "w1", time.Minute); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"-parallel8", func(b *testing.B) {
			pool := make(chan events.Claims, 8)
			for range 8 {
				pool <- claims(c.role)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cl := <-pool
				defer func() { pool <- cl }()
				ctx := context.Background()
				for pb.Next() {
					if _, err := cl.Claim(ctx, eventstest.NewExecutionID(), "w1", time.Minute); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
