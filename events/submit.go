package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Submission: a parent does not append to the events stream; it asks the
// engine, over request-reply on SubmitSubject, to record its run-created
// event. The engine checks it and appends it like any event of its own, so
// the engine stays the only writer of the log, and a parent's permissions
// need not include the events stream.

// ErrRunExists: the submitted run's id already has a different first event.
var ErrRunExists = errors.New("events: run already exists")

// ErrNoEngine: no engine answered a submission.
var ErrNoEngine = errors.New("events: no engine answers submissions")

// submitReply is the engine's answer to a submission.
type submitReply struct {
	// OK: the run-created event is in the log (now or already).
	OK bool `json:"ok"`
	// Code says why not: "exists", "invalid" or "failed".
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// submitAttempt bounds one request; a submission retries until its
// context ends while no engine answers (a serve restarting).
const submitAttempt = 10 * time.Second

// Submit asks the engine to record env, a run-created event, and waits for
// its answer. A retry after a lost answer is answered as a success when the
// log already holds the same event. ErrRunExists, ErrInvalid (the engine's
// reason in the message) and ErrNoEngine (when ctx ends with nobody
// answering) are the errors a caller acts on.
func (j *JetStream) Submit(ctx context.Context, env Envelope) error {
	if env.Type != TypeRunCreated || env.Lane != RunLane {
		return invalidf("submit: want a run-created event, got %s on lane %d", env.Type, env.Lane)
	}
	data, err := Encode(env)
	if err != nil {
		return err
	}
	retry := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for {
		actx, cancel := context.WithTimeout(ctx, submitAttempt)
		m, err := j.nc.RequestWithContext(actx, SubmitSubject, data)
		cancel()
		if err == nil {
			var r submitReply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return fmt.Errorf("submit run %s: the engine's answer is not readable: %v", env.Run, err)
			}
			switch {
			case r.OK:
				return nil
			case r.Code == "exists":
				return fmt.Errorf("submit run %s: %w", env.Run, ErrRunExists)
			case r.Code == "invalid":
				return fmt.Errorf("submit run %s: %w: %s", env.Run, ErrInvalid, strings.TrimPrefix(r.Error, ErrInvalid.Error()+": "))
			default:
				return fmt.Errorf("submit run %s: the engine could not record it: %s", env.Run, r.Error)
			}
		}
		if permissionDenied(j.nc, SubmitSubject) {
			return deniedError(SubmitSubject)
		}
		if ctx.Err() != nil {
			if errors.Is(err, nats.ErrNoResponders) {
				return fmt.Errorf("submit run %s: %w (%v)", env.Run, ErrNoEngine, ctx.Err())
			}
			return fmt.Errorf("submit run %s: %w (last error: %v)", env.Run, ctx.Err(), err)
		}
		if !errors.Is(err, nats.ErrNoResponders) && !transient(err) {
			return fmt.Errorf("submit run %s: %w", env.Run, err)
		}
		if !retry.Wait(ctx) {
			return fmt.Errorf("submit run %s: %w (%v)", env.Run, ErrNoEngine, ctx.Err())
		}
	}
}

// SubmitHandler records a submitted run-created event. It returns nil when
// the log holds it (now or already), ErrRunExists, or an ErrInvalid error
// whose message is given to the submitter.
type SubmitHandler func(ctx context.Context, env Envelope) error

// ServeSubmissions answers submissions with handle until ctx ends or the
// returned stop is called. Engines share the work (one queue group); each
// request is decoded strictly first, so handle sees only a valid
// run-created envelope.
func (j *JetStream) ServeSubmissions(ctx context.Context, handle SubmitHandler) (stop func(), err error) {
	sub, err := j.nc.QueueSubscribe(SubmitSubject, "sy-engine", func(m *nats.Msg) {
		reply := submitReply{OK: true}
		env, err := Decode(m.Data)
		if err == nil && (env.Type != TypeRunCreated || env.Lane != RunLane) {
			err = invalidf("a submission must be a run-created event, got %s on lane %d", env.Type, env.Lane)
		}
		if err == nil {
			hctx, cancel := context.WithTimeout(ctx, submitAttempt)
			err = handle(hctx, env)
			cancel()
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrRunExists):
			reply = submitReply{Code: "exists", Error: err.Error()}
		case errors.Is(err, ErrInvalid):
			reply = submitReply{Code: "invalid", Error: err.Error()}
		default:
			reply = submitReply{Code: "failed", Error: err.Error()}
		}
		data, _ := json.Marshal(reply)
		_ = m.Respond(data)
	})
	if err != nil {
		return nil, fmt.Errorf("serve submissions: %w", err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = sub.Unsubscribe()
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}
