package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// laneChangePrinter prints run's live lines: one per lane change, the
// engine's progress notice when one is due, and, when a lane waits for the
// parent, the exact command that answers it.
type laneChangePrinter struct {
	mu     sync.Mutex
	w      io.Writer
	run    string
	parent policy.Parent
	conn   string // connection flags to repeat in printed commands
	// workerHint, when set, returns the hint to print the first time a
	// lane waits for a worker of provider ("" when one is live).
	workerHint func(provider string) string
	hinted     map[string]bool
}

// print is engine.Wait's onChange.
func (p *laneChangePrinter) print(ch engine.LaneChange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, laneChangeLine(ch))
	if ch.Notice != "" {
		fmt.Fprintf(p.w, "  notice: %s\n", noticeWithConn(ch.Notice, p.conn))
	}
	cmd := parentCommand(ch.WaitingFor, p.run, ch.Lane, p.parent, p.conn)
	if ch.WaitingFor == engine.WaitNative && ch.To == machines.StateRunning && ch.ExecutionID != "" {
		// The parent took the job; what remains is its report.
		cmd = nativeReportCommand(ch.ExecutionID, p.conn)
	}
	if cmd != "" {
		fmt.Fprintf(p.w, "  waiting for the parent: %s\n", cmd)
	}
	if ch.WaitingFor == engine.WaitWorker && p.workerHint != nil {
		if prov, _, ok := strings.Cut(ch.Descriptor, ":"); ok && !p.hinted[prov] {
			if p.hinted == nil {
				p.hinted = map[string]bool{}
			}
			p.hinted[prov] = true
			if hint := p.workerHint(prov); hint != "" {
				fmt.Fprintf(p.w, "  %s\n", hint)
			}
		}
	}
}

// laneChangeLine is one live line: lane id and index, the new state, the
// current attempt's descriptor, and the outcome or reason when there is
// one.
func laneChangeLine(ch engine.LaneChange) string {
	to := string(ch.To)
	if ch.Handoff != nil {
		to = engine.HandedOffState
	}
	line := fmt.Sprintf("%s (lane %d): %s", ch.LaneID, ch.Lane, to)
	if ch.Descriptor != "" {
		line += " " + ch.Descriptor
	}
	switch {
	case ch.Handoff != nil:
		line += " (commit " + ch.Handoff.Short() + ", then " + ch.Reason + ")"
	case ch.Outcome != "":
		line += " (" + string(ch.Outcome) + ")"
	case ch.Reason != "" && ch.Reason != string(ch.To):
		line += " (" + ch.Reason + ")"
	}
	return line
}

// noticeWithConn adds conn (the connection flags, e.g. " --data-dir D") to
// every switchyard command in an engine notice, so each one pasted as is
// answers the same store. A command runs from "switchyard " to the next
// ", then ", " (or " or the end of the notice.
func noticeWithConn(notice, conn string) string {
	if conn == "" {
		return notice
	}
	var b strings.Builder
	rest := notice
	for {
		i := strings.Index(rest, "switchyard ")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		end := len(rest)
		for _, stop := range []string{", then ", " (or "} {
			if j := strings.Index(rest, stop); j >= 0 && j < end {
				end = j
			}
		}
		b.WriteString(rest[:end])
		b.WriteString(conn)
		rest = rest[end:]
	}
}

// parentCommand is the command the parent runs to answer a lane waiting on
// it, or "".
func parentCommand(w engine.WaitKind, run string, lane int, parent policy.Parent, conn string) string {
	switch w {
	case engine.WaitVerdict:
		return fmt.Sprintf("switchyard inspect --run %s --lane %d --state clear|unsafe --evidence REF [--from COMMIT|REF]%s", run, lane, conn)
	case engine.WaitOperation:
		return fmt.Sprintf("switchyard operation validate --run %s --lane %d --expected-head SHA --file PATH --check ID%s, then operation begin and operation done", run, lane, conn)
	case engine.WaitNative:
		return fmt.Sprintf("switchyard native next --parent %s%s", parent, conn)
	case engine.WaitRecovery:
		return fmt.Sprintf("switchyard recover --run %s --lane %d --evidence REF --clear --correction TEXT --blockage-id ID --snapshot-ref REF --snapshot-digest SHA256 --partial-work-ref REF --side-effects-ref REF --stopped-writers-ref REF (or --decline)%s", run, lane, conn)
	}
	return ""
}

// nativeReportCommand is the command that records a native execution's
// end.
func nativeReportCommand(execution, conn string) string {
	return fmt.Sprintf("switchyard native report --execution %s --status <outcome> [--process-started true|false] [--evidence REF]%s", execution, conn)
}

// writeJSON prints v indented by two spaces, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return failf("write JSON: %v", err)
	}
	return nil
}
