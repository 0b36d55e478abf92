package machines

import "slices"

// Transition is one row of the lane table: Event moves a lane from any of
// From to To.
type Transition struct {
	Event Event
	From  []State
	To    State
}

// table is the lane machine, the one place its edges are written down. The
// looplab/fsm instance behind Lane, the pure Step and Fold, the Mermaid
// diagram and the tests all derive from it.
//
// It is DESIGN.md's table with one deliberate narrowing: launch and continue
// leave only created and terminal, not inspecting or awaiting-operation.
// Those two states wait for the parent, and the seed lets a lane out only
// with the parent's answer recorded: "missing inspection keeps it in inspect
// and cannot advance", and a handoff continues only once "its matching
// parent operation completed". The answer is the verdict or operation-done
// event, which returns the lane to terminal where policy.Next reads it; a
// launch or continue straight from the waiting state would skip it. Cancel
// still leaves both.
var table = []Transition{
	{EventLaunch, []State{StateCreated, StateTerminal}, StateLaunching},
	{EventContinue, []State{StateCreated, StateTerminal}, StateLaunching},
	{EventClaim, []State{StateLaunching}, StateRunning},
	{EventFinish, []State{StateLaunching, StateRunning}, StateTerminal},
	{EventInspect, []State{StateTerminal}, StateInspecting},
	{EventVerdict, []State{StateInspecting}, StateTerminal},
	{EventRequestOperation, []State{StateTerminal}, StateAwaitingOperation},
	{EventOperationDone, []State{StateAwaitingOperation}, StateTerminal},
	{EventComplete, []State{StateCreated, StateTerminal}, StateComplete},
	{EventStop, []State{StateCreated, StateTerminal}, StateStopped},
	{EventCancel, nonFinal(), StateCancelled},
}

// edge keys the derived lookup.
type edge struct {
	from State
	ev   Event
}

// Lookups derived once from table.
var (
	edges   = map[edge]State{}
	byEvent = map[Event]Transition{}
)

func init() {
	for _, t := range table {
		byEvent[t.Event] = t
		for _, s := range t.From {
			edges[edge{s, t.Event}] = t.To
		}
	}
}

func nonFinal() []State {
	var out []State
	for _, s := range States {
		if !s.Final() {
			out = append(out, s)
		}
	}
	return out
}

// Transitions returns a copy of the lane table, one row per event in the
// order of Events.
func Transitions() []Transition {
	out := make([]Transition, len(table))
	for i, t := range table {
		out[i] = Transition{Event: t.Event, From: slices.Clone(t.From), To: t.To}
	}
	return out
}

// Step is the pure transition function: the state ev leads to from from,
// or a *TransitionError wrapping ErrFinal (from is final), ErrImpossible
// (the table has no such edge), ErrUnknownState or ErrUnknownEvent.
func Step(from State, ev Event) (State, error) {
	if to, ok := edges[edge{from, ev}]; ok {
		return to, nil
	}
	return from, transitionError(from, ev)
}

// transitionError explains why the table has no edge for ev from from.
func transitionError(from State, ev Event) *TransitionError {
	t, known := byEvent[ev]
	e := &TransitionError{From: from, Event: ev, To: t.To, Allowed: slices.Clone(t.From)}
	switch {
	case !known:
		e.Err = ErrUnknownEvent
	case !from.Valid():
		e.Err = ErrUnknownState
	case from.Final():
		e.Err = ErrFinal
	default:
		e.Err = ErrImpossible
	}
	return e
}
