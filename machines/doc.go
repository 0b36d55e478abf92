// Package machines provides the lane state machine and the run aggregate,
// both rebuilt from events with no I/O in their callbacks.
//
// # Lane lifecycle
//
// A lane is one seat of a run: an ordered chain of at most three attempts.
// Its machine records where the lane stands; what it does next is always
// policy.Next's decision, which the engine persists as the event below
// before anything acts on it.
//
//	created ──launch/continue──▶ launching ──claim──▶ running
//	   │                          ▲     │                │
//	   │          launch/continue │     │ finish         │ finish
//	   │                          │     ▼                │
//	   │                          └── terminal ◀─────────┘
//	   │
//	   │   inspecting ◀──inspect─── terminal ──request-operation──▶ awaiting-operation
//	   │              ───verdict──▶          ◀───operation-done────
//	   │
//	   ├──complete──▶ complete ◀──complete── terminal
//	   └──stop──────▶ stopped  ◀──stop────── terminal
//
//	any non-final state ──cancel──▶ cancelled
//
// Read it as one machine: every "terminal" is the same state, drawn where
// its edges fit.
//
// In table form (Transitions returns it; testdata/lane.mmd is the Mermaid
// diagram looplab/fsm renders from it):
//
//	event               from                          to
//	launch, continue    created, terminal             launching
//	claim               launching                     running
//	finish              launching, running            terminal
//	inspect             terminal                      inspecting
//	verdict             inspecting                    terminal
//	request-operation   terminal                      awaiting-operation
//	operation-done      awaiting-operation            terminal
//	complete            created, terminal             complete
//	stop                created, terminal             stopped
//	cancel              any non-final state           cancelled
//
// complete, stopped and cancelled are final: every event from them fails
// with ErrFinal.
//
// A typical read-only lane whose primary hits usage exhaustion:
//
//	launch claim finish(usage-exhausted) launch claim finish(complete) complete
//
// A writer whose started attempt failed, inspected clear, then moved on to
// the next descriptor: ... finish inspect verdict(clear) launch ...; an
// unsafe verdict is followed by stop. A handoff: ... finish(needs-parent-
// operation) request-operation operation-done continue claim finish ...
//
// finish also leaves launching directly: a preflight failure, or an attempt
// abandoned before any worker claimed it, ends without a claim.
//
// # Waiting on the parent
//
// inspecting and awaiting-operation wait for the parent. The only ways out
// are the parent's answer (verdict, operation-done), which returns the lane
// to terminal so the next decision reads it, and cancel. DESIGN.md also
// lists launch and continue from these two states; the machine refuses
// them, because the seed allows no advance before the verdict or the
// completed operation is recorded.
//
// # Rebuilding
//
// Nothing in the machine does I/O: looplab/fsm runs with no callbacks, and a
// transition only changes the state. A lane is rehydrated either with
// Lane.Restore (fsm's SetState) from a known state or with Fold / Rebuild, a
// pure fold of its events over the same table. An impossible transition is
// a *TransitionError naming the current state, the event, the state it leads
// to and the states it may leave from; a fold adds the event's index
// (*FoldError).
//
// RebuildLane folds one lane's envelopes the same way, skipping audit,
// recover and exclude (no transition); EventOf maps an events.Type to its
// Event (the names are identical).
//
// # Events that are no transition
//
// recover (terminal only) attaches the parent's answer to an interrupted
// outcome; exclude (created or terminal only: where a launch is decided)
// records that the eligibility gate kept an attempt from launching. Neither
// moves the lane: after an exclude the lane stays where it was and the next
// decision skips the excluded attempt, because Run.LaneState lists its
// group with the run's exhausted groups. A lane whose every remaining
// attempt is excluded is stopped by that next decision (chain-exhausted).
//
// # The run aggregate
//
// Run folds a whole run's log (run-level and lane envelopes in log order)
// into what the engine decides from: the frozen run-created inputs, each
// lane's state, current dispatch and claim, and the run's exhausted groups.
// Run.LaneState rebuilds a lane's policy.LaneState: finish events append
// their normalized policy.Event, a verdict becomes the Inspection of the
// last outcome, operation-done appends the parentOperation that answers the
// handoff. Run's doc lists what every envelope type contributes. A run is
// final when every lane is; the engine then records run-final. Envelopes
// the engine cannot have written (a report for another execution, a second
// verdict, a launch after a run-level cancel, …) are ErrInconsistent.
//
// looplab/fsm's string states and events stay inside this package: callers
// use State and Event.
package machines
