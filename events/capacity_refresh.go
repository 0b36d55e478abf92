package events

import (
	"context"
	"slices"
	"sync"

	"github.com/switchyard-dev/switchyard/policy"
)

// refreshLoop hands refresh requests to a subscriber's fn on one goroutine,
// in arrival order. A request for a provider that is already waiting for
// fn is merged into it: one acquisition answers every engine that asked
// meanwhile, and a burst of requests never queues a burst of acquisitions.
type refreshLoop struct {
	fn      func(policy.Provider)
	mu      sync.Mutex
	queue   []policy.Provider // waiting for fn, each at most once
	wake    chan struct{}     // capacity 1: the queue is not empty
	done    chan struct{}     // closed by stop
	exited  chan struct{}     // closed when the goroutine returns
	stopped sync.Once
	onStop  func() // releases the subscriptions; called once
}

// validateRefreshProviders checks a subscription's providers and returns
// them without duplicates.
func validateRefreshProviders(providers []policy.Provider) ([]policy.Provider, error) {
	if len(providers) == 0 {
		return nil, invalidf("a refresh subscription needs at least one provider")
	}
	var out []policy.Provider
	for _, p := range providers {
		if !capacityProvider(p) {
			return nil, invalidf("refresh subscription: provider %q is not a known provider", p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// newRefreshLoop returns a loop for fn that queues offers but calls fn
// only once started.
func newRefreshLoop(fn func(policy.Provider)) *refreshLoop {
	return &refreshLoop{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
}

// start runs fn for offered providers until ctx ends or stop is called;
// onStop (not nil) runs once when the loop stops either way.
func (l *refreshLoop) start(ctx context.Context, onStop func()) {
	l.onStop = onStop
	go l.run(ctx)
}

// offer queues a request for p unless one is already waiting. It never
// blocks, so a NATS callback may call it.
func (l *refreshLoop) offer(p policy.Provider) {
	l.mu.Lock()
	if !slices.Contains(l.queue, p) {
		l.queue = append(l.queue, p)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *refreshLoop) run(ctx context.Context) {
	defer close(l.exited)
	defer l.release()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.done:
			return
		case <-l.wake:
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.done:
				return
			default:
			}
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			p := l.queue[0]
			l.queue = l.queue[1:]
			l.mu.Unlock()
			l.fn(p)
		}
	}
}

func (l *refreshLoop) release() {
	l.stopped.Do(func() {
		close(l.done)
		l.onStop()
	})
}

// stop ends the loop and waits for a running fn to return; after it
// returns fn is never called again. fn must not call stop itself (it may
// cancel the subscription's context instead).
func (l *refreshLoop) stop() {
	l.release()
	<-l.exited
}
