package events

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// orderedIdle is how long an ordered reader waits for a message before it
// checks whether the stream holds one it should have delivered.
const orderedIdle = 5 * time.Second

// orderedReader follows the messages of one stream matching its filters, in
// order, through an ordered consumer (Watch, SubscribeReports), and
// restarts that consumer when it has gone silent.
//
// Silence is real: after a cluster node is killed (SIGKILL of the events
// stream's leader, see events/faults_cluster_test.go), an ordered
// consumer's iterator was seen to wait for minutes, either without an error
// or inside its own consumer re-creation, while newer matching messages
// were stored, so the engine stopped applying reports and the run never
// finished. The iterator is therefore read by a pump goroutine, and when
// nothing arrives for orderedIdle the reader asks the stream for the newest
// matching message; if it is past the last one delivered, the old consumer
// is abandoned (stopped in the background) and a new ordered consumer
// starts right after the last delivered message. An idle but healthy
// reader costs one last-message lookup per orderedIdle.
type orderedReader struct {
	j       *JetStream
	stream  jetstream.Stream
	name    string
	filters []string
	cur     *orderedPump
	last    uint64 // stream sequence of the last message delivered (or the start)
}

// orderedPump creates one iterator and reads it until it fails or the
// pump is abandoned.
type orderedPump struct {
	out  chan orderedResult
	done chan struct{}
	// nextCtx bounds the pump's Next calls; abandon cancels it, so a Next
	// that is only waiting returns and the pump stops its own iterator.
	nextCtx    context.Context
	cancelNext context.CancelFunc
	exited     chan struct{} // closed when the pump goroutine returns

	mu        sync.Mutex
	it        jetstream.MessagesContext // nil until created
	abandoned bool
	stopped   bool // the pump stopped it itself
}

// pumpStopGrace is how long abandon lets the pump stop its own iterator
// before it stops it from outside (see abandon): longer than a leader
// election takes (writes paused 4.5–7.7 s in the cluster chaos test), so
// a re-creation retrying across an election succeeds, returns into the
// pump and is stopped there. pumpStopWait is how long a stop waits for
// that before it returns and leaves the rest to the background.
const (
	pumpStopGrace = 20 * time.Second
	pumpStopWait  = 2 * time.Second
)

type orderedResult struct {
	m   jetstream.Msg
	err error
}

// startPump runs create, then reads its iterator.
func startPump(create func() (jetstream.MessagesContext, error)) *orderedPump {
	p := &orderedPump{out: make(chan orderedResult), done: make(chan struct{}), exited: make(chan struct{})}
	p.nextCtx, p.cancelNext = context.WithCancel(context.Background())
	go func() {
		defer close(p.exited)
		it, err := create()
		if err != nil {
			p.send(orderedResult{err: err})
			return
		}
		p.mu.Lock()
		if p.abandoned {
			p.stopped = true
			p.mu.Unlock()
			it.Stop()
			return
		}
		p.it = it
		p.mu.Unlock()
		for {
			m, err := it.Next(jetstream.NextContext(p.nextCtx))
			if p.nextCtx.Err() != nil {
				// Abandoned: Next has returned, so no consumer reset is
				// under way and stopping here cannot race one.
				p.mu.Lock()
				p.stopped = true
				p.mu.Unlock()
				it.Stop()
				return
			}
			if !p.send(orderedResult{m, err}) || err != nil {
				return
			}
		}
	}()
	return p
}

func (p *orderedPump) send(r orderedResult) bool {
	select {
	case p.out <- r:
		return true
	case <-p.done:
		return false
	}
}

