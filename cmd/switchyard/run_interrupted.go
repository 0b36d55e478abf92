package main

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/engine"
)

// interruptedError is run's exit 130 when an interrupt came before the run
// was final: the exit code (Unwrap), and the status interruptedRun read at
// the interrupt, from which run --json prints its interruptedRunDoc.
type interruptedError struct {
	exit   *exitError
	run    string
	status engine.RunStatus
	// statusErr: the status could not be read; status is empty.
	statusErr error
}

func (e *interruptedError) Error() string { return e.exit.Error() }
func (e *interruptedError) Unwrap() error { return e.exit }

// Drivers of an interrupted run (interruptedRunDoc.Driver).
const (
	// driverServe: a switchyard serve drives the run; it goes on there.
	driverServe = "serve"
	// driverNone: the self-contained run stopped with this process;
	// nothing drives the run until a serve resumes it.
	driverNone = "none"
	// driverUnknown: the status could not be read.
	driverUnknown = "unknown"
)

// interruptedRunDoc is what run --json prints on stdout when it is
// interrupted before the run is final (exit 130): whether the run is final
// now, what drives it, its lanes, and the commands that follow it and, for
// a self-contained run that is not final, resume it.
type interruptedRunDoc struct {
	Run string `json:"run"`
	// Final is false unless a self-contained run became final while it
	// stopped (its last running lanes stopped, recorded by its engine);
	// Follow then prints its report.
	Final       bool   `json:"final"`
	Interrupted bool   `json:"interrupted"` // always true
	Driver      string `json:"driver"`      // serve, none or unknown (see driverServe)
	// Lanes are the run's lanes (the objects of status --run --json): as
	// a self-contained run's stopped drive left them, else as status read
	// them at the interrupt; empty when Driver is unknown.
	Lanes []engine.LaneStatus `json:"lanes"`
	// Resume is the command that resumes a self-contained run ("" when
	// a serve drives it or it is final); Follow the one that follows it.
	Resume string `json:"resume,omitempty"`
	Follow string `json:"follow"`
	// Error says why the status could not be read (Driver unknown).
	Error string `json:"error,omitempty"`
}

// interruptedDoc builds run --json's document from what interruptedRun
// read; conn says whether a serve drives the run.
func interruptedDoc(ie *interruptedError, conn *engineConn, flags string) interruptedRunDoc {
	doc := interruptedRunDoc{Run: ie.run, Interrupted: true, Lanes: []engine.LaneStatus{},
		Follow: fmt.Sprintf("switchyard status --run %s --watch%s", ie.run, flags)}
	switch {
	case ie.statusErr != nil:
		doc.Driver = driverUnknown
		doc.Follow = fmt.Sprintf("switchyard status --run %s%s", ie.run, flags)
		doc.Error = fmt.Sprintf("cannot tell whether run %s is final (%s: %v)", ie.run, conn.describe(), ie.statusErr)
		return doc
	case conn.mode != connEmbedded:
		doc.Driver = driverServe
	default:
		doc.Driver = driverNone
		doc.Resume = "switchyard serve" + flags
	}
	if ie.status.Lanes != nil {
		doc.Lanes = ie.status.Lanes
	}
	if ie.status.Final {
		doc.Final = true
		doc.Resume = ""
		doc.Follow = fmt.Sprintf("switchyard report --run %s%s", ie.run, flags)
	}
	return doc
}
