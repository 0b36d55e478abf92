package machines

// State is where a lane stands in its lifecycle. The set is closed: States
// lists every value, and a state outside it is rejected wherever one is
// accepted (Lane.Restore, Step, Fold).
type State string

// The lane states. Each line says which events enter and leave the state;
// the transition table in table.go is the authority.
const (
	// StateCreated is a lane as the run resolved it, before any attempt.
	// Entered when the run-created event lists the lane; left by launch
	// (continue), stop or complete from the first next decision, or cancel.
	StateCreated State = "created"
	// StateLaunching is an attempt whose job is published but not yet
	// claimed by a worker. Entered by launch or continue; left by claim,
	// by finish (a preflight failure or an attempt abandoned before its
	// claim), or by cancel.
	StateLaunching State = "launching"
	// StateRunning is an attempt a worker claimed; its process may have
	// started. Entered by claim; left by finish (the normalized receipt) or
	// cancel.
	StateRunning State = "running"
	// StateTerminal is a lane whose latest outcome, verdict or parent
	// operation is recorded and whose next decision is due. Entered by
	// finish, verdict or operation-done; left by launch, continue, inspect,
	// request-operation, complete, stop or cancel.
	StateTerminal State = "terminal"
	// StateInspecting is a started writer waiting for the parent's verdict.
	// Entered by inspect; left only by verdict (back to terminal, where the
	// next decision reads it) or cancel.
	StateInspecting State = "inspecting"
	// StateAwaitingOperation is a delivered handoff waiting for the parent
	// operation it asked for. Entered by request-operation; left only by
	// operation-done (back to terminal) or cancel.
	StateAwaitingOperation State = "awaiting-operation"
	// StateComplete is final: the lane delivered. Entered by complete;
	// never left.
	StateComplete State = "complete"
	// StateStopped is final: next stopped the lane for any reason but
	// completion, or the policy denied it. Entered by stop; never left.
	StateStopped State = "stopped"
	// StateCancelled is final: the parent cancelled the lane or its run.
	// Entered by cancel from any non-final state; never left.
	StateCancelled State = "cancelled"
)

// States lists every lane state in lifecycle order.
var States = []State{
	StateCreated, StateLaunching, StateRunning, StateTerminal, StateInspecting,
	StateAwaitingOperation, StateComplete, StateStopped, StateCancelled,
}

// Valid reports whether s is one of States.
func (s State) Valid() bool {
	switch s {
	case StateCreated, StateLaunching, StateRunning, StateTerminal, StateInspecting,
		StateAwaitingOperation, StateComplete, StateStopped, StateCancelled:
		return true
	}
	return false
}

// Final reports whether s is complete, stopped or cancelled: no event
// leaves a final state.
func (s State) Final() bool {
	switch s {
	case StateComplete, StateStopped, StateCancelled:
		return true
	}
	return false
}

// String returns the state's wire name.
func (s State) String() string { return string(s) }