// abandon stops the pump and its iterator, in the background unless wait.
//
// The iterator is stopped by the pump itself once its Next returns,
// which cancelling the Next's context makes it do at once unless Next is
// re-creating the ordered consumer (after a missed heartbeat or a gap).
// Stopping it from another goroutine during that re-creation can leak the
// new consumer's pull iterator in nats.go v1.55.0: the re-creation
// releases the consumer's lock before it installs the new iterator, and
// a Stop that was waiting for the lock stops only the old one. So the
// iterator is stopped from outside only once the pump has returned
// without stopping it (it ended on an error, or while handing over a
// message), or when the pump is still inside Next after pumpStopGrace: a
// re-creation is then retrying (the stream has had no leader for that
// long), and only Stop ends its retries. With wait, abandon returns once
// the pump has exited, or after pumpStopWait, leaving the rest of the
// grace to the background.
func (p *orderedPump) abandon(wait bool) {
	p.mu.Lock()
	p.abandoned = true
	p.mu.Unlock()
	p.cancelNext()
	close(p.done)
	start := time.Now()
	stop := func() {
		p.mu.Lock()
		it, stopped := p.it, p.stopped
		p.mu.Unlock()
		if it != nil && !stopped {
			it.Stop()
		}
	}
	finish := func() {
		t := time.NewTimer(pumpStopGrace - time.Since(start))
		defer t.Stop()
		select {
		case <-p.exited: // no Next runs any more: stopping is safe
		case <-t.C: // a re-creation is retrying: only Stop ends it
		}
		stop()
	}
	if wait {
		t := time.NewTimer(pumpStopWait)
		defer t.Stop()
		select {
		case <-p.exited:
			stop()
			return
		case <-t.C:
		}
	}
	go finish()
}

// newOrderedReader starts reading stream (name) for filter after sequence
// after.
func newOrderedReader(ctx context.Context, j *JetStream, stream jetstream.Stream, name string, after uint64, filters ...string) (*orderedReader, error) {
	it, err := orderedMessages(ctx, j, name, filters, after)
	if err != nil {
		return nil, err
	}
	r := &orderedReader{j: j, stream: stream, name: name, filters: filters, last: after}
	r.cur = startPump(func() (jetstream.MessagesContext, error) { return it, nil })
	return r, nil
}

// next returns the next message and its metadata. It fails when ctx is done
// or the consumer fails (or cannot be restarted); the caller then stops.
func (r *orderedReader) next(ctx context.Context) (jetstream.Msg, *jetstream.MsgMetadata, error) {
	idle := time.NewTimer(orderedIdle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case res := <-r.cur.out:
			if res.err != nil {
				return nil, nil, res.err
			}
			md, err := res.m.Metadata()
			if err != nil {
				return nil, nil, err
			}
			if md.Sequence.Stream <= r.last {
				continue // delivered before a restart
			}
			r.last = md.Sequence.Stream
			return res.m, md, nil
		case <-idle.C:
			idle.Reset(orderedIdle)
			if !r.stalled(ctx) {
				continue
			}
			r.cur.abandon(false)
			after := r.last
			r.cur = startPump(func() (jetstream.MessagesContext, error) {
				return orderedMessages(ctx, r.j, r.name, r.filters, after)
			})
		}
	}
}

// stalled reports whether the stream holds a message matching one of the
// filters past the last one delivered. A lookup that fails (no leader
// yet) says no: the next idle period looks again.
func (r *orderedReader) stalled(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, r.j.cfg.AttemptTimeout)
	defer cancel()
	for _, f := range r.filters {
		if m, err := r.stream.GetLastMsgForSubject(cctx, f); err == nil && m.Sequence > r.last {
			return true
		}
	}
	return false
}

// stop abandons the current consumer.
func (r *orderedReader) stop() { r.cur.abandon(true) }

// orderedMessages starts an ordered consumer on stream for filter,
// delivering sequences after after.
func orderedMessages(ctx context.Context, j *JetStream, stream string, filters []string, after uint64) (jetstream.MessagesContext, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filters, InactiveThreshold: 5 * time.Second, NamePrefix: j.consumerName()}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := j.js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	// Short pulls and heartbeats: a pull lost while a clustered consumer is
	// being placed is noticed (and the consumer recreated) after about 2s,
	// instead of after the default 10s of missed 5s heartbeats.
	return cons.Messages(jetstream.PullExpiry(5*time.Second), jetstream.PullHeartbeat(time.Second))
}
