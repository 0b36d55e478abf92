package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// handle applies one delivery of the run's reports stream: a control input,
// or a worker report that becomes claim, finish or audit. Every report is
// recorded with its ReportSeq (the resume point), except the explanatory
// audit that precedes a finish built from an unusable receipt, which must
// not let a resumed session skip that finish.
func (d *driver) handle(ctx context.Context, rd events.ReportDelivery) error {
	if rd.Err != nil {
		if c, err := events.DecodeControl(rd.Raw); err == nil {
			return d.control(ctx, c)
		}
		return d.audit(ctx, events.RunLane, events.Audit{Reason: events.AuditMalformedReport, ReportSeq: rd.Seq, Detail: rd.Err.Error()})
	}
	rep := rd.Report
	if rep.Run != d.run || rep.Lane >= len(d.r.Lanes) {
		return d.audit(ctx, events.RunLane, reportAudit(events.AuditStaleReport, rd, "the run has no such lane"))
	}
	i := rep.Lane
	l := d.r.Lanes[i]
	switch {
	case rep.Kind == events.ReportRedelivered:
		return d.audit(ctx, i, reportAudit(events.AuditRedeliveredJob, rd, redeliveredDetail(rep)))
	case rep.Kind == events.ReportRefused:
		return d.audit(ctx, i, reportAudit(events.AuditRefusedJob, rd,
			fmt.Sprintf("worker %s refused a job for execution %s (%s): it does not match what the engine prepared and recorded; nothing ran", rep.WorkerID, rep.ExecutionID, rep.Refusal)))
	case l.State.Final():
		reason := events.AuditLateReport
		if d.afterCancel(l, rd) {
			reason = events.AuditReportAfterCancel
		}
		return d.audit(ctx, i, reportAudit(reason, rd, d.lateDetail(l, rep)))
	case l.Dispatch == nil || l.Dispatch.ExecutionID != rep.ExecutionID:
		return d.audit(ctx, i, reportAudit(events.AuditStaleReport, rd, "the lane is not running this execution"))
	}
	if why := foreignReport(l.Dispatch.Route, l.Claim, rd); why != "" {
		return d.audit(ctx, i, reportAudit(events.AuditForeignReport, rd, why))
	}
	active := l.State == machines.StateLaunching || l.State == machines.StateRunning
	switch rep.Kind {
	case events.ReportClaimed:
		if l.State != machines.StateLaunching {
			return d.audit(ctx, i, reportAudit(events.AuditDuplicateReport, rd, "execution already claimed or ended"))
		}
		why, err := d.foreignClaim(ctx, l.Dispatch.Route, rd)
		if err != nil {
			return err
		}
		if why != "" {
			return d.audit(ctx, i, reportAudit(events.AuditForeignReport, rd, why))
		}
		return d.appendEvent(ctx, i, events.Claim{ExecutionID: rep.ExecutionID, WorkerID: rep.WorkerID, Lease: *rep.Lease, ReportSeq: rd.Seq, Reporter: rd.Reporter})
	case events.ReportFinished:
		if !active {
			return d.audit(ctx, i, reportAudit(events.AuditDuplicateReport, rd, "execution already ended"))
		}
		return d.finish(ctx, i, rd)
	case events.ReportAbandoned:
		if !active {
			return d.audit(ctx, i, reportAudit(events.AuditDuplicateReport, rd, "execution already ended"))
		}
		why, err := d.foreignAbandon(ctx, l.Claim, rd)
		if err != nil {
			return err
		}
		if why != "" {
			return d.audit(ctx, i, reportAudit(events.AuditForeignReport, rd, why))
		}
		return d.appendEvent(ctx, i, abandoned(l, rep.WorkerID, rd.Seq))
	}
	return d.audit(ctx, i, reportAudit(events.AuditMalformedReport, rd, "unknown report kind"))
}

