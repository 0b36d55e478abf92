package machines

import (
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
)

// Sentinels, matched with errors.Is; a *TransitionError wraps exactly one.
var (
	// ErrImpossible: the table has no edge for the event from the lane's
	// state, which is not final.
	ErrImpossible = errors.New("impossible transition")
	// ErrFinal: the lane is complete, stopped or cancelled; no event leaves
	// a final state.
	ErrFinal = errors.New("lane is final")
	// ErrUnknownState: the state is not one of States.
	ErrUnknownState = errors.New("unknown lane state")
	// ErrUnknownEvent: the event is not one of Events.
	ErrUnknownEvent = errors.New("unknown lane event")
	// ErrInconsistent: an envelope that the engine, the log's only writer,
	// cannot have recorded at that point: an event before run-created, a
	// lane the run does not have, a report for another execution, a second
	// verdict on one outcome, anything but audit after run-final.
	ErrInconsistent = errors.New("inconsistent run log")
)

// TransitionError is a lane event the machine refused. Its message names the
// current state, the event, the state the event leads to and the states it
// may leave from.
type TransitionError struct {
	From    State   // the lane's state when the event arrived.
	Event   Event   // the refused event.
	To      State   // where Event leads; "" for an unknown event.
	Allowed []State // the states Event may leave from; nil for an unknown event.
	Err     error   // ErrImpossible, ErrFinal, ErrUnknownState or ErrUnknownEvent.
}

func (e *TransitionError) Error() string {
	switch e.Err {
	case ErrUnknownEvent:
		return fmt.Sprintf("unknown lane event %q in state %s", e.Event, e.From)
	case ErrUnknownState:
		return fmt.Sprintf("unknown lane state %q for event %s (%s → %s)", e.From, e.Event, e.From, e.To)
	case ErrFinal:
		return fmt.Sprintf("impossible transition %s → %s on %s: the lane is final", e.From, e.To, e.Event)
	}
	return fmt.Sprintf("impossible transition %s → %s on %s: %s leaves only %s", e.From, e.To, e.Event, e.Event, joinStates(e.Allowed))
}

func (e *TransitionError) Unwrap() error { return e.Err }

// FoldError is the first event of a lane's log that the machine refused.
type FoldError struct {
	Index int    // position of the refused event in the folded slice.
	Seq   uint64 // its store sequence when folding envelopes; else 0.
	Err   error  // a *TransitionError, or ErrInconsistent for an envelope of another lane.
}

func (e *FoldError) Error() string {
	if e.Seq != 0 {
		return fmt.Sprintf("event %d (seq %d): %v", e.Index, e.Seq, e.Err)
	}
	return fmt.Sprintf("event %d: %v", e.Index, e.Err)
}

func (e *FoldError) Unwrap() error { return e.Err }

// LogError is the first envelope of a run's log that Run.Apply refused.
type LogError struct {
	Index int         // how many envelopes the run had applied before this one.
	Seq   uint64      // the envelope's store sequence (0 if unset).
	Type  events.Type // the envelope's type.
	Lane  int         // its lane, or events.RunLane.
	Err   error       // a *TransitionError, or an error wrapping ErrInconsistent.
}

func (e *LogError) Error() string {
	where := "run"
	if e.Lane != events.RunLane {
		where = fmt.Sprintf("lane %d", e.Lane)
	}
	return fmt.Sprintf("event %d (seq %d, %s on %s): %v", e.Index, e.Seq, e.Type, where, e.Err)
}

func (e *LogError) Unwrap() error { return e.Err }

// inconsistent builds an error wrapping ErrInconsistent.
func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
}

func joinStates(ss []State) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
