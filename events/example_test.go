package events_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// ExampleStore shows the engine's write discipline on the event log: append
// with the sequence of the lane's last event, retry safely, lose a race
// with ErrConflict, and rebuild from Load. The in-memory store behaves as
// the JetStream one does (both pass package eventstest's conformance
// suite).
func ExampleStore() {
	ctx := context.Background()
	var store events.Store = events.NewMemoryStore()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const run, lane = "r1", 0

	// The lane has no events yet: its expected last sequence is 0.
	cancel := events.NewEnvelope(run, lane, at, events.Cancel{Reason: "no longer needed", By: "alice"})
	seq, err := store.Append(ctx, cancel, 0)
	fmt.Println("appended at", seq, err)

	// A retry of the same envelope at the same position (say, after a
	// timeout that hid the first answer) returns the original sequence.
	again, err := store.Append(ctx, cancel, 0)
	fmt.Println("retried:", again, err)

	// A different event at that position lost the race: reload and decide
	// again.
	other := events.NewEnvelope(run, lane, at, events.Cancel{Reason: "superseded", By: "bob"})
	_, err = store.Append(ctx, other, 0)
	var conflict *events.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println("conflict:", errors.Is(err, events.ErrConflict), "expected", conflict.Expected, "actual", conflict.Actual)
	}

	envs, err := store.Load(ctx, run, lane)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, env := range envs {
		c := env.Payload.(events.Cancel)
		fmt.Println(env.Seq, env.Subject(), env.Type, c.By, c.Reason)
	}

	// The next append expects the last sequence the lane has.
	last, err := store.Last(ctx, run, lane)
	if err != nil {
		fmt.Println(err)
		return
	}
	seq, err = store.Append(ctx, other, last.Seq)
	fmt.Println("appended at", seq, err)
	// Output:
	// appended at 1 <nil>
	// retried: 1 <nil>
	// conflict: true expected 0 actual 1
	// 1 sy.ev.r1.L0 cancel alice no longer needed
	// appended at 2 <nil>
}