// foreignReport says why the report rd, on an execution of route the
// lane is running (claimed as claim, nil before), comes from a connection
// that may not make it, or "" when it may. The reporter is the connection
// the engine's API proxy named (events.ReporterHeader), which a client
// cannot choose:
//
//   - the engine's own connection (no reporter) may report anything;
//   - a native execution's claim and outcome are the parent role's;
//   - an external execution's are the worker role's, and once the claim
//     is recorded, only the connection that claimed it reports it
//     finished. An abandon may come from another worker: a worker that
//     finds a crashed worker's lease stale abandons the execution and
//     says so (activities/worker_claim.go).
func foreignReport(route policy.Route, claim *events.Claim, rd events.ReportDelivery) string {
	if rd.Reporter == "" {
		return ""
	}
	role, ok := events.ReporterRole(rd.Reporter)
	if !ok {
		return fmt.Sprintf("the report's publisher %q is no role's connection", rd.Reporter)
	}
	if route == policy.RouteNative {
		if role != events.RoleParent {
			return fmt.Sprintf("a native execution's claim and outcome are the parent's word; this report came from a %s connection", role)
		}
		return ""
	}
	if role != events.RoleWorker {
		return fmt.Sprintf("an external execution is reported by the worker that runs it; this report came from a %s connection", role)
	}
	if rd.Report.Kind == events.ReportFinished && claim != nil && claim.Reporter != "" && claim.Reporter != rd.Reporter {
		return "the execution was claimed by another worker connection; only it reports the outcome"
	}
	return ""
}

// claimWriter is a Claims that knows which connection wrote a claim
// (events.JetStreamClaims).
type claimWriter interface {
	Writer(ctx context.Context, executionID string) (string, events.Lease, error)
}

// foreignAbandon says why an abandon rd from another connection than the
// claimer's is refused, or "" when it is the claimer's, or when the
// claims bucket shows the lease abandoned (the engine's proxy lets only
// the claimer abandon it, or another connection once the lease is stale;
// a worker that finds it abandoned reports so, whoever abandoned it).
// Claims that do not know their writer (in memory, no roles) accept it.
func (d *driver) foreignAbandon(ctx context.Context, claim *events.Claim, rd events.ReportDelivery) (string, error) {
	if rd.Reporter == "" || claim == nil || claim.Reporter == "" || claim.Reporter == rd.Reporter {
		return "", nil
	}
	cw, ok := d.e.cfg.Claims.(claimWriter)
	if !ok {
		return "", nil
	}
	_, lease, err := cw.Writer(ctx, rd.Report.ExecutionID)
	if errors.Is(err, events.ErrNotFound) {
		return "the execution has no claim to abandon", nil
	}
	if err != nil {
		return "", fmt.Errorf("check the abandon of %s: %w", rd.Report.ExecutionID, err)
	}
	if lease.State != events.LeaseAbandoned {
		return "another worker connection claimed the execution, and the claims bucket does not show its lease abandoned", nil
	}
	return "", nil
}

// foreignClaim says why a worker connection's claimed report rd is
// refused, or "" when that connection holds the execution's claim in the
// claims bucket (the engine's API proxy names a claim's writer and lets
// no other connection change a live one). Without that check the first
// worker connection to report "claimed" would become the lane's claimer,
// and the worker really running the attempt could no longer report its
// outcome. The engine's own reports, a parent's native claims and Claims
// that do not know their writer (in memory, no roles) are accepted.
func (d *driver) foreignClaim(ctx context.Context, route policy.Route, rd events.ReportDelivery) (string, error) {
	if rd.Reporter == "" || route == policy.RouteNative {
		return "", nil
	}
	cw, ok := d.e.cfg.Claims.(claimWriter)
	if !ok {
		return "", nil
	}
	writer, lease, err := cw.Writer(ctx, rd.Report.ExecutionID)
	if errors.Is(err, events.ErrNotFound) {
		return "the execution has no claim in the claims bucket; a worker claims it there before reporting the claim", nil
	}
	if err != nil {
		return "", fmt.Errorf("check the claim of %s: %w", rd.Report.ExecutionID, err)
	}
	// Released is fine: a quick attempt may end before the engine reads
	// its claimed report. Abandoned is not: the lease is no longer held.
	if writer != rd.Reporter || lease.State == events.LeaseAbandoned || lease.WorkerID != rd.Report.WorkerID {
		return "the claims bucket's claim of the execution is not this connection's lease", nil
	}
	return "", nil
}

