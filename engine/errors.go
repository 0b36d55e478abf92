package engine

import (
	"errors"
	"fmt"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// Sentinels. Errors the Engine returns that a caller may act on wrap one of
// these (policy errors from Submit are returned as policy returns them);
// match with errors.Is.
var (
	// ErrUnknownRun: the store has no run-created event for the run id.
	ErrUnknownRun = errors.New("engine: unknown run")
	// ErrRunExists: Submit was given a run id that already has events.
	ErrRunExists = errors.New("engine: run already exists")
	// ErrUnknownLane: the run has no such lane.
	ErrUnknownLane = errors.New("engine: unknown lane")
	// ErrNotWaiting: the lane does not wait for this input (a verdict for a
	// lane that is not inspecting, an operation result for a lane that
	// awaits none). The error is a *LaneError.
	ErrNotWaiting = errors.New("engine: lane is not waiting for this input")
	// ErrFinal: the lane or run is already final. The error is a
	// *LaneError.
	ErrFinal = errors.New("engine: lane is final")
	// ErrUnknownExecution: NativeReport names no native execution that a
	// non-final run is waiting for.
	ErrUnknownExecution = errors.New("engine: unknown native execution")
	// ErrInvalidRequest: a RunRequest or control argument that is neither
	// a policy error nor a usable value (missing prompt, relative cwd, a
	// writer run outside a git work tree, a bad verdict state, …).
	ErrInvalidRequest = errors.New("engine: invalid request")
	// ErrInconsistentLog: the run's log does not fold (machines refused an
	// envelope); the engine does not drive such a run.
	ErrInconsistentLog = errors.New("engine: inconsistent run log")
	// ErrNotFinal: Prune was asked for a run that is not final; a live
	// run's files are never removed.
	ErrNotFinal = errors.New("engine: run is not final")
)

// LaneError is a control input refused because of where the lane stands.
type LaneError struct {
	Run   string
	Lane  int            // events.RunLane for the run as a whole.
	State machines.State // the lane's state; "" for a run.
	Want  string         // what the input needs, e.g. "inspecting".
	Err   error          // ErrNotWaiting or ErrFinal.
}

// Error names the run, the lane, its state and what the input needed.
func (e *LaneError) Error() string {
	if e.Lane == events.RunLane {
		return fmt.Sprintf("run %s: %v", e.Run, e.Err)
	}
	return fmt.Sprintf("run %s lane %d is %s, not %s: %v", e.Run, e.Lane, e.State, e.Want, e.Err)
}

// Unwrap returns ErrNotWaiting or ErrFinal.
func (e *LaneError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}
