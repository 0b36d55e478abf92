package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// CancelNotices follows, live, what is published on run's lane and on the
// run's own events (EventSubject(run, lane) and EventSubject(run,
// RunLane)): the returned channel receives a value (coalesced: it holds at
// most one) for every publication that is a cancel event or that does not
// decode as an event. It is a plain subscription, so no consumer is
// created and nothing is read from the stream.
//
// A notice is not evidence: a publication the stream refused (a lost race
// on the expected sequence) is noticed too, so the reader confirms by
// reading the logs. Nor is every cancel noticed: one stored before the
// subscription was in place, or while the connection was down, is not.
// So a reader reads the logs once after CancelNotices returns (the
// subscription is then in place on the server: it is flushed) and again
// now and then. A connection that may not subscribe to the events'
// subjects (a deployment that grants workers only the proxied reads)
// gets an error matching ErrPermissionDenied: from the server's refusal
// the first time, at once after that.
//
// The subscription ends when ctx is done (the channel is not closed). The
// flush waits at most flushTimeout when ctx has no earlier deadline.
func (s *JetStreamStore) CancelNotices(ctx context.Context, run string, lane int) (<-chan struct{}, error) {
	if err := validateLoad(run, lane); err != nil {
		return nil, err
	}
	if s.j.noNotices.Load() {
		return nil, fmt.Errorf("follow the events of run %s: %w (the server refused this connection a subscription to them)", run, ErrPermissionDenied)
	}
	subjects := []string{EventSubject(run, RunLane)}
	if lane != RunLane {
		subjects = append(subjects, EventSubject(run, lane))
	}
	ch := make(chan struct{}, 1)
	notice := func(m *nats.Msg) {
		if env, err := Decode(m.Data); err == nil && env.Type != TypeCancel {
			return
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	var subs []*nats.Subscription
	unsubscribe := func() {
		for _, sub := range subs {
			sub.Unsubscribe()
		}
	}
	for _, subj := range subjects {
		sub, err := s.j.nc.Subscribe(subj, notice)
		if err != nil {
			unsubscribe()
			return nil, translate("follow "+subj, err)
		}
		subs = append(subs, sub)
	}
	fctx, stop := context.WithTimeout(ctx, flushTimeout)
	err := s.j.nc.FlushWithContext(fctx)
	stop()
	if err != nil {
		unsubscribe()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, translate("follow "+subjects[0], err)
	}
	// The server answers a refused subscription with an error before the
	// flush's answer, and the client keeps it as the connection's last.
	if last := s.j.nc.LastError(); errors.Is(last, nats.ErrPermissionViolation) {
		for _, subj := range subjects {
			if strings.Contains(last.Error(), `"`+subj+`"`) {
				unsubscribe()
				s.j.noNotices.Store(true)
				return nil, fmt.Errorf("follow %s: %w: %v", subj, ErrPermissionDenied, last)
			}
		}
	}
	go func() {
		<-ctx.Done()
		// A callback may still run after this; its send never blocks,
		// and the channel stays open so it cannot panic.
		unsubscribe()
	}()
	return ch, nil
}

// flushTimeout bounds CancelNotices' round trip to the server.
const flushTimeout = 10 * time.Second