// finish records the end of lane i's execution from a finished report.
func (d *driver) finish(ctx context.Context, i int, rd events.ReportDelivery) error {
	l := d.r.Lanes[i]
	rep := rd.Report
	idx := l.Dispatch.AttemptIndex
	if l.Dispatch.Route == policy.RouteNative {
		if rep.Host == nil {
			return d.audit(ctx, i, reportAudit(events.AuditMalformedReport, rd, "a native execution is finished only by explicit host metadata"))
		}
		h := *rep.Host
		ev := policy.Event{AttemptIndex: idx, Status: h.Status, ProcessStarted: h.ProcessStarted}
		return d.appendEvent(ctx, i, events.Finish{ExecutionID: rep.ExecutionID, WorkerID: rep.WorkerID, Host: &h, Event: ev, ReportSeq: rd.Seq})
	}
	if rep.Host != nil {
		return d.audit(ctx, i, reportAudit(events.AuditMalformedReport, rd, "an external execution is finished only by its runner receipt"))
	}
	fin, problem := d.receiptFinish(l, rep)
	if problem != "" {
		// The attempt ended but its receipt proves nothing usable. It may
		// have started, so it is never run again: explain, then finish it
		// failed with processStarted unknown.
		d.log.Warn("unusable receipt", "lane", i, "execution", rep.ExecutionID, "problem", problem)
		if err := d.audit(ctx, i, events.Audit{Reason: events.AuditMalformedReport, ExecutionID: rep.ExecutionID, Report: &rep, Detail: problem}); err != nil {
			return err
		}
	}
	fin.ReportSeq = rd.Seq
	return d.appendEvent(ctx, i, fin)
}

// recordableProbe is the longest envelope time and report sequence a finish
// may be recorded with, so that a finish that fits with them fits always.
var recordableProbe = struct {
	at  time.Time
	seq uint64
}{time.Date(2000, 1, 1, 0, 0, 0, 111111111, time.UTC), math.MaxUint64}

// receiptFinish is readReceipt's finish, made sure to be recordable: a
// receipt can decode (up to policy.MaxReceiptBytes) and still make a finish
// over events.MaxEventBytes, or one events refuses. Appending it would fail
// on every retry and the run would never move on, so such a receipt is
// unusable too: the finish is recorded without it.
func (d *driver) receiptFinish(l machines.LaneRecord, rep events.Report) (events.Finish, string) {
	fin, problem := d.readReceipt(l, rep)
	if fin.Receipt == nil {
		return fin, problem
	}
	probe := fin
	probe.ReportSeq = recordableProbe.seq
	_, err := events.Encode(events.NewEnvelope(d.run, l.Index, recordableProbe.at, probe))
	if err == nil {
		return fin, problem
	}
	why := fmt.Sprintf("receipt %s cannot be recorded in a finish: %v", rep.ReceiptPath, err)
	if problem != "" {
		why = problem + "; " + why
	}
	return events.Finish{ExecutionID: rep.ExecutionID, WorkerID: rep.WorkerID, Abandoned: true,
		Event: policy.Event{AttemptIndex: l.Dispatch.AttemptIndex, Status: policy.OutcomeFailed}}, why
}

