package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestRestartKeepsAckedEvents appends events, shuts the embedded server
// down, restarts it on the same directory and finds every acknowledged
// event, in order, with appends continuing from the recorded sequences.
func TestRestartKeepsAckedEvents(t *testing.T) {
	t.Parallel()
	for _, fsync := range []events.FsyncPolicy{events.FsyncAlways, events.FsyncInterval} {
		t.Run(string(fsync), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dir := t.TempDir()
			e := eventstest.StartServer(t, eventstest.WithDataDir(dir), eventstest.WithFsync(fsync))
			s := eventstest.Open(t, e, events.JetStreamConfig{}).Store()
			run := eventstest.NewRunID()
			seq, err := s.Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, eventstest.T0), 0)
			require.NoError(t, err)
			want := []uint64{seq}
			last := map[int]uint64{}
			for i := range 40 {
				lane := i % 4
				typ := events.TypeLaunch
				if last[lane] != 0 {
					typ = events.TypeClaim
				}
				seq, err := s.Append(ctx, eventstest.SampleEnvelope(typ, run, lane, eventstest.T0.Add(time.Duration(i))), last[lane])
				require.NoError(t, err)
				last[lane] = seq
				want = append(want, seq)
			}
			before, err := s.LoadRun(ctx, run)
			require.NoError(t, err)
			e.Shutdown()

			e2 := eventstest.StartServer(t, eventstest.WithDataDir(dir), eventstest.WithFsync(fsync))
			s2 := eventstest.Open(t, e2, events.JetStreamConfig{}).Store()
			after, err := s2.LoadRun(ctx, run)
			require.NoError(t, err)
			require.Equal(t, before, after)
			got := make([]uint64, len(after))
			for i, env := range after {
				got[i] = env.Seq
			}
			require.Equal(t, want, got)
			runs, err := s2.Runs(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{run}, runs)
			_, err = s2.Append(ctx, eventstest.SampleEnvelope(events.TypeFinish, run, 0, eventstest.T0.Add(time.Hour)), last[0])
			require.NoError(t, err, "the lane's last sequence survived the restart")
		})
	}
}
