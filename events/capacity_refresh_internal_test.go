package events

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestRefreshLoopMergesWaitingRequests: requests for a provider that
// arrive while one for it waits are merged into it (one acquisition
// answers them all), other providers keep their arrival order, and after
// stop returns fn is never called again.
func TestRefreshLoopMergesWaitingRequests(t *testing.T) {
	release := make(chan struct{})
	calls := make(chan policy.Provider, 16)
	l := newRefreshLoop(func(p policy.Provider) {
		calls <- p
		if p == policy.Claude {
			<-release
		}
	})
	stopped := make(chan struct{})
	l.start(context.Background(), func() { close(stopped) })

	l.offer(policy.Claude)
	require.Equal(t, policy.Claude, <-calls) // fn is busy with claude now
	for range 5 {
		l.offer(policy.Codex)
		l.offer(policy.Grok)
	}
	l.offer(policy.Claude)
	close(release)
	got := []policy.Provider{<-calls, <-calls, <-calls}
	require.Equal(t, []policy.Provider{policy.Codex, policy.Grok, policy.Claude}, got)
	select {
	case p := <-calls:
		t.Fatalf("an extra call for %s: waiting requests were not merged", p)
	case <-time.After(200 * time.Millisecond):
	}

	l.stop()
	<-stopped
	l.offer(policy.Codex)
	l.stop() // idempotent
	select {
	case p := <-calls:
		t.Fatalf("fn called for %s after stop", p)
	case <-time.After(100 * time.Millisecond):
	}
}
