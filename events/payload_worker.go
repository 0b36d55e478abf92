package events

import (
	"strings"
	"unicode/utf8"

	"github.com/switchyard-dev/switchyard/policy"
)

// LeaseInfo is the claim lease a worker reported: its time to live and the
// claim's revision in the Claims store when the worker claimed it.
type LeaseInfo struct {
	TTLMs    int64  `json:"ttlMs"`
	Revision uint64 `json:"revision"`
}

func (l LeaseInfo) validate() error {
	if l.TTLMs <= 0 || l.Revision == 0 {
		return invalidf("lease: ttlMs and revision must be positive")
	}
	return nil
}

// Claim records a worker's claimed report (lane-level): launching → running.
type Claim struct {
	ExecutionID string    `json:"executionId"`
	WorkerID    string    `json:"workerId"`
	Lease       LeaseInfo `json:"lease"`
	// ReportSeq is the reports-stream sequence of the report recorded here,
	// so a restarted engine resumes its report subscription after it.
	ReportSeq uint64 `json:"reportSeq,omitempty"`
	// Reporter is the connection that published the claimed report
	// (ReportDelivery.Reporter): only it may report the execution
	// finished. Empty when the engine's own connection published it.
	Reporter string `json:"reporter,omitempty"`
}

// EventType returns TypeClaim.
func (Claim) EventType() Type { return TypeClaim }

func (p Claim) validate() error {
	if err := ValidateExecutionID(p.ExecutionID); err != nil {
		return err
	}
	if err := ValidateWorkerID(p.WorkerID); err != nil {
		return err
	}
	if p.Reporter != "" {
		if _, ok := ReporterRole(p.Reporter); !ok || len(p.Reporter) > 128 || strings.ContainsAny(p.Reporter, ".*> \t\r\n") {
			return invalidf("reporter %q is not a connection's inbox prefix", p.Reporter)
		}
	}
	return p.Lease.validate()
}

// HostMetadata is the explicit host terminal metadata a parent attests for
// a native lane (switchyard native report), which has no runner receipt.
type HostMetadata struct {
	// Status is the outcome the host attests.
	Status policy.Outcome `json:"status"`
	// ProcessStarted is the host's statement; nil when it made none.
	ProcessStarted *bool `json:"processStarted,omitempty"`
	// EvidenceRef points at the host's structured record (for example a
	// tool-envelope capacity failure).
	EvidenceRef string `json:"evidenceRef,omitempty"`
}

func (h HostMetadata) validate() error {
	if !h.Status.Valid() {
		return invalidf("host.status %q is not a policy outcome", h.Status)
	}
	return nil
}

// Finish records the end of an execution (lane-level): launching or
// running → terminal. Exactly one source backs Event: a runner receipt
// (ReceiptDigest and Receipt), native host metadata (Host), or neither when
// Abandoned (the worker's lease went stale; the attempt is never run again).
type Finish struct {
	ExecutionID string `json:"executionId"`
	// WorkerID is the reporting worker, when known.
	WorkerID string `json:"workerId,omitempty"`
	// ReceiptDigest is Digest of the receipt file's bytes; Receipt is the
	// decoded receipt those bytes held.
	ReceiptDigest string          `json:"receiptDigest,omitempty"`
	Receipt       *policy.Receipt `json:"receipt,omitempty"`
	// Host is the native lane's attested terminal metadata.
	Host *HostMetadata `json:"host,omitempty"`
	// Stall is the metadata of a response_stalled attempt, from its
	// worker's report.
	Stall *Stall `json:"stall,omitempty"`
	// Event is the normalized lane-state event (policy.Normalize for
	// receipts) appended to the lane's history.
	Event policy.Event `json:"event"`
	// Abandoned marks an attempt whose worker lease went stale.
	Abandoned bool `json:"abandoned,omitempty"`
	// Unsupported names the capability the attempt's route lacks when the
	// engine ended it without handing it out (a strict-contract native
	// lane): failed, processStarted false, with no receipt and no host.
	Unsupported string `json:"unsupported,omitempty"`
	// Malformed is why the engine recorded a receipt that claims a
	// delivered response (complete or needs-parent-operation) as
	// malformed-output: its re-check of the success conditions (exit 0,
	// the status, the provider's model evidence, a non-empty output file)
	// and the argv's model pin failed. The event is then failed with
	// processStarted unknown. "" when the receipt passed or claims no
	// delivery.
	Malformed string `json:"malformed,omitempty"`
	// ReportSeq is the reports-stream sequence of the report recorded here.
	ReportSeq uint64 `json:"reportSeq,omitempty"`
}

// MaxMalformedReason caps Finish.Malformed, in characters.
const MaxMalformedReason = 1000

// EventType returns TypeFinish.
func (Finish) EventType() Type { return TypeFinish }

func (p Finish) validate() error {
	if err := ValidateExecutionID(p.ExecutionID); err != nil {
		return err
	}
	if p.WorkerID != "" {
		if err := ValidateWorkerID(p.WorkerID); err != nil {
			return err
		}
	}
	hasReceipt := p.Receipt != nil || p.ReceiptDigest != ""
	switch {
	case p.Unsupported != "":
		if hasReceipt || p.Host != nil || p.Abandoned || p.Stall != nil {
			return invalidf("an unsupported finish carries no receipt, host metadata, stall or abandonment")
		}
		if p.Event.Status != policy.OutcomeFailed || p.Event.ProcessStarted == nil || *p.Event.ProcessStarted {
			return invalidf("an unsupported finish is failed with processStarted false")
		}
	case hasReceipt && p.Host != nil:
		return invalidf("finish carries both a receipt and host metadata")
	case hasReceipt:
		if p.Receipt == nil {
			return invalidf("receiptDigest without receipt")
		}
		if err := requireDigest("receiptDigest", p.ReceiptDigest); err != nil {
			return err
		}
	case p.Host != nil:
		if err := p.Host.validate(); err != nil {
			return err
		}
	case !p.Abandoned:
		return invalidf("finish needs a receipt, host metadata or abandoned")
	}
	if p.Malformed != "" {
		switch {
		case p.Receipt == nil || p.Abandoned || p.Stall != nil:
			return invalidf("a malformed-output finish carries its receipt, and no stall or abandonment")
		case p.Receipt.Status != policy.StatusComplete && p.Receipt.Status != policy.StatusNeedsParentOperation:
			return invalidf("only a receipt that claims a delivered response is recorded malformed-output by the engine (receipt is %s)", p.Receipt.Status)
		case p.Event.Status != policy.OutcomeFailed || p.Event.ProcessStarted != nil:
			return invalidf("a malformed-output finish is failed with processStarted unknown")
		case utf8.RuneCountInString(p.Malformed) > MaxMalformedReason:
			return invalidf("malformed reason is %d characters; the limit is %d", utf8.RuneCountInString(p.Malformed), MaxMalformedReason)
		}
	}
	if p.Stall != nil {
		// A stall is a runner's timed-out receipt whose error names
		// response_stalled: only a finish recorded from a receipt has one.
		if p.Receipt == nil || p.Abandoned {
			return invalidf("stall on a finish without a usable receipt")
		}
		if err := p.Stall.Validate(); err != nil {
			return err
		}
	}
	if !p.Event.Status.Valid() {
		return invalidf("event.status %q is not a policy outcome", p.Event.Status)
	}
	if p.Event.AttemptIndex < 0 || p.Event.AttemptIndex >= policy.MaxAttemptsPerSeat {
		return invalidf("event.attemptIndex %d: want 0..%d", p.Event.AttemptIndex, policy.MaxAttemptsPerSeat-1)
	}
	return nil
}
