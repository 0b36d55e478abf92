package engine

// RunState is a run's state as `status` lists and filters it.
type RunState string

// Run states, in lifecycle order.
const (
	// RunRunning: some lane waits for the engine or a worker, none for the
	// parent.
	RunRunning RunState = "running"
	// RunWaitingForParent: a lane waits for the parent (a native attempt,
	// a verdict, an operation or a recovery).
	RunWaitingForParent RunState = "waiting-for-parent"
	// RunFinal: run-final is recorded.
	RunFinal RunState = "final"
	// RunCancelled: run-final is recorded and the run was cancelled.
	RunCancelled RunState = "cancelled"
)

// RunStates lists every RunState in lifecycle order.
var RunStates = []RunState{RunRunning, RunWaitingForParent, RunFinal, RunCancelled}

// State is r's RunState.
func (r RunStatus) State() RunState {
	switch {
	case r.Final && r.Cancelled:
		return RunCancelled
	case r.Final:
		return RunFinal
	}
	for _, l := range r.Lanes {
		switch l.WaitingFor {
		case WaitNative, WaitVerdict, WaitOperation, WaitRecovery:
			return RunWaitingForParent
		}
	}
	return RunRunning
}
