package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// TestBackoff: waits double from Min to Max, each jittered into [d/2, d],
// and Reset starts again at Min.
func TestBackoff(t *testing.T) {
	t.Parallel()
	b := events.Backoff{Min: 100 * time.Millisecond, Max: 800 * time.Millisecond}
	bounds := []time.Duration{100, 200, 400, 800, 800, 800}
	for round := range 2 {
		for i, hi := range bounds {
			hi *= time.Millisecond
			require.Equal(t, hi, b.Current(), "round %d try %d", round, i)
			d := b.Next()
			require.GreaterOrEqual(t, d, hi/2, "round %d try %d", round, i)
			require.LessOrEqual(t, d, hi, "round %d try %d", round, i)
		}
		b.Reset()
	}
	// Jitter spreads the waits: 200 draws of one bound are not all equal.
	seen := map[time.Duration]bool{}
	for range 200 {
		b.Reset()
		seen[b.Next()] = true
	}
	require.Greater(t, len(seen), 1, "the wait is jittered")
}

// TestSleep: Sleep reports a completed wait as true and a cancelled one as
// false, without waiting the duration out.
func TestSleep(t *testing.T) {
	t.Parallel()
	require.True(t, events.Sleep(context.Background(), time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	require.False(t, events.Sleep(ctx, time.Hour))
	require.Less(t, time.Since(start), time.Minute)
	b := events.Backoff{Min: time.Hour, Max: time.Hour}
	require.False(t, b.Wait(ctx))
}
