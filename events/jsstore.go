package events

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamStore is the Store on the events stream (EventsStream). Appends
// are synchronous publishes with Nats-Expected-Last-Subject-Sequence and a
// deterministic Nats-Msg-Id; reads use batched direct gets on a stream of
// one replica, else short-lived ephemeral consumers that are deleted
// afterwards.
type JetStreamStore struct {
	j *JetStream
}

var _ Store = (*JetStreamStore)(nil)

// readInactive is the server-side inactivity threshold of read consumers, a
// backstop for the explicit delete.
const readInactive = 30 * time.Second

// Append implements Store.
//
// On a single server JetStream checks the expected sequence before the
// message id, so a retry of a stored append is rejected as 10071 rather than
// acknowledged as a duplicate; Append then looks at the event stored right
// after expectedLastSeq and returns its sequence if it carries the same
// message id. On replicated streams a 10164 (a write in flight on the
// subject, possibly this append's own earlier attempt) is retried briefly.
func (s *JetStreamStore) Append(ctx context.Context, env Envelope, expected uint64) (uint64, error) {
	env.Seq = 0
	data, err := Encode(env)
	if err != nil {
		return 0, err
	}
	subj := env.Subject()
	id := appendMsgID(env, expected, data)
	// Waits of up to 20, 40, 60 and 60 ms between the five attempts.
	retry := Backoff{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	for attempt := 1; ; attempt++ {
		ack, err := s.j.publish(ctx, subj, data, jetstream.WithMsgID(id),
			jetstream.WithExpectLastSequencePerSubject(expected), jetstream.WithExpectStream(EventsStream))
		if err == nil {
			return ack.Sequence, nil
		}
		code, actual, ok := wrongLastSeq(err)
		if !ok {
			return 0, translate("append "+subj, err)
		}
		if seq, mine := s.storedAfter(ctx, subj, expected, id); mine {
			return seq, nil
		}
		if code == jetstream.JSErrCodeStreamWrongLastSequenceConstant && attempt < 5 {
			if !retry.Wait(ctx) {
				return 0, fmt.Errorf("append %s: %w", subj, ctx.Err())
			}
			continue
		}
		return 0, &ConflictError{Subject: subj, Expected: expected, Actual: actual}
	}
}

// storedAfter reports whether the first event on subj after sequence
// expected carries message id id, and its sequence.
func (s *JetStreamStore) storedAfter(ctx context.Context, subj string, expected uint64, id string) (uint64, bool) {
	m, err := s.j.events.GetMsg(ctx, expected+1, jetstream.WithGetMsgSubject(subj))
	if err != nil || m.Subject != subj || m.Header.Get(jetstream.MsgIDHeader) != id {
		return 0, false
	}
	return m.Sequence, true
}

// Last implements Store, with a direct get.
func (s *JetStreamStore) Last(ctx context.Context, run string, lane int) (Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return Envelope{}, err
	}
	subj := EventSubject(run, lane)
	m, err := s.j.events.GetLastMsgForSubject(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Envelope{}, fmt.Errorf("last %s: %w", subj, ErrNotFound)
	}
	if err != nil {
		return Envelope{}, translate("last "+subj, err)
	}
	return decodeStored(m.Subject, m.Sequence, m.Data)
}

// Load implements Store.
func (s *JetStreamStore) Load(ctx context.Context, run string, lane int) ([]Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return nil, err
	}
	return s.read(ctx, EventSubject(run, lane))
}

// LoadRun implements Store.
func (s *JetStreamStore) LoadRun(ctx context.Context, run string) ([]Envelope, error) {
	if err := ValidateRunID(run); err != nil {
		return nil, err
	}
	return s.read(ctx, RunEventsFilter(run))
}

// read returns every event matching filter up to the newest one at the
// time of the call. That newest sequence is read first from the stream
// leader, then an ephemeral consumer streams events until it has delivered
// it, and is deleted. Counting the consumer's pending messages instead is
// not enough on a replicated stream: the consumer may live on a follower
// that has not yet applied the last acknowledged append.
//
// A read consumer can go silent on a cluster (its pulls lost while a node
// is slow or a leadership moves: nats.go reports missed heartbeats). The
// read then starts a new consumer right after the last event it already
// holds, with a backoff, until ctx ends; any other error ends the read.
//
// A log of one event (a run just created, which its driver loads first)
// needs no consumer: when the first event matching filter is the newest
// one, read from the same leader, the log is that event.
//
// A stream of one replica allows direct gets, and there batched direct
// gets read the log without a consumer (readDirect); a server that
// answers them in another form gets the consumer read.
func (s *JetStreamStore) read(ctx context.Context, filter string) ([]Envelope, error) {
	if s.j.events.CachedInfo().Config.AllowDirect {
		out, err := s.readDirect(ctx, filter)
		if !errors.Is(err, errNoDirectBatch) {
			return out, err
		}
	}
	last, err := s.j.events.GetLastMsgForSubject(ctx, filter)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return []Envelope{}, nil
	}
	if err != nil {
		return nil, translate("read "+filter, err)
	}
	if first, err := s.j.events.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(filter)); err == nil && first.Sequence == last.Sequence {
		env, err := decodeStored(last.Subject, last.Sequence, last.Data)
		if err != nil {
			return nil, err
		}
		return []Envelope{env}, nil
	}
	var out []Envelope
	bo := Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
	for {
		var after uint64
		if len(out) > 0 {
			after = out[len(out)-1].Seq
		}
		out, err = s.readRange(ctx, filter, after, last.Sequence, out)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, jetstream.ErrNoHeartbeat) || !bo.Wait(ctx) {
			return nil, err
		}
	}
}

