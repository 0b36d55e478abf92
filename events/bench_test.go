package events_test

import (
	"context"
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
