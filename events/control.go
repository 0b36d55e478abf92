package events

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// controlToken is the last token of a run's control subject. It can never be
// a lane token (L<n> or run), so controls and reports share the reports
// stream without colliding.
const controlToken = "ctl"

// ControlSubject is sy.rep.<run>.ctl: the parent's control inputs for one run
// (verdicts, parent-operation results, cancels). It lies inside the reports
// stream (sy.rep.>) and inside RunReportsFilter(run), so the engine reads a
// run's reports and controls as one ordered sequence: SubscribeReports
// delivers a control as a ReportDelivery whose Err is set and whose Raw holds
// the control's bytes, for DecodeControl.
func ControlSubject(run string) string {
	return ReportSubjectPrefix + run + "." + controlToken
}

// ControlKind is what a control input asks the engine to record.
type ControlKind string

// Control kinds. Each becomes the lane event of the same name, appended by
// the engine (the only writer of lane events) if the lane still waits for it.
const (
	// ControlVerdict: the parent's inspection verdict on a started writer
	// (switchyard inspect). Verdict is set; the lane must be inspecting
	// ExecutionID.
	ControlVerdict ControlKind = "verdict"
	// ControlOperationDone: the result of the parent operation a handoff
	// asked for. Operation is set; the lane must await it after
	// ExecutionID.
	ControlOperationDone ControlKind = "operation-done"
	// ControlCancel: cancel one lane, or the whole run when Lane is
	// RunLane (switchyard cancel). Cancel is set.
	ControlCancel ControlKind = "cancel"
	// ControlRecover: the parent's answer to an interrupted execution a
	// continuation could resume (switchyard recover). Recover is set,
	// without nextExecution.
	ControlRecover ControlKind = "recover"
	// ControlOperationStep: a step of the parent's operation (switchyard
	// operation validate, begin). Step is set; the lane must await the
	// operation after ExecutionID.
	ControlOperationStep ControlKind = "operation-step"
)

// Control is one control input for a run, published by any process
// (PublishControl) and applied by the engine that drives the run.
//
// JSON keys: schema, id, kind, run, lane, executionId, verdict, operation,
// cancel, recover, step, time.
type Control struct {
	// Schema is JobSchemaVersion; 0 means current when encoding.
	Schema int `json:"schema"`
	// ID is unique per control input; the message id is "ctl.<ID>", so a
	// retried publish is stored once.
	ID   string      `json:"id"`
	Kind ControlKind `json:"kind"`
	Run  string      `json:"run"`
	// Lane is the lane index, or RunLane for a run-wide cancel.
	Lane int `json:"lane"`
	// ExecutionID names the execution the verdict or operation answers (the
	// lane's dispatch when the control was sent), so a control that arrives
	// after the lane moved on can never apply to a later wait. Empty for
	// cancels.
	ExecutionID string `json:"executionId,omitempty"`
	// Exactly one payload, matching Kind.
	Verdict   *Verdict       `json:"verdict,omitempty"`
	Operation *OperationDone `json:"operation,omitempty"`
	Cancel    *Cancel        `json:"cancel,omitempty"`
	Recover   *Recover       `json:"recover,omitempty"`
	Step      *OperationStep `json:"step,omitempty"`
	// Time is when the sender sent it, by its own clock.
	Time time.Time `json:"time"`
}

// ControlMsgID is the control's deterministic message id.
func ControlMsgID(c Control) string { return "ctl." + c.ID }

