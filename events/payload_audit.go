package events

// AuditReason says why a report or job was recorded without changing state.
type AuditReason string

// Audit reasons.
const (
	// AuditDuplicateReport: the report repeats one already recorded.
	AuditDuplicateReport AuditReason = "duplicate-report"
	// AuditLateReport: the report arrived after its lane became final or
	// moved past the execution, and it is not the report a cancel leads
	// to (AuditReportAfterCancel). Logs written before that reason
	// existed record the cancelled attempt's report as late-report too.
	AuditLateReport AuditReason = "late-report"
	// AuditReportAfterCancel: the report is for the execution a cancel
	// stopped (the cancelled lane's own current execution), arriving after
	// the cancel as expected: the worker stops the attempt and reports how
	// it ended; nothing changed.
	AuditReportAfterCancel AuditReason = "report-after-cancel"
	// AuditStaleReport: the report names an execution the lane is not
	// running (an older attempt, or a claim after an abandon).
	AuditStaleReport AuditReason = "stale-report"
	// AuditRedeliveredJob: a job was delivered again after its attempt was
	// claimed or finished, and was not executed again.
	AuditRedeliveredJob AuditReason = "redelivered-job"
	// AuditRefusedJob: a worker refused a job that did not match the
	// execution's recorded launch (Report.Refusal says how); nothing ran.
	AuditRefusedJob AuditReason = "refused-job"
	// AuditMalformedReport: bytes on a report subject failed to decode.
	AuditMalformedReport AuditReason = "malformed-report"
	// AuditUnknownQuotaOverride: the eligibility gate let an attempt
	// launch only because the run explicitly accepts its provider's
	// UNKNOWN quota or unverified eligibility (RunOptions.AllowUnknownQuota);
	// recorded on the lane just before that launch, Detail saying which
	// attempt and which code was overridden.
	AuditUnknownQuotaOverride AuditReason = "unknown-quota-override"
	// AuditStaleSheet: the run's model sheet pins versioned Claude IDs of a
	// rolling family, which the run uses as their family alias (the seed's
	// read-time normalization); recorded once per run on the run subject,
	// Detail being the stale-sheet notice.
	AuditStaleSheet AuditReason = "stale-sheet"
	// AuditForeignReport: the report came from a connection that may not
	// report that execution's outcome (a native execution's is the
	// parent role's, an external one's the worker role's, and a finish
	// the claiming connection's); nothing changed.
	AuditForeignReport AuditReason = "foreign-report"
)

// Audit records a report or job that changes nothing (lane-level, or
// run-level when no lane applies), so every delivery stays explained.
type Audit struct {
	Reason AuditReason `json:"reason"`
	// ExecutionID is the execution concerned, when known.
	ExecutionID string `json:"executionId,omitempty"`
	// ReportSeq is the reports-stream sequence of the report, when one.
	ReportSeq uint64 `json:"reportSeq,omitempty"`
	// Report is the report as received, when it decoded.
	Report *Report `json:"report,omitempty"`
	// Detail is a human explanation (for malformed reports, the decode
	// error).
	Detail string `json:"detail,omitempty"`
}

// EventType returns TypeAudit.
func (Audit) EventType() Type { return TypeAudit }

func (p Audit) validate() error {
	switch p.Reason {
	case AuditDuplicateReport, AuditLateReport, AuditReportAfterCancel, AuditStaleReport, AuditRedeliveredJob, AuditRefusedJob, AuditMalformedReport, AuditUnknownQuotaOverride, AuditStaleSheet, AuditForeignReport:
	default:
		return invalidf("reason %q is not an audit reason", p.Reason)
	}
	if p.ExecutionID != "" {
		if err := ValidateExecutionID(p.ExecutionID); err != nil {
			return err
		}
	}
	if p.Report != nil {
		return p.Report.Validate()
	}
	return nil
}
