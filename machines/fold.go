package machines

// Fold applies evs in order to a lane in state from and returns the state it
// ends in. It is pure: no FSM instance, no callbacks, no I/O. The first
// event the table refuses stops the fold with a *FoldError carrying its
// index and *TransitionError; the returned state is then the one before it.
// Fold takes machine events; RebuildLane folds a lane's envelopes.
func Fold(from State, evs ...Event) (State, error) {
	s := from
	for i, ev := range evs {
		to, ok := edges[edge{s, ev}]
		if !ok {
			return s, &FoldError{Index: i, Err: transitionError(s, ev)}
		}
		s = to
	}
	return s, nil
}

// Rebuild folds a lane's whole event log from StateCreated.
func Rebuild(evs ...Event) (State, error) { return Fold(StateCreated, evs...) }