// readReceipt reads and verifies the receipt at the job's receipt path
// and normalizes it. When that fails it returns the finish to record anyway
// (failed, processStarted unknown, with the receipt when it decoded) and
// the reason.
func (d *driver) readReceipt(l machines.LaneRecord, rep events.Report) (events.Finish, string) {
	idx := l.Dispatch.AttemptIndex
	path := l.Dispatch.Paths.Receipt
	fin := events.Finish{ExecutionID: rep.ExecutionID, WorkerID: rep.WorkerID}
	unusable := func(format string, args ...any) (events.Finish, string) {
		fin.Event = policy.Event{AttemptIndex: idx, Status: policy.OutcomeFailed}
		if fin.Receipt == nil {
			fin.ReceiptDigest, fin.Abandoned = "", true
		}
		return fin, fmt.Sprintf(format, args...)
	}
	if rep.ReceiptPath != path {
		return unusable("report names receipt %s; the job's receipt is %s", rep.ReceiptPath, path)
	}
	data, err := readLimited(path, policy.MaxReceiptBytes, receiptLimit)
	if err != nil {
		return unusable("read receipt: %v", err)
	}
	digest := events.Digest(data)
	if digest != rep.ReceiptDigest {
		return unusable("receipt digest %s differs from the reported %s", digest, rep.ReceiptDigest)
	}
	receipt, err := policy.DecodeReceipt(data)
	if err != nil {
		return unusable("decode receipt: %v", err)
	}
	fin.ReceiptDigest, fin.Receipt = digest, receipt
	c := d.r.Created
	ev, err := policy.Normalize(policy.NormalizeInput{
		Parent: c.Parent, Attempt: l.Policy.Attempts[idx], AttemptIndex: idx,
		Mode: c.Access, Contract: c.Options.Contract, ReceiptPath: path, Receipt: data,
	})
	if why := recheckDelivered(l, receipt); why != "" {
		// A receipt that claims a delivered response but fails the
		// success conditions is recorded as malformed-output with the
		// reason: failed, processStarted unknown, never run again.
		if err != nil {
			why += "; normalize receipt: " + err.Error()
		}
		fin.Malformed = providers.CapText(why, events.MaxMalformedReason)
		fin.Event = malformedEvent(idx)
		return fin, ""
	}
	if err != nil {
		return unusable("normalize receipt: %v", err)
	}
	fin.Event = ev
	if rep.Stall != nil {
		// A stall is the runner's timed-out receipt whose error names
		// response_stalled; on any other receipt the report contradicts
		// its own evidence, and the stall (which could exclude a provider
		// for the rest of the run) is not recorded.
		if receipt.Status != policy.StatusTimedOut {
			return fin, fmt.Sprintf("the report carries a response_stalled stall but its receipt is %s; the stall is not recorded", receipt.Status)
		}
		st := *rep.Stall
		fin.Stall = &st
	}
	return fin, ""
}

// recheckDelivered re-checks a receipt that claims a delivered response
// (complete or needs-parent-operation) before the engine records a finish
// from it: the success conditions and the argv's model pin
// (providers.RecheckDelivered), with the output file at the job's output
// path, which must be a non-empty regular file. It returns "" for every
// other status, for another descriptor's receipt (unusable, see
// readReceipt) and for a receipt that passes.
func recheckDelivered(l machines.LaneRecord, rc *policy.Receipt) string {
	att := l.Policy.Attempts[l.Dispatch.AttemptIndex].Attempt
	if rc.Status != policy.StatusComplete && rc.Status != policy.StatusNeedsParentOperation {
		return ""
	}
	if rc.Provider != att.Provider || rc.Model != att.Model || rc.Effort != att.Effort {
		// Another attempt's receipt is not this attempt's evidence at
		// all: normalize's identity check makes it unusable.
		return ""
	}
	return providers.RecheckDelivered(rc, att, nonEmptyFile(l.Dispatch.Paths.Output))
}

// nonEmptyFile reports whether path is a non-empty regular file, not
// following a final symlink (the runner creates its output exclusively).
func nonEmptyFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// malformedEvent is the lane event of a delivered receipt the re-check
// refused: failed with processStarted unknown, like an unusable receipt.
// The receipt claims a final success, which is never replayed as a
// failure, and it proves nothing the fallback policy could act on.
func malformedEvent(idx int) policy.Event {
	return policy.Event{AttemptIndex: idx, Status: policy.OutcomeFailed}
}

// lateDetail explains a report for a final lane. For the end of the lane's
// own last execution (a cancelled attempt's receipt) it names what the
// verified receipt shows, so the run report can say how the attempt ended.
func (d *driver) lateDetail(l machines.LaneRecord, rep events.Report) string {
	detail := "lane is " + string(l.State)
	if l.Dispatch == nil || l.Dispatch.ExecutionID != rep.ExecutionID {
		return detail
	}
	switch {
	case rep.Kind == events.ReportAbandoned:
		return "the worker reported it abandoned"
	case rep.Kind != events.ReportFinished:
		return detail
	case rep.Host != nil:
		return "the host reported " + string(rep.Host.Status)
	case rep.ReceiptPath != l.Dispatch.Paths.Receipt:
		return detail
	}
	data, err := readLimited(rep.ReceiptPath, policy.MaxReceiptBytes, receiptLimit)
	if err != nil || events.Digest(data) != rep.ReceiptDigest {
		return detail + "; its receipt could not be verified"
	}
	rc, err := policy.DecodeReceipt(data)
	if err != nil {
		return detail + "; its receipt does not decode"
	}
	return "the worker reported receipt " + receiptCause(rc)
}

