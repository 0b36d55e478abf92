package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Performance is measured here, never asserted (see docs/PERFORMANCE.md,
// "Engine and event log"). The machines are shared and noisy, so the
// number to read is a ratio measured in the same run:
//
//	go test -run '^$' -bench BenchmarkEngine -benchtime 10x -count 5 ./engine
//	go test -run '^$' -bench BenchmarkReplay -count 5 ./engine

// benchEngineLanes is the lanes of one BenchmarkEngineTransitions run: 64
// transitions an iteration.
const benchEngineLanes = 16

// benchRawRounds is how many times each iteration publishes its run's lane
// events raw: a raw batch is much shorter than the run, and a longer window
// averages out more of a shared machine's noise.
const benchRawRounds = 4

// BenchmarkEngineTransitions measures the engine driving lanes on a real
// embedded JetStream, under each fsync policy. One iteration is one run of
// benchEngineLanes single-attempt lanes, from Submit to run-final, every
// job answered at once by a fake worker with claimed and finished reports
// and a valid receipt; a transition is one appended lane event (launch,
// claim, finish, complete: four a lane). The time includes everything the
// engine does for them: run-created and run-final, preparing each
// execution's files, publishing each job, reading each report and receipt,
// folding, deciding, and the fake worker's own publishes on the same
// server.
//
// In the same iteration, on the same server, the run's lane events are
// published again raw, benchRawRounds times, and timed apart: rawBatch,
// the same sizes, synchronous, with the expected last subject sequence
// header, on a stream configured as the events stream (benchRawStream).
// Metrics:
//
//	transitions/s  lane events the engine appended per second of run
//	raw-publish/s  raw publishes per second
//	engine/raw     transitions/s ÷ raw-publish/s, the number to compare
//	B/event        mean size of a lane event
//
// ns/op is the engine's run alone (the raw batch runs with the timer off).
func BenchmarkEngineTransitions(b *testing.B) {
	for _, fsync := range []events.FsyncPolicy{events.FsyncAlways, events.FsyncInterval} {
		b.Run("fsync="+string(fsync), func(b *testing.B) {
			d := newBenchDeployment(b, fsync)
			d.openRawStream()
			ctx := context.Background()
			var engineTime, rawTime time.Duration
			var transitions, raws, size int
			for b.Loop() {
				start := time.Now()
				run := d.driveRun(benchEngineLanes)
				engineTime += time.Since(start)

				b.StopTimer()
				envs := d.load(run)
				if err := checkBenchRun(envs, benchEngineLanes); err != nil {
					b.Fatal(err)
				}
				for range benchRawRounds {
					rb := newRawBatch(b, envs)
					start = time.Now()
					if err := rb.publish(ctx, d.js); err != nil {
						b.Fatal(err)
					}
					rawTime += time.Since(start)
					raws += len(rb.data)
					size += rb.bytes
				}
				transitions += len(laneEvents(envs))
				b.StartTimer()
			}
			engineRate := float64(transitions) / engineTime.Seconds()
			rawRate := float64(raws) / rawTime.Seconds()
			b.ReportMetric(engineRate, "transitions/s")
			b.ReportMetric(rawRate, "raw-publish/s")
			b.ReportMetric(engineRate/rawRate, "engine/raw")
			b.ReportMetric(float64(size)/float64(raws), "B/event")
		})
	}
}

// benchReplayLanes is the lanes of BenchmarkReplay's run.
const benchReplayLanes = 20

// BenchmarkReplay measures engine.Replay (load the run, fold it, recompute
// every decision and normalization) over one completed run of
// benchReplayLanes lanes (82 events), loaded from the JetStream store it
// was recorded on (fsync=interval), from a memory store holding the same
// log (no server round trips; decoding the stored bytes stays), and from
// the envelopes already decoded (store=decoded: what replay's own checks
// cost, the ceiling once loading is free). events/s is replayed envelopes
// per second.
func BenchmarkReplay(b *testing.B) {
	d := newBenchDeployment(b, events.FsyncInterval)
	run := d.driveRun(benchReplayLanes)
	envs := d.load(run)
	require.NoError(b, checkBenchRun(envs, benchReplayLanes))
	mem := events.NewMemoryStore()
	ctx := context.Background()
	last := map[int]uint64{}
	for _, e := range envs {
		seq, err := mem.Append(ctx, e, last[e.Lane])
		require.NoError(b, err)
		last[e.Lane] = seq
	}
	for _, tc := range []struct {
		name  string
		store events.Store
	}{{"store=jetstream", d.store}, {"store=memory", mem}, {"store=decoded", decodedStore{mem, envs}}} {
		b.Run(tc.name, func(b *testing.B) {
			replayed := 0
			for b.Loop() {
				res, err := engine.Replay(ctx, tc.store, run, policy.DefaultOptions())
				if err != nil || !res.Verified || res.Events != len(envs) {
					b.Fatalf("replay: %v; %d of %d events; %s", err, res.Events, len(envs), res.Text())
				}
				replayed += res.Events
			}
			b.ReportMetric(float64(replayed)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// decodedStore is a store whose LoadRun hands out envelopes decoded once
// beforehand, for BenchmarkReplay's store=decoded.
type decodedStore struct {
	events.Store
	envs []events.Envelope
}

func (s decodedStore) LoadRun(context.Context, string) ([]events.Envelope, error) {
	return slices.Clone(s.envs), nil
}
