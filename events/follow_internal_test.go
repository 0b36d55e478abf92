package events

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFollowForwardsUntilNextFails: items arrive in order, and when next
// fails the reader is stopped before the channel closes.
func TestFollowForwardsUntilNextFails(t *testing.T) {
	t.Parallel()
	var stopped atomic.Bool
	n := 0
	ch := follow(t.Context(), func(context.Context) (int, error) {
		if n == 3 {
			return 0, errors.New("consumer gone")
		}
		n++
		return n, nil
	}, func() { stopped.Store(true) })
	var got []int
	for v := range ch {
		got = append(got, v)
	}
	require.Equal(t, []int{1, 2, 3}, got)
	require.True(t, stopped.Load(), "stop runs before the channel closes")
}

// TestFollowEndsWithCtx: a watch whose reader stopped reading ends when
// ctx does, even with a full channel and a next that never fails.
func TestFollowEndsWithCtx(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	var stopped atomic.Bool
	ch := follow(ctx, func(context.Context) (int, error) { return 7, nil }, func() { stopped.Store(true) })
	require.Equal(t, 7, <-ch)
	cancel()
	deadline := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-ch:
		case <-deadline:
			t.Fatal("the channel did not close after ctx ended")
		}
	}
	require.True(t, stopped.Load())
}

// TestMemFollower: entries already logged and entries appended later
// arrive in log order, skipped entries are left out, and an entry item
// refuses ends the watch.
func TestMemFollower(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	log, changed := []int{1, 2, 3}, make(chan struct{})
	appendLog := func(v int) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, v)
		close(changed)
		changed = make(chan struct{})
	}
	next := memFollower(&mu, &log, &changed, func(v int) (int, bool, error) {
		if v < 0 {
			return 0, false, errors.New("does not decode")
		}
		return v * 10, v%2 == 1, nil
	})
	ch := follow(t.Context(), next, nil)
	recv := func() (int, bool) {
		select {
		case v, ok := <-ch:
			return v, ok
		case <-time.After(10 * time.Second):
			t.Fatal("no item within 10s")
			return 0, false
		}
	}
	for _, want := range []int{10, 30} {
		v, ok := recv()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
	appendLog(4)
	appendLog(5)
	v, ok := recv()
	require.True(t, ok)
	require.Equal(t, 50, v, "4 is skipped, 5 arrives after the wait")
	appendLog(-1)
	appendLog(7)
	_, ok = recv()
	require.False(t, ok, "an entry that fails ends the watch; 7 is not sent")
}
