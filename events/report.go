package events

import (
	"cmp"
	"fmt"
	"strconv"
	"time"
)

// ReportKind is what a worker reports about an execution.
type ReportKind string

// Report kinds.
const (
	// ReportClaimed: the worker claimed the execution and is starting it.
	ReportClaimed ReportKind = "claimed"
	// ReportFinished: the execution ended; the receipt (or, for native
	// lanes, the host metadata) says how.
	ReportFinished ReportKind = "finished"
	// ReportAbandoned: a redelivered job found the claim's lease stale; the
	// execution is never run again.
	ReportAbandoned ReportKind = "abandoned"
	// ReportRedelivered: a job was delivered again (redelivered after a
	// missed ack, or published again by a restarted engine) after its
	// execution had ended, released or abandoned; the worker removed it
	// without starting anything. The engine records it as an audit event,
	// even after the run is final.
	ReportRedelivered ReportKind = "redelivered"
	// ReportRefused: the worker refused a job that does not match what the
	// engine prepared and recorded for its execution (a forged or
	// corrupted job); nothing was claimed or run. Refusal says why. The
	// engine records it as an audit event.
	ReportRefused ReportKind = "refused"
)

// Refusal is why a worker refused a job (ReportRefused): a closed set, so
// a refused report carries no job text.
type Refusal string

// Refusals.
const (
	// RefusalNoLaunch: the lane's log records no launch of the execution.
	RefusalNoLaunch Refusal = "no-launch"
	// RefusalMismatch: the job differs from the job its recorded launch
	// and the run's run-created give (JobOf) in any field, or came from
	// another provider's queue.
	RefusalMismatch Refusal = "job-mismatch"
	// RefusalOutsideDataDir: a path of the job lies outside the data
	// directory's area for that execution.
	RefusalOutsideDataDir Refusal = "outside-data-dir"
)

// Report is a worker's (or, for native lanes, the parent's) statement about
// one execution, published on ReportSubject(run, lane) with a deterministic
// message id (ReportMsgID). The engine turns reports into claim and finish
// events, or audit events when they change nothing.
//
// JSON keys: schema, executionId, run, lane, kind, workerId, lease,
// receiptPath, receiptDigest, host, jobSeq, delivery, time.
type Report struct {
	// Schema is JobSchemaVersion; 0 means current when encoding.
	Schema      int        `json:"schema"`
	ExecutionID string     `json:"executionId"`
	Run         string     `json:"run"`
	Lane        int        `json:"lane"`
	Kind        ReportKind `json:"kind"`
	WorkerID    string     `json:"workerId"`
	// Lease is the claim's lease; claimed reports only.
	Lease *LeaseInfo `json:"lease,omitempty"`
	// ReceiptPath and ReceiptDigest name the runner receipt; finished
	// reports of external executions only.
	ReceiptPath   string `json:"receiptPath,omitempty"`
	ReceiptDigest string `json:"receiptDigest,omitempty"`
	// Host is the explicit host terminal metadata; finished reports of
	// native executions only.
	Host *HostMetadata `json:"host,omitempty"`
	// Stall is the metadata of a response_stalled attempt; finished
	// reports only.
	Stall *Stall `json:"stall,omitempty"`
	// Refusal is why the job was refused; refused reports only.
	Refusal Refusal `json:"refusal,omitempty"`
	// JobSeq is the jobs-stream sequence of the job message and Delivery
	// its delivery count (both at least 1); redelivered reports only.
	JobSeq   uint64 `json:"jobSeq,omitempty"`
	Delivery uint64 `json:"delivery,omitempty"`
	// Time is when the reporter sent it, by its own clock.
	Time time.Time `json:"time"`
}

// ReportMsgID is the report's deterministic message id,
// <executionId>.<kind>.<digest of workerId>, with .<jobSeq>.<delivery>
// added for a redelivered report: a retried report is stored once, and
// each delivery of a job that comes back is reported on its own.
func ReportMsgID(r Report) string {
	id := r.ExecutionID + "." + string(r.Kind) + "." + Digest([]byte(r.WorkerID))[len(DigestPrefix):][:16]
	if r.Kind == ReportRedelivered {
		id += "." + strconv.FormatUint(r.JobSeq, 10) + "." + strconv.FormatUint(r.Delivery, 10)
	}
	return id
}

