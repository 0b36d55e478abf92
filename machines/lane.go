package machines

import (
	"context"
	"errors"
	"fmt"

	"github.com/looplab/fsm"
)

// fsmEvents is the lane table in looplab/fsm's terms, built once. Its
// strings never leave this package: callers see State and Event.
var fsmEvents = func() fsm.Events {
	out := make(fsm.Events, 0, len(table))
	for _, t := range table {
		src := make([]string, len(t.From))
		for i, s := range t.From {
			src[i] = string(s)
		}
		out = append(out, fsm.EventDesc{Name: string(t.Event), Src: src, Dst: string(t.To)})
	}
	return out
}()

// newFSM builds the lane machine in state s, with no callbacks: a
// transition only changes the state, so nothing in it can do I/O.
func newFSM(s State) *fsm.FSM { return fsm.NewFSM(string(s), fsmEvents, nil) }

// Lane is one lane's state machine on looplab/fsm. It holds only the state:
// the engine persists each event before applying it, and rebuilds a lane
// after a restart with Restore (from a saved state) or Fold (from its log).
// A Lane is safe for concurrent use, though the engine has one writer per
// lane. The zero value is not usable; call NewLane.
type Lane struct {
	f *fsm.FSM
}

// NewLane returns a lane in StateCreated.
func NewLane() *Lane { return &Lane{f: newFSM(StateCreated)} }

// Restore puts the lane in state s without running a transition (fsm's
// SetState), for rehydration from a saved or folded state. An s outside
// States is refused with a *TransitionError wrapping ErrUnknownState and
// leaves the lane unchanged.
func (l *Lane) Restore(s State) error {
	if !s.Valid() {
		return &TransitionError{From: s, Err: ErrUnknownState}
	}
	l.f.SetState(string(s))
	return nil
}

// State returns the lane's current state.
func (l *Lane) State() State { return State(l.f.Current()) }

// Can reports whether ev is allowed from the lane's current state.
func (l *Lane) Can(ev Event) bool { return l.f.Can(string(ev)) }

// Apply moves the lane by ev. An event the table does not allow from the
// current state returns a *TransitionError (errors.Is ErrFinal for a final
// lane, ErrImpossible otherwise, ErrUnknownEvent for an event outside
// Events) and leaves the lane unchanged. ctx is checked once, before the
// transition: a done ctx returns its error and leaves the lane unchanged; a
// started transition always completes, since it does nothing but set the
// state.
func (l *Lane) Apply(ctx context.Context, ev Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apply %s: %w", ev, err)
	}
	// looplab/fsm v1.0.3 leaves the machine stuck "in transition" when the
	// context is cancelled mid-event; nothing here can block, so the
	// transition runs detached from cancellation.
	err := l.f.Event(context.WithoutCancel(ctx), string(ev))
	if err == nil {
		return nil
	}
	var invalid fsm.InvalidEventError
	var unknown fsm.UnknownEventError
	switch {
	case errors.As(err, &invalid):
		return transitionError(State(invalid.State), ev)
	case errors.As(err, &unknown):
		return transitionError(l.State(), ev)
	}
	return fmt.Errorf("apply %s in state %s: %w", ev, l.State(), err)
}
