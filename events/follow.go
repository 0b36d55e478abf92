package events

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// watchBuffer is how many items a watch's channel holds before its
// goroutine waits for the reader.
const watchBuffer = 64

// follow runs the goroutine behind every watch (Store.Watch,
// Queue.SubscribeReports, Queue.WatchReports): it forwards each item next
// returns to the returned channel, in order, until next fails or ctx is
// done; then it calls stop (when not nil) and closes the channel. Items
// carry their sequence, so a reader whose channel closed early resumes by
// watching again after the last one it received.
func follow[T any](ctx context.Context, next func(context.Context) (T, error), stop func()) <-chan T {
	ch := make(chan T, watchBuffer)
	go func() {
		defer close(ch)
		if stop != nil {
			defer stop()
		}
		for {
			item, err := next(ctx)
			if err != nil {
				return
			}
			select {
			case ch <- item:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// followOrdered follows an ordered reader, converting each message with
// item; a message item refuses (a stored event that does not decode) ends
// the watch, like a failing reader. The reader is stopped when the watch
// ends.
func followOrdered[T any](ctx context.Context, r *orderedReader, item func(jetstream.Msg, *jetstream.MsgMetadata) (T, error)) <-chan T {
	return follow(ctx, func(ctx context.Context) (T, error) {
		m, md, err := r.next(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		return item(m, md)
	}, r.stop)
}

// memFollower is the next function of a watch on an in-memory log: it
// returns the items item converts from the log's entries, in log order,
// skipping the entries item does not keep and failing when item fails,
// and waits for *changed (closed and replaced, under mu, on every append)
// when it has read the whole log.
func memFollower[E, T any](mu *sync.Mutex, log *[]E, changed *chan struct{}, item func(E) (T, bool, error)) func(context.Context) (T, error) {
	var batch []E
	var wait chan struct{} // nil until the first batch is taken
	pos := 0
	return func(ctx context.Context) (T, error) {
		var zero T
		for {
			for len(batch) > 0 {
				e := batch[0]
				batch = batch[1:]
				v, keep, err := item(e)
				if err != nil {
					return zero, err
				}
				if keep {
					return v, nil
				}
			}
			if wait != nil {
				select {
				case <-wait:
				case <-ctx.Done():
					return zero, ctx.Err()
				}
			}
			mu.Lock()
			batch, wait = (*log)[pos:], *changed
			pos = len(*log)
			mu.Unlock()
		}
	}
}
