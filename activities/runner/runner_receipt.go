package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// initReceipt fills the run identity of the schema 2 receipt and the
// not-started defaults every outcome starts from.
func (a *attempt) initReceipt() {
	p := a.paths
	res := pathResolver{}
	canon := func(ref pathRef) string {
		if c, whole, err := res.canon(ref.abs); err == nil && whole {
			return c
		}
		return ref.canon
	}
	execID := a.o.ExecutionID
	if execID == "" {
		execID = p.receipt.abs
	}
	var timeoutMs *int64
	if a.o.Timeout > 0 {
		timeoutMs = ptr(a.o.Timeout.Milliseconds())
	}
	a.rc = policy.Receipt{
		SchemaVersion:  2,
		Parent:         a.o.Parent,
		Provider:       a.o.Provider,
		Model:          a.o.Model,
		Effort:         a.o.Effort,
		Mode:           a.o.Mode,
		Cwd:            p.cwd.abs,
		PromptPath:     p.prompt.abs,
		OutputPath:     p.output.abs,
		ReceiptPath:    p.receipt.abs,
		ExecutionID:    execID,
		CanonicalPaths: &policy.CanonicalPaths{Cwd: canon(p.cwd), Output: canon(p.output), Receipt: canon(p.receipt)},
		StartedAt:      iso(a.start),
		Preflight:      policy.Preflight{Argv: []string{}, Status: policy.PreflightNotRun},
		Argv:           []string{},
		ProcessStarted: ptr(false),
		APISpend:       a.o.APISpend,
		Contract:       a.o.Contract,
		TimeoutMs:      timeoutMs,
	}
}

// receiptError builds a capped, launcher-authored error record.
func receiptError(message, evidence string) *policy.ReceiptError {
	return &policy.ReceiptError{
		Message:  providers.CapText(message, providers.FieldCap),
		Evidence: providers.CapText(evidence, providers.EvidenceCap),
	}
}

// failPreflight records a failure before any workload started.
func (a *attempt) failPreflight(status policy.ReceiptStatus, pre policy.PreflightStatus, message, evidence string) {
	a.rc.Status = status
	a.rc.FailurePhase = ptr(policy.PhasePreflight)
	a.rc.ProcessStarted = ptr(false)
	if pre != "" {
		a.rc.Preflight.Status = pre
	}
	a.rc.Error = receiptError(message, evidence)
}

// launcherFailure records the runner's own failure to set the attempt up
// (private files, the spec's preparation): child-failed in preflight with
// nothing started, which the policy never advances on.
func (a *attempt) launcherFailure(note string, err error) {
	a.failPreflight(policy.StatusChildFailed, "", note, "diagnostic: runner_setup_failed\n"+err.Error())
}

// interrupted records a cancelled or timed-out child.
func (a *attempt) interrupted(res *childResult, phase policy.FailurePhase) {
	if res.signalSent != "" {
		a.rc.Signal = ptr(res.signalSent)
	}
	role := "workload"
	if phase == policy.PhasePreflight {
		role = "preflight probe"
	}
	how := "the " + role + " child had already exited; the runner stopped waiting on its output pipes"
	if res.signalSent != "" {
		how = "the runner sent " + res.signalSent + " to the live " + role + " child's process group"
	}
	var status policy.ReceiptStatus
	var message, code string
	if res.interrupted == byCancel {
		status, code = policy.StatusCancelled, "runner_cancelled"
		message = "cancelled by " + a.latch.signal + "; " + how
	} else {
		status, code = policy.StatusTimedOut, "runner_deadline_exceeded"
		message = fmt.Sprintf("%s passed; %s", a.deadline(), how)
	}
	evidence := providers.FailureEvidence(message, code, nil, res.capture.Stdout, res.capture.Stderr)
	if phase == policy.PhasePreflight {
		pre := policy.PreflightCancelled
		if status == policy.StatusTimedOut {
			pre = policy.PreflightTimedOut
		}
		a.failPreflight(status, pre, message, evidence)
		return
	}
	a.rc.Status = status
	a.rc.FailurePhase = ptr(phase)
	a.rc.Error = receiptError(message, evidence)
}

// deadline names the deadline that passed: the --timeout one, or the
// caller's (a context deadline with cause ErrDeadline).
func (a *attempt) deadline() string {
	if a.o.Timeout > 0 {
		return fmt.Sprintf("the --timeout deadline of %s", a.o.Timeout)
	}
	return "the deadline"
}