// Validate checks a report's fields. Errors match ErrInvalid.
func (r Report) Validate() error {
	if r.Schema != 0 && r.Schema != JobSchemaVersion {
		return &DecodeError{What: "report", Err: fmt.Errorf("%w: schema %d (this build reads %d)", ErrSchemaVersion, r.Schema, JobSchemaVersion)}
	}
	if err := ValidateExecutionID(r.ExecutionID); err != nil {
		return err
	}
	if err := ValidateRunID(r.Run); err != nil {
		return err
	}
	if r.Lane < 0 || r.Lane > MaxLanes {
		return invalidf("report lane %d out of range", r.Lane)
	}
	if err := ValidateWorkerID(r.WorkerID); err != nil {
		return err
	}
	if r.Time.IsZero() {
		return invalidf("report time is required")
	}
	hasReceipt := r.ReceiptPath != "" || r.ReceiptDigest != ""
	if (r.Refusal != "") != (r.Kind == ReportRefused) {
		return invalidf("%s report: a refusal reason goes with, and only with, a refused report", r.Kind)
	}
	if (r.JobSeq != 0 || r.Delivery != 0) && r.Kind != ReportRedelivered {
		return invalidf("%s report carries no job sequence or delivery count", r.Kind)
	}
	if r.Stall != nil {
		if r.Kind != ReportFinished || !hasReceipt || r.Host != nil {
			return invalidf("%s report carries a stall; only a finished report with a receipt does", r.Kind)
		}
		if err := r.Stall.Validate(); err != nil {
			return err
		}
	}
	switch r.Kind {
	case ReportClaimed:
		if r.Lease == nil {
			return invalidf("claimed report needs lease")
		}
		if hasReceipt || r.Host != nil {
			return invalidf("claimed report carries no receipt or host metadata")
		}
		return r.Lease.validate()
	case ReportFinished:
		switch {
		case hasReceipt && r.Host != nil:
			return invalidf("finished report carries both a receipt and host metadata")
		case hasReceipt:
			if err := requireAbs("receiptPath", r.ReceiptPath); err != nil {
				return err
			}
			return requireDigest("receiptDigest", r.ReceiptDigest)
		case r.Host != nil:
			return r.Host.validate()
		}
		return invalidf("finished report needs a receipt or host metadata")
	case ReportAbandoned:
		if hasReceipt || r.Host != nil || r.Lease != nil {
			return invalidf("abandoned report carries no lease, receipt or host metadata")
		}
		return nil
	case ReportRefused:
		if hasReceipt || r.Host != nil || r.Lease != nil {
			return invalidf("refused report carries no lease, receipt or host metadata")
		}
		switch r.Refusal {
		case RefusalNoLaunch, RefusalMismatch, RefusalOutsideDataDir:
			return nil
		}
		return invalidf("refusal %q: want no-launch, job-mismatch or outside-data-dir", r.Refusal)
	case ReportRedelivered:
		if hasReceipt || r.Host != nil || r.Lease != nil {
			return invalidf("redelivered report carries no lease, receipt or host metadata")
		}
		if r.JobSeq == 0 || r.Delivery == 0 {
			return invalidf("redelivered report needs the job's jobSeq and delivery count")
		}
		return nil
	}
	return invalidf("report kind %q: want claimed, finished, abandoned or redelivered", r.Kind)
}

// EncodeReport validates r and returns its JSON form (schema filled in,
// time in UTC). Over MaxMessageBytes it is a *LimitError.
func EncodeReport(r Report) ([]byte, error) {
	r.Schema = cmp.Or(r.Schema, JobSchemaVersion)
	r.Time = r.Time.UTC()
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return encodeMessage("report", r)
}

// DecodeReport strictly decodes one report, like DecodeJob.
func DecodeReport(b []byte) (Report, error) {
	var r Report
	if err := decodeMessage("report", b, &r, &r.Schema); err != nil {
		return Report{}, err
	}
	r.Time = r.Time.UTC()
	if err := r.Validate(); err != nil {
		return Report{}, &DecodeError{What: "report", Err: err}
	}
	return r, nil
}