// readRange appends to out the events matching filter after sequence after
// up to target, through one ephemeral consumer. Its errors are final
// (translated), except that a silent consumer's still matches
// jetstream.ErrNoHeartbeat.
func (s *JetStreamStore) readRange(ctx context.Context, filter string, after, target uint64, out []Envelope) ([]Envelope, error) {
	cfg := jetstream.ConsumerConfig{
		Name: s.j.consumerName(), FilterSubject: filter, DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1,
		InactiveThreshold: readInactive,
	}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := s.j.events.CreateConsumer(ctx, cfg)
	if err != nil {
		return out, translate("read "+filter, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.j.events.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	pending := int(cons.CachedInfo().NumPending)
	// Heartbeats every 2 s: a silent consumer is noticed after about 4 s,
	// not the default 30 s.
	it, err := cons.Messages(jetstream.PullMaxMessages(min(max(pending, 64), 10000)),
		jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return out, translate("read "+filter, err)
	}
	defer it.Stop()
	if out == nil {
		out = make([]Envelope, 0, pending)
	}
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return out, translate("read "+filter, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return out, translate("read "+filter, err)
		}
		env, err := decodeStored(m.Subject(), md.Sequence.Stream, m.Data())
		if err != nil {
			return out, err
		}
		out = append(out, env)
		if md.Sequence.Stream >= target {
			return out, nil
		}
	}
}

// Runs implements Store, from the stream's per-subject counts of
// sy.ev.*.run.
func (s *JetStreamStore) Runs(ctx context.Context) ([]string, error) {
	info, err := s.j.events.Info(ctx, jetstream.WithSubjectFilter(EventSubjectPrefix+"*."+runToken))
	if err != nil {
		return nil, translate("runs", err)
	}
	runs := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		run := strings.TrimSuffix(strings.TrimPrefix(subj, EventSubjectPrefix), "."+runToken)
		runs = append(runs, run)
	}
	sort.Strings(runs)
	return runs, nil
}

// Watch implements Store with an ordered consumer.
func (s *JetStreamStore) Watch(ctx context.Context, run string, after uint64) (<-chan Envelope, error) {
	filter := EventSubjectPrefix + ">"
	if run != "" {
		if err := ValidateRunID(run); err != nil {
			return nil, err
		}
		filter = RunEventsFilter(run)
	}
	return s.watch(ctx, after, filter)
}

// WatchRunLevel is Watch of every run (sequences after after), restricted
// to the run-level events (subjects sy.ev.*.run: run-created, run-final,
// run-level cancels and audits). The server filters: a lane event is
// neither delivered nor decoded. The engine watches this to find new runs,
// so that the one to four events a lane records are not read a second
// time by a watcher that only looks for run-created.
func (s *JetStreamStore) WatchRunLevel(ctx context.Context, after uint64) (<-chan Envelope, error) {
	return s.watch(ctx, after, EventSubjectPrefix+"*."+runToken)
}

// WatchLane is Watch of one run restricted to one lane's events and the
// run-level ones (subjects sy.ev.<run>.<lane> and sy.ev.<run>.run). The
// server filters: another lane's event is neither delivered nor decoded.
// A worker watches this for the cancels of the lane it runs, instead of
// decoding every event of a wide panel once per lane.
func (s *JetStreamStore) WatchLane(ctx context.Context, run string, lane int, after uint64) (<-chan Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return nil, err
	}
	if lane == RunLane {
		return s.watch(ctx, after, EventSubject(run, RunLane))
	}
	return s.watch(ctx, after, EventSubject(run, lane), EventSubject(run, RunLane))
}

// watch follows filters after sequence after with an ordered consumer.
func (s *JetStreamStore) watch(ctx context.Context, after uint64, filters ...string) (<-chan Envelope, error) {
	r, err := newOrderedReader(ctx, s.j, s.j.events, EventsStream, after, filters...)
	if err != nil {
		return nil, translate("watch "+strings.Join(filters, " "), err)
	}
	return followOrdered(ctx, r, func(m jetstream.Msg, md *jetstream.MsgMetadata) (Envelope, error) {
		return decodeStored(m.Subject(), md.Sequence.Stream, m.Data())
	}), nil
}
