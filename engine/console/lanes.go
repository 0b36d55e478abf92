package console

import (
	"sync"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
)

// laneStates follows every lane's state from the shared watch, so the
// lanes-by-state gauge costs nothing at scrape time: run-created adds its
// lanes as created, and each lane event steps its lane through the lane
// machine (an event the machine refuses leaves the state as it was; the
// engine's fold is the authority, this is a metric).
type laneStates struct {
	mu   sync.Mutex
	runs map[string][]machines.State
}

func newLaneStates() *laneStates { return &laneStates{runs: map[string][]machines.State{}} }

func (l *laneStates) observe(env events.Envelope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := env.Payload.(events.RunCreated); ok {
		states := make([]machines.State, len(c.Lanes))
		for i := range states {
			states[i] = machines.StateCreated
		}
		l.runs[env.Run] = states
		return
	}
	lanes := l.runs[env.Run]
	if env.Lane < 0 || env.Lane >= len(lanes) {
		return
	}
	ev, ok := machines.EventOf(env.Type)
	if !ok {
		return
	}
	if to, err := machines.Step(lanes[env.Lane], ev); err == nil {
		lanes[env.Lane] = to
	}
}

// counts returns the number of lanes in each state.
func (l *laneStates) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, lanes := range l.runs {
		for _, s := range lanes {
			out[string(s)]++
		}
	}
	return out
}
