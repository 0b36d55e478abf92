package events

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// directBatch is how many events one batched direct get asks for, unless
// JetStream.directBatch says otherwise (tests).
const directBatch = 512

// errNoDirectBatch says the server answered a batched direct get in
// another form (a server without batches, or a refusal): the caller reads
// through a consumer instead.
var errNoDirectBatch = errors.New("no batched direct get")

// apiSubject is the JetStream API subject of request (without "$JS.API.")
// on j's connection: through the engine's API proxy for a role's.
func (j *JetStream) apiSubject(request string) string {
	if j.prefix == "" {
		return "$JS.API." + request
	}
	return j.prefix + "." + request
}

// readDirect reads every event matching filter with batched direct gets
// of the events stream, which a stream of one replica allows: one request
// and its answers for a log of up to directBatch events, where a consumer
// costs a create, a pull and a delete. The answers of one request come
// from one read of the stream, in order; each batch's end says how many
// matching events remain, so the read ends when none do, and holds every
// event matching filter up to at least the newest one at the time of the
// call, with no gap. errNoDirectBatch when the server answers in another
// form; other errors are final.
func (s *JetStreamStore) readDirect(ctx context.Context, filter string) ([]Envelope, error) {
	nc := s.j.nc
	inbox := nc.NewInbox()
	// A callback into a small channel: SubscribeSync's own channel holds
	// 64k messages, half a megabyte made for every read. The
	// subscription queues what the channel cannot take yet.
	msgs, done := make(chan *nats.Msg, 64), make(chan struct{})
	sub, err := nc.Subscribe(inbox, func(m *nats.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	})
	if err != nil {
		return nil, translate("read "+filter, err)
	}
	defer func() {
		close(done)
		_ = sub.Unsubscribe()
	}()
	subject := s.j.apiSubject("DIRECT.GET." + EventsStream)
	batch := cmp.Or(s.j.directBatch, directBatch)
	out := []Envelope{}
	var from uint64
	for {
		req := `{"seq":` + strconv.FormatUint(from, 10) + `,"next_by_subj":` + strconv.Quote(filter) + `,"batch":` + strconv.Itoa(batch) + `}`
		if err := nc.PublishRequest(subject, inbox, []byte(req)); err != nil {
			return nil, translate("read "+filter, err)
		}
		more, err := s.readBatch(ctx, msgs, filter, &from, &out)
		if err != nil || !more {
			return out, err
		}
	}
}

// readBatch reads one batch's answers into out, moving from past each
// event, and reports whether matching events remain after it.
func (s *JetStreamStore) readBatch(ctx context.Context, msgs <-chan *nats.Msg, filter string, from *uint64, out *[]Envelope) (bool, error) {
	timer := time.NewTimer(s.j.cfg.AttemptTimeout)
	defer timer.Stop()
	got := 0
	for {
		var m *nats.Msg
		select {
		case m = <-msgs:
		case <-timer.C:
			return false, errNoDirectBatch // unanswered: read another way
		case <-ctx.Done():
			return false, translate("read "+filter, ctx.Err())
		}
		switch status := m.Header.Get("Status"); {
		case status == "204": // the batch's end
			pending, err := strconv.ParseUint(m.Header.Get(jsNumPending), 10, 64)
			if err != nil || got == 0 {
				return false, errNoDirectBatch
			}
			return pending > 0, nil
		case status == "404" && got == 0:
			return false, nil // nothing (more) matches
		case status != "" || m.Header.Get(jsNumPending) == "":
			// An error, or a single get's answer: not a batch.
			return false, errNoDirectBatch
		}
		seq, err := strconv.ParseUint(m.Header.Get(jsSequence), 10, 64)
		subj := m.Header.Get(jsSubject)
		if err != nil || seq < *from || subj == "" {
			return false, errNoDirectBatch
		}
		env, err := decodeStored(subj, seq, m.Data)
		if err != nil {
			return false, err
		}
		*out = append(*out, env)
		*from = seq + 1
		got++
	}
}

// The headers of a direct get's answer.
const (
	jsSequence   = "Nats-Sequence"
	jsSubject    = "Nats-Subject"
	jsNumPending = "Nats-Num-Pending"
)