// afterCancel reports whether rd is the report a cancel leads to: lane l
// was cancelled while its current execution had not ended (no finish is
// recorded for it), rd names that execution, and it comes from a
// connection that may report it. Any other report for a final lane is
// late.
func (d *driver) afterCancel(l machines.LaneRecord, rd events.ReportDelivery) bool {
	if l.State != machines.StateCancelled || l.Dispatch == nil || l.Dispatch.ExecutionID != rd.Report.ExecutionID {
		return false
	}
	return !d.finished[l.Dispatch.ExecutionID] && foreignReport(l.Dispatch.Route, l.Claim, rd) == ""
}

// abandoned is the finish of an execution whose worker lease went stale. It
// has no receipt and no settled child, so under the seed's mapping it is
// failed ("a started failure with no settled child evidence"), with
// processStarted unknown: it never advances and is never run again, and a
// writer's worktree is kept for the parent to inspect.
func abandoned(l machines.LaneRecord, worker string, seq uint64) events.Finish {
	return events.Finish{
		ExecutionID: l.Dispatch.ExecutionID, WorkerID: worker, Abandoned: true, ReportSeq: seq,
		Event: policy.Event{AttemptIndex: l.Dispatch.AttemptIndex, Status: policy.OutcomeFailed},
	}
}

// redeliveredDetail explains a redelivered report.
func redeliveredDetail(rep events.Report) string {
	what := fmt.Sprintf("job (jobs-stream sequence %d) delivered again (delivery %d)", rep.JobSeq, rep.Delivery)
	if rep.Delivery == 1 {
		// The first delivery of a second copy: the job was published again
		// (a restarted engine re-publishes launching executions).
		what = fmt.Sprintf("job published again (jobs-stream sequence %d)", rep.JobSeq)
	}
	return fmt.Sprintf("%s after its execution ended; removed by %s without starting anything", what, rep.WorkerID)
}

// reportAudit is the audit of a report that changes nothing.
func reportAudit(reason events.AuditReason, rd events.ReportDelivery, detail string) events.Audit {
	rep := rd.Report
	return events.Audit{Reason: reason, ExecutionID: rep.ExecutionID, ReportSeq: rd.Seq, Report: &rep, Detail: detail}
}

// junkReasons are the audits of reports that change nothing and that any
// role-holder can produce at will (a hostile worker flooding a run).
var junkReasons = map[events.AuditReason]bool{
	events.AuditMalformedReport: true, events.AuditStaleReport: true, events.AuditDuplicateReport: true,
	events.AuditLateReport: true, events.AuditReportAfterCancel: true, events.AuditForeignReport: true,
}

// junkRecorded is how many junk reports of one reason a run's session
// records one by one; after them, only the count is recorded, each time
// it reaches a power of two, so a flood of n adds about log2(n) events to
// the run's permanent log.
const junkRecorded = 8

// audit records a, on lane i or the run subject; junk beyond
// junkRecorded per reason is counted instead (junkReasons).
func (d *driver) audit(ctx context.Context, lane int, a events.Audit) error {
	if junkReasons[a.Reason] {
		if d.junk == nil {
			d.junk = map[events.AuditReason]int{}
		}
		d.junk[a.Reason]++
		n := d.junk[a.Reason]
		if n > junkRecorded {
			if n&(n-1) != 0 {
				d.log.Debug("junk report counted, not recorded", "lane", lane, "reason", a.Reason, "count", n)
				return nil
			}
			a.Detail = fmt.Sprintf("%d %s reports on this run so far (after the first %d, only the count is recorded, at every power of two); the latest: %s",
				n, a.Reason, junkRecorded, a.Detail)
		}
	}
	d.log.Info("audit", "lane", lane, "reason", a.Reason, "execution", a.ExecutionID, "detail", a.Detail)
	if err := d.appendEvent(ctx, lane, a); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}
