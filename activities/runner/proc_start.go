package runner

import "github.com/switchyard-dev/switchyard/events"

// procVerdict is what a process-identity probe found (events.ProcState).
type procVerdict = events.ProcState

const (
	procLive       = events.ProcLive       // running; token is its start identity
	procAbsent     = events.ProcAbsent     // no such process (or a zombie)
	procUnverified = events.ProcUnverified // the platform gave no usable answer
)

// startToken returns a process's start identity (events.ProcessStart): a
// reused pid has a different token.
func startToken(pid int) (string, procVerdict) { return events.ProcessStart(pid) }

// psStartToken is the ps -o lstart probe non-Linux hosts use
// (events.PSProcessStart); tests run it on Linux too.
func psStartToken(pid int) (string, procVerdict) { return events.PSProcessStart(pid) }