// delivered reports whether the status delivers a final response.
func delivered(s policy.ReceiptStatus) bool {
	return s == policy.StatusComplete || s == policy.StatusNeedsParentOperation
}

// classify takes the workload verdict from providers.Classify, the one
// place provider output becomes a receipt status.
func (a *attempt) classify(parsed providers.Parsed, res *childResult) {
	cls := providers.Classify(a.spec, a.req, res.capture, parsed)
	if !cls.Status.Valid() {
		a.rc.Status = policy.StatusChildFailed
		a.rc.FailurePhase = ptr(policy.PhaseInvocation)
		a.rc.Error = receiptError("the output classifier returned no status", "diagnostic: runner_classifier_failed")
		return
	}
	a.rc.Status = cls.Status
	if cls.Phase != "" {
		a.rc.FailurePhase = ptr(cls.Phase)
	}
	a.rc.Error = cls.Error
	a.rc.TerminalSuccess = cls.TerminalSuccess
	a.rc.Handoff = cls.Handoff
	a.rc.HandoffMalformed = cls.HandoffMalformed
	a.rc.ReportedModel, a.rc.ModelVerified, a.rc.ModelEvidence = cls.ReportedModel, cls.ModelVerified, cls.ModelEvidence
	if !delivered(cls.Status) {
		a.rc.ToolDenial = parsed.ToolDenial
		return
	}
	if strings.TrimSpace(parsed.FinalText) == "" {
		a.rc.Status = policy.StatusMalformedOutput
		a.rc.FailurePhase = ptr(policy.PhasePostprocess)
		a.rc.TerminalSuccess = ptr(parsed.TerminalSuccess)
		a.rc.Handoff = nil
		a.rc.Error = receiptError("the provider delivered an empty final response",
			providers.FailureEvidence("an output file must not be empty", "runner_empty_final_response", nil, res.capture.Stdout, res.capture.Stderr))
		return
	}
	a.final = parsed.FinalText
}

// noteTruncation adds capture truncation to a failure's evidence.
func (a *attempt) noteTruncation(res *childResult) {
	if a.rc.Error == nil || res.dropped[0]+res.dropped[1] == 0 {
		return
	}
	note := fmt.Sprintf("\nrunner: capture kept %d of %d stdout and %d of %d stderr bytes (CaptureLimit %d bytes per stream)",
		res.total[0]-res.dropped[0], res.total[0], res.total[1]-res.dropped[1], res.total[1], a.r.cfg.CaptureLimit)
	ev := providers.CapText(a.rc.Error.Evidence, providers.EvidenceCap-len(note))
	a.rc.Error.Evidence = ev + note
}

// finish writes the output (or removes its empty reservation), removes
// the private files, completes and writes the receipt, marks the progress
// snapshot terminal. It returns the result.
func (a *attempt) finish() Result {
	if delivered(a.rc.Status) {
		if err := a.res.output.write([]byte(a.final)); err != nil {
			a.rc.Status = policy.StatusChildFailed
			a.rc.FailurePhase = ptr(policy.PhasePostprocess)
			a.rc.Handoff = nil
			a.rc.Error = receiptError("could not write the output file", "diagnostic: runner_output_write_failed\n"+err.Error())
			a.res.output.discard()
		} else {
			a.res.output.close()
		}
	} else {
		a.res.output.discard()
	}
	if err := a.area.cleanup(); err != nil && a.rc.Error != nil {
		note := "runner: private cleanup incomplete"
		if errors.Is(err, errLeftInPlace) {
			note = "runner: " + err.Error()
		}
		a.rc.Error.Evidence = providers.CapText(a.rc.Error.Evidence+"\n"+note, providers.EvidenceCap)
	}
	end := a.r.cfg.Now()
	a.rc.CompletedAt = iso(end)
	a.rc.ElapsedMs = max(end.Sub(a.start).Milliseconds(), 0)

	line, pretty := encodeReceipt(&a.rc, ""), encodeReceipt(&a.rc, "  ")
	written := a.res.receipt.write(pretty) == nil
	a.res.receipt.close()
	a.progress.terminal(written)
	a.progress.close()

	return Result{Receipt: a.rc, Bytes: pretty, Line: line, Written: written, ExitCode: policy.ExitCodeForStatus(a.rc.Status), Stall: a.stall}
}

// encodeReceipt renders the receipt followed by a newline, on one line or
// indented, without HTML escaping (paths and messages stay readable).
func encodeReceipt(rc *policy.Receipt, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	enc.Encode(rc)
	return b.Bytes()
}