// Validate checks a control's fields. Errors match ErrInvalid.
func (c Control) Validate() error {
	if c.Schema != 0 && c.Schema != JobSchemaVersion {
		return &DecodeError{What: "control", Err: fmt.Errorf("%w: schema %d (this build reads %d)", ErrSchemaVersion, c.Schema, JobSchemaVersion)}
	}
	if err := ValidateExecutionID(c.ID); err != nil {
		return invalidf("control id: %v", err)
	}
	if err := ValidateRunID(c.Run); err != nil {
		return err
	}
	if c.Lane < RunLane || c.Lane > MaxLanes {
		return invalidf("control lane %d out of range", c.Lane)
	}
	if c.Time.IsZero() {
		return invalidf("control time is required")
	}
	payloads := 0
	for _, set := range []bool{c.Verdict != nil, c.Operation != nil, c.Cancel != nil, c.Recover != nil, c.Step != nil} {
		if set {
			payloads++
		}
	}
	if payloads != 1 {
		return invalidf("control carries %d payloads; want exactly one", payloads)
	}
	switch c.Kind {
	case ControlRecover:
		if c.Lane == RunLane {
			return invalidf("recover control needs a lane")
		}
		if err := ValidateExecutionID(c.ExecutionID); err != nil {
			return err
		}
		if c.Recover == nil {
			return invalidf("recover control needs recover")
		}
		if c.Recover.Recovery != nil && c.Recover.Recovery.NextExecution != nil {
			return invalidf("recover control carries no nextExecution: the engine prepares it")
		}
		return c.Recover.validateInput()
	case ControlVerdict, ControlOperationDone:
		if c.Lane == RunLane {
			return invalidf("%s control needs a lane", c.Kind)
		}
		if err := ValidateExecutionID(c.ExecutionID); err != nil {
			return err
		}
		if c.Kind == ControlVerdict {
			if c.Verdict == nil {
				return invalidf("verdict control needs verdict")
			}
			return c.Verdict.validate()
		}
		if c.Operation == nil {
			return invalidf("operation-done control needs operation")
		}
		return c.Operation.validate()
	case ControlOperationStep:
		if c.Lane == RunLane {
			return invalidf("operation-step control needs a lane")
		}
		if err := ValidateExecutionID(c.ExecutionID); err != nil {
			return err
		}
		if c.Step == nil {
			return invalidf("operation-step control needs step")
		}
		if c.Step.ExecutionID != c.ExecutionID {
			return invalidf("operation-step control for execution %s carries a step of %s", c.ExecutionID, c.Step.ExecutionID)
		}
		return c.Step.validate()
	case ControlCancel:
		if c.Cancel == nil {
			return invalidf("cancel control needs cancel")
		}
		if c.ExecutionID != "" {
			return invalidf("cancel control names no execution")
		}
		return c.Cancel.validate()
	}
	return invalidf("control kind %q: want verdict, operation-done, operation-step, cancel or recover", c.Kind)
}

// EncodeControl validates c and returns its JSON form (schema filled in,
// time in UTC). Over MaxMessageBytes it is a *LimitError.
func EncodeControl(c Control) ([]byte, error) {
	c.Schema = cmp.Or(c.Schema, JobSchemaVersion)
	c.Time = c.Time.UTC()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return encodeMessage("control", c)
}

// DecodeControl strictly decodes one control, like DecodeReport.
func DecodeControl(b []byte) (Control, error) {
	var c Control
	if err := decodeMessage("control", b, &c, &c.Schema); err != nil {
		return Control{}, err
	}
	c.Time = c.Time.UTC()
	if err := c.Validate(); err != nil {
		return Control{}, &DecodeError{What: "control", Err: err}
	}
	return c, nil
}

// ControlQueue publishes control inputs. *JetStreamQueue and *MemoryQueue
// implement it.
type ControlQueue interface {
	// PublishControl validates and publishes c on ControlSubject(c.Run)
	// with message id ControlMsgID(c), returning its reports-stream
	// sequence (a retried publish returns the original sequence while
	// within the duplicate window).
	PublishControl(ctx context.Context, c Control) (uint64, error)
}

var (
	_ ControlQueue = (*JetStreamQueue)(nil)
	_ ControlQueue = (*MemoryQueue)(nil)
)

// PublishControl implements ControlQueue.
func (q *JetStreamQueue) PublishControl(ctx context.Context, c Control) (uint64, error) {
	data, err := EncodeControl(c)
	if err != nil {
		return 0, err
	}
	return q.publishReportsStream(ctx, "control", ControlSubject(c.Run), ControlMsgID(c), data)
}

// PublishControl implements ControlQueue: the control joins the run's
// reports, in order, exactly as on JetStream.
func (q *MemoryQueue) PublishControl(ctx context.Context, c Control) (uint64, error) {
	data, err := EncodeControl(c)
	if err != nil {
		return 0, err
	}
	return q.storeReport(ctx, c.Run, ControlMsgID(c), data)
}
