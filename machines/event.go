package machines

// Event is a lane transition. Its value is the name of the lane-level event
// type the engine persists (package events uses the same names), so a lane's
// log folds straight into its state. The set is closed: Events lists every
// value.
type Event string

// The lane events. Each line says who records it and from what; the engine
// is the only writer of lane events.
const (
	// EventLaunch starts an attempt's first execution: recorded by the
	// engine from a launch decision of policy.Next. created, terminal →
	// launching.
	EventLaunch Event = "launch"
	// EventContinue re-runs the same attempt with the prepared execution:
	// recorded by the engine from a continue decision. created, terminal →
	// launching.
	EventContinue Event = "continue"
	// EventClaim records that a worker claimed the execution id (its process
	// may start from here on): from a worker report. launching → running.
	EventClaim Event = "claim"
	// EventFinish records the attempt's normalized receipt, or its explicit
	// native host metadata, or an abandoned attempt: from a worker report.
	// launching, running → terminal.
	EventFinish Event = "finish"
	// EventInspect pauses a started writer for the parent's review: from an
	// inspect decision. terminal → inspecting.
	EventInspect Event = "inspect"
	// EventVerdict records the parent's clear or unsafe verdict with its
	// evidence ref (switchyard inspect). inspecting → terminal.
	EventVerdict Event = "verdict"
	// EventRequestOperation hands a parent-only operation back to the
	// parent: from a parent-operation decision. terminal →
	// awaiting-operation.
	EventRequestOperation Event = "request-operation"
	// EventOperationDone records the parent operation's result, completed or
	// failed. awaiting-operation → terminal.
	EventOperationDone Event = "operation-done"
	// EventComplete ends the lane delivered: from a stop decision whose
	// reason is complete. created, terminal → complete.
	EventComplete Event = "complete"
	// EventStop ends the lane undelivered: from any other stop decision or a
	// policy-denied decision. created, terminal → stopped.
	EventStop Event = "stop"
	// EventCancel ends the lane on the parent's request (switchyard cancel,
	// for the lane or its whole run). Any non-final state → cancelled.
	EventCancel Event = "cancel"
)

// Events lists every lane event in lifecycle order.
var Events = []Event{
	EventLaunch, EventContinue, EventClaim, EventFinish, EventInspect, EventVerdict,
	EventRequestOperation, EventOperationDone, EventComplete, EventStop, EventCancel,
}

// Valid reports whether e is one of Events.
func (e Event) Valid() bool {
	switch e {
	case EventLaunch, EventContinue, EventClaim, EventFinish, EventInspect, EventVerdict,
		EventRequestOperation, EventOperationDone, EventComplete, EventStop, EventCancel:
		return true
	}
	return false
}

// String returns the event's wire name.
func (e Event) String() string { return string(e) }
