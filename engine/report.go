package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// RunReport is the run report of the seed's parent loop (step 6): per lane
// the configured primary, every attempted or exhaustion-skipped descriptor
// with its observed cause, and the successful descriptor; for the run the
// provider diversity actually achieved. Every cause is what a receipt, the
// host metadata or the log records, never an inference about accounts. A
// recovered success supersedes earlier attempt errors: the lane reports the
// descriptor that delivered, and the earlier attempts stay listed as what
// they were.
type RunReport struct {
	Run         string        `json:"run"`
	Role        string        `json:"role"`
	Parent      policy.Parent `json:"parent"`
	Access      policy.Access `json:"access"`
	SheetDigest string        `json:"sheetDigest"`
	Final       bool          `json:"final"`
	// Cancelled: the run is final and was cancelled as a whole (status
	// says "cancelled" for it).
	Cancelled bool `json:"cancelled,omitempty"`
	// StallWatchdog is whether the run's attempts were watched for
	// stalls, as run-created records it: on (also for a run recorded
	// before the setting existed) or off (run --stall-timeout off).
	StallWatchdog events.StallWatchdog `json:"stallWatchdog"`
	// Summary is one line: lane counts by final state and the diversity.
	Summary   string       `json:"summary"`
	Lanes     []LaneReport `json:"lanes"`
	Diversity Diversity    `json:"diversity"`
}

// LaneReport is one lane of a RunReport.
type LaneReport struct {
	Lane   int            `json:"lane"`
	LaneID string         `json:"laneId"`
	State  machines.State `json:"state"`
	// Reason is the stop, denial or cancel reason of a final lane.
	Reason string `json:"reason,omitempty"`
	// WaitingFor is set while the lane is not final.
	WaitingFor WaitKind `json:"waitingFor,omitempty"`
	// Primary is the configured primary descriptor (the chain's first).
	Primary string `json:"primary"`
	// Success is the descriptor that delivered, for a complete lane.
	Success string `json:"success,omitempty"`
	// Attempts lists every execution and every attempt that never ran
	// (skipped for an exhausted group, excluded before launch, or where an
	// unauthorized stop stopped), in order.
	Attempts []AttemptReport `json:"attempts"`
	// Handoffs are the commits the lane handed to the parent, in order;
	// a stopped lane with one is shown as handed off (HandedOffState),
	// its State and Reason stay as recorded.
	Handoffs []Handoff `json:"handoffs,omitempty"`
}

// AttemptReport is one execution of a lane, or one attempt that never ran:
// skipped because its provider group was already exhausted, excluded by
// the eligibility gate, or blocked by the saved policy (the unauthorized
// stop's attempt).
type AttemptReport struct {
	AttemptIndex int             `json:"attemptIndex"`
	Descriptor   string          `json:"descriptor"`
	Provider     policy.Provider `json:"provider"` // the exhaustion group.
	Route        policy.Route    `json:"route,omitempty"`
	// Skipped marks an attempt that never ran: passed over because
	// Provider was exhausted, excluded before launch (Excluded), or
	// blocked (Code unauthorized). Code and Cause say which.
	Skipped bool `json:"skipped,omitempty"`
	// Excluded marks an attempt the eligibility gate kept from launching.
	Excluded bool `json:"excluded,omitempty"`
	// Code is the reason code of an attempt that never ran: an exclusion
	// code (execution_policy_blocked, quota_unknown, …), group-exhausted,
	// or unauthorized.
	Code string `json:"code,omitempty"`
	// Until is when an exclusion for a known exhaustion ends.
	Until *time.Time `json:"until,omitempty"`
	// ExclusionRule is the rule the lane's fallback applied to an
	// exclusion: fallback-moves-on or fallback-stops; empty for an
	// exclusion recorded before the rule existed (the lane moved on).
	// Cause says it in words.
	ExclusionRule policy.ExclusionRule `json:"exclusionRule,omitempty"`
	// Override says the attempt launched only on the run's explicit
	// unknown-quota override (run --allow-unknown-quota), and what it
	// overrode.
	Override    string `json:"override,omitempty"`
	ExecutionID string `json:"executionId,omitempty"`
	// Outcome is the normalized outcome; empty while the attempt runs or
	// when it never ended (a cancelled lane).
	Outcome        policy.Outcome       `json:"outcome,omitempty"`
	ReceiptStatus  policy.ReceiptStatus `json:"receiptStatus,omitempty"`
	ProcessStarted *bool                `json:"processStarted,omitempty"`
	// Cause is the observed cause, from the receipt's status and error,
	// the host metadata, or the log.
	Cause string `json:"cause,omitempty"`
	// Stall is the stall metadata of an attempt that ended
	// response_stalled (its finish records it); Cause then names it.
	Stall *events.Stall `json:"stall,omitempty"`
	// Alias marks an attempt of an alias (inherit-parent): it ran on the
	// parent's own provider, whatever the other lanes use.
	Alias bool `json:"alias,omitempty"`
	// TimedOutBy says what ended a timed-out attempt: TimedOutByStall
	// (the stall watchdog; Stall is set) or TimedOutByDeadline (the run's
	// explicit --timeout). Both normalize to deadline-exceeded; empty for
	// any other receipt status.
	TimedOutBy string `json:"timedOutBy,omitempty"`
	// DurationMs is how long the attempt ran: the receipt's elapsedMs, or
	// for an attempt without a receipt (native, abandoned) the time from
	// its claim (else its launch) to its finish as the log records them.
	// Unset while it runs or when it never ended.
	DurationMs *int64 `json:"durationMs,omitempty"`
	// Usage is the token usage the receipt reports; unset when the receipt
	// reports none (or there is no receipt).
	Usage *policy.Usage `json:"usage,omitempty"`
	// Fidelity is what the attempt's receipt could and could not verify
	// (the model's proof, the containment, the usage); nil without a
	// receipt.
	Fidelity *Fidelity `json:"fidelity,omitempty"`
	// Containment is the attempt's containment class and what verified it,
	// from its receipt ("READ_ONLY_NO_NETWORK verified by the kernel
	// (Landlock ABI 7)"); "" when the receipt records none.
	Containment string `json:"containment,omitempty"`
	// Output is the execution's output file, named only once the attempt
	// wrote something there (see Engine.Report); Receipt and Worktree are
	// its other files. A failed writer's worktree and every receipt are
	// kept untouched.
	Output   string `json:"output,omitempty"`
	Receipt  string `json:"receipt,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Artifact is a read-only native attempt's distinct output artifact,
	// named only once its subagent wrote something there.
	Artifact string `json:"artifact,omitempty"`
	// WorktreeBase is the commit a writer's fresh worktree started from
	// and why; StartedFrom says it in words (the reviewed state the
	// parent's clear verdict named, or the checkout's HEAD, and for a
	// fallback writer whose verdict named none, that it named none).
	WorktreeBase *events.WorktreeBase `json:"worktreeBase,omitempty"`
	StartedFrom  string               `json:"startedFrom,omitempty"`
	// Inspection is the parent's verdict on a started writer.
	Inspection *policy.Inspection `json:"inspection,omitempty"`
	// Operation describes the parent operation a handoff asked for and its
	// result.
	Operation string `json:"operation,omitempty"`
}

// Diversity is the provider diversity a run achieved.
type Diversity struct {
	// Providers are the distinct providers of the successful descriptors,
	// in lane order.
	Providers []policy.Provider `json:"providers"`
	// Attempted are the distinct providers that ran at least one
	// execution, in lane order, then attempt order.
	Attempted []policy.Provider `json:"attempted"`
	Complete  int               `json:"complete"` // complete lanes.
	Lanes     int               `json:"lanes"`
	// AliasReduced says, per complete lane that delivered through an
	// alias on a provider another complete lane also delivered on, that
	// the alias reduced the run's provider diversity.
	AliasReduced []string `json:"aliasReduced,omitempty"`
}

// Report builds run's report from its log; it works for a run in progress
// too (Final false).
func (e *Engine) Report(ctx context.Context, run string) (RunReport, error) {
	r, envs, err := e.load(ctx, run)
	if err != nil {
		return RunReport{}, err
	}
	return withOutputs(buildReport(r, envs)), nil
}

// withOutputs drops the output path of every attempt that wrote nothing
// there (no file, or an empty one): the report names only outputs a reader
// can open.
func withOutputs(rep RunReport) RunReport {
	for i := range rep.Lanes {
		for j := range rep.Lanes[i].Attempts {
			a := &rep.Lanes[i].Attempts[j]
			a.Output, a.Artifact = written(a.Output), written(a.Artifact)
		}
	}
	return rep
}

// written is path when it names a non-empty regular file, else "".
func written(path string) string {
	if path == "" {
		return ""
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return ""
	}
	return path
}

// buildReport walks the log in order, so each skip is explained by the
// group-exhausted event recorded before the decision that skipped it.
func buildReport(r *machines.Run, envs []events.Envelope) RunReport {
	b := newReportBuilder(r)
	for _, env := range envs {
		b.apply(env)
	}
	return b.finish(laneHandoffs(r, envs))
}

// reportBuilder folds a run's log into its report, one method per payload
// that changes an attempt, as the machine's effects are.
type reportBuilder struct {
	r         *machines.Run
	rep       RunReport
	next      []int                                     // first attempt index not yet reported, per lane
	exhausted map[policy.Provider]events.GroupExhausted // first exhaustion of each group
	claimed   map[string]bool                           // executions a worker claimed
	cleared   map[int]bool                              // lanes whose latest verdict since their latest launch is clear
	started   map[string]time.Time                      // launch, then claim, time of each execution
	excl      map[int][]events.Exclude                  // each lane's exclusions, in order
	fins      map[int]*events.Finish                    // each lane's last finish
	override  map[int]string                            // an override audit awaiting its lane's launch
}

func newReportBuilder(r *machines.Run) *reportBuilder {
	c := r.Created
	b := &reportBuilder{r: r,
		rep: RunReport{Run: r.ID, Role: c.Role, Parent: c.Parent, Access: c.Access, SheetDigest: c.SheetDigest,
			Final: r.Closed != nil, Cancelled: r.Closed != nil && r.Cancel != nil, Lanes: make([]LaneReport, len(r.Lanes)),
			StallWatchdog: events.StallWatchdogOn},
		next: make([]int, len(r.Lanes)), exhausted: map[policy.Provider]events.GroupExhausted{},
		claimed: map[string]bool{}, cleared: map[int]bool{}, started: map[string]time.Time{}, excl: map[int][]events.Exclude{}, fins: map[int]*events.Finish{}, override: map[int]string{}}
	if !c.Options.StallWatchdog.Watched() {
		b.rep.StallWatchdog = events.StallWatchdogOff
	}
	for i, l := range r.Lanes {
		b.rep.Lanes[i] = LaneReport{Lane: i, LaneID: l.Policy.ID, Primary: l.Policy.Attempts[0].Descriptor, Attempts: []AttemptReport{}}
	}
	return b
}

// apply folds one event.
func (b *reportBuilder) apply(env events.Envelope) {
	if g, ok := env.Payload.(events.GroupExhausted); ok {
		if _, seen := b.exhausted[g.Provider]; !seen {
			b.exhausted[g.Provider] = g
		}
	}
	i := env.Lane
	if i == events.RunLane {
		return
	}
	switch p := env.Payload.(type) {
	case events.Launch:
		b.launch(i, p, env.Time)
	case events.Continue:
		b.launch(i, events.Launch(p), env.Time)
	case events.Finish:
		b.fins[i] = &p
		b.finished(i, p, env.Time)
	case events.Verdict:
		b.verdict(i, p)
	case events.RequestOperation:
		b.requestOperation(i, p)
	case events.OperationDone:
		b.operationDone(i, p)
	case events.Stop:
		b.stop(i, p)
	case events.Claim:
		b.claimed[p.ExecutionID] = true
		b.started[p.ExecutionID] = env.Time
	case events.Cancel:
		b.cancel(i, p)
	case events.Audit:
		b.audit(i, p)
	case events.Exclude:
		b.exclude(i, p)
	}
}

// current is lane i's latest attempt that ran (not a skipped one), or nil.
func (b *reportBuilder) current(i int) *AttemptReport {
	a := b.rep.Lanes[i].Attempts
	for j := len(a) - 1; j >= 0; j-- {
		if !a[j].Skipped {
			return &a[j]
		}
	}
	return nil
}

// skipTo reports lane i's attempts before upTo that never ran as skipped,
// with the exhaustion that skipped them when there was one.
func (b *reportBuilder) skipTo(i, upTo int) {
	for k := b.next[i]; k < upTo && k < len(b.r.Lanes[i].Policy.Attempts); k++ {
		ap := b.r.Lanes[i].Policy.Attempts[k]
		ar := AttemptReport{AttemptIndex: k, Descriptor: ap.Descriptor, Provider: ap.ExhaustionGroup, Route: ap.Route, Skipped: true}
		if g, ok := b.exhausted[ap.ExhaustionGroup]; ok {
			ar.Code = CodeGroupExhausted
			ar.Cause = fmt.Sprintf("skipped: %s: %s usage exhausted (lane %d, execution %s)", CodeGroupExhausted, g.Provider, g.FromLane, g.ExecutionID)
		} else {
			ar.Cause = "skipped"
		}
		b.rep.Lanes[i].Attempts = append(b.rep.Lanes[i].Attempts, ar)
	}
	b.next[i] = max(b.next[i], upTo)
}

// launch appends a launch or continue of lane i, after the attempts it
// skipped.
func (b *reportBuilder) launch(i int, p events.Launch, at time.Time) {
	b.skipTo(i, p.AttemptIndex)
	ap := b.r.Lanes[i].Policy.Attempts[p.AttemptIndex]
	b.rep.Lanes[i].Attempts = append(b.rep.Lanes[i].Attempts, AttemptReport{
		AttemptIndex: p.AttemptIndex, Descriptor: p.Descriptor, Provider: ap.ExhaustionGroup, Route: p.Route,
		ExecutionID: p.ExecutionID, Output: p.Paths.Output, Receipt: p.Paths.Receipt, Worktree: p.Paths.Worktree, Artifact: p.Paths.Artifact,
		Override: b.override[i], WorktreeBase: p.WorktreeBase, StartedFrom: startedFrom(p.WorktreeBase, b.cleared[i]),
	})
	delete(b.override, i)
	delete(b.cleared, i)
	b.next[i] = max(b.next[i], p.AttemptIndex+1)
	b.started[p.ExecutionID] = at
}

// finished describes the attempt a finish ends; without a receipt's elapsed
// time its duration is from its claim (else launch) to the finish.
func (b *reportBuilder) finished(i int, p events.Finish, at time.Time) {
	a := b.current(i)
	if a == nil || a.ExecutionID != p.ExecutionID {
		return
	}
	describeFinish(a, p)
	if a.DurationMs == nil {
		if t, ok := b.started[p.ExecutionID]; ok && !at.Before(t) {
			ms := at.Sub(t).Milliseconds()
			a.DurationMs = &ms
		}
	}
}

func (b *reportBuilder) verdict(i int, p events.Verdict) {
	if a := b.current(i); a != nil {
		a.Inspection = &policy.Inspection{State: string(p.State), EvidenceRef: p.EvidenceRef}
	}
	b.cleared[i] = p.State == events.VerdictClear
}

// startedFrom says where a writer's worktree started: the reviewed state a
// clear verdict named, or the checkout's HEAD; afterClear marks a fallback
// writer launched after a clear verdict, whose verdict named no reviewed
// state when base is the checkout's HEAD.
func startedFrom(base *events.WorktreeBase, afterClear bool) string {
	switch {
	case base == nil:
		return ""
	case base.Source == events.BaseReviewed:
		return fmt.Sprintf("worktree from the reviewed state %s (commit %s) the parent's clear verdict named", base.Ref, base.Commit)
	case afterClear:
		return fmt.Sprintf("worktree from the checkout's HEAD (commit %s): the clear verdict named no reviewed state (switchyard inspect --from REF)", base.Commit)
	}
	return fmt.Sprintf("worktree from the checkout's HEAD (commit %s)", base.Commit)
}

func (b *reportBuilder) requestOperation(i int, p events.RequestOperation) {
	if a := b.current(i); a != nil && p.Decision.Operation != nil {
		op := p.Decision.Operation
		a.Operation = fmt.Sprintf("%s task %s checkpoint %s: requested", op.Kind, op.TaskID, op.CheckpointID)
	}
}

func (b *reportBuilder) operationDone(i int, p events.OperationDone) {
	if a := b.current(i); a != nil {
		result := string(p.Result)
		if p.Ledger == events.LedgerRejected {
			result = "rejected by the parent"
		}
		a.Operation = fmt.Sprintf("%s task %s checkpoint %s: %s", p.Operation.Kind, p.Operation.TaskID, p.Operation.CheckpointID, result)
		if p.Ref != "" {
			a.Operation += " (" + p.Ref + ")"
		}
	}
}

// exclude reports an attempt the eligibility gate kept from launching,
// after the attempts skipped before it.
func (b *reportBuilder) exclude(i int, p events.Exclude) {
	b.excl[i] = append(b.excl[i], p)
	if p.AttemptIndex < 0 || p.AttemptIndex >= len(b.r.Lanes[i].Policy.Attempts) {
		return
	}
	b.skipTo(i, p.AttemptIndex)
	b.rep.Lanes[i].Attempts = append(b.rep.Lanes[i].Attempts, AttemptReport{
		AttemptIndex: p.AttemptIndex, Descriptor: p.Descriptor, Provider: p.Provider,
		Route: b.r.Lanes[i].Policy.Attempts[p.AttemptIndex].Route, Skipped: true, Excluded: true,
		Code: string(p.Verdict.Code), Until: p.Verdict.Until, ExclusionRule: p.Rule,
		Cause: "excluded before launch: " + exclusionWhy(p) + "; " + exclusionRuleText(p, b.r.Lanes[i].Policy.Fallback),
	})
	b.next[i] = max(b.next[i], p.AttemptIndex+1)
}

// stop reports the rest of an exhausted chain as skipped, and the attempt
// an unauthorized stop stopped at with its authorization reason.
func (b *reportBuilder) stop(i int, p events.Stop) {
	switch p.Decision.Reason {
	case string(policy.StopChainExhausted):
		b.skipTo(i, len(b.r.Lanes[i].Policy.Attempts))
	case string(policy.StopUnauthorized):
		l := b.r.Lanes[i]
		k, ok := blockedAttempt(l)
		if !ok {
			return
		}
		b.skipTo(i, k)
		ap := l.Policy.Attempts[k]
		b.rep.Lanes[i].Attempts = append(b.rep.Lanes[i].Attempts, AttemptReport{
			AttemptIndex: k, Descriptor: ap.Descriptor, Provider: ap.ExhaustionGroup, Route: ap.Route, Skipped: true,
			Code: CodeUnauthorized, Cause: "not launched: unauthorized: " + authorizationReason(ap),
		})
		b.next[i] = max(b.next[i], k+1)
	}
}

// cancel says when the parent cancelled an attempt that had not ended.
func (b *reportBuilder) cancel(i int, p events.Cancel) {
	if a := b.current(i); a != nil && a.Outcome == "" {
		when := "before a worker took it"
		if b.claimed[a.ExecutionID] {
			when = "while it ran"
		}
		a.Cause = "cancelled by the parent " + when + " (" + p.Reason + ")"
	}
}

// audit adds what a late report said about the attempt it names, and
// holds an unknown-quota override for the launch it precedes.
func (b *reportBuilder) audit(i int, p events.Audit) {
	if p.Reason == events.AuditUnknownQuotaOverride {
		b.override[i] = p.Detail
		return
	}
	if a := b.current(i); a != nil && (p.Reason == events.AuditLateReport || p.Reason == events.AuditReportAfterCancel) &&
		p.Report != nil && p.Report.ExecutionID == a.ExecutionID && p.Report.Kind != events.ReportClaimed && p.Detail != "" {
		a.Cause += "; then " + p.Detail
	}
}

// finish fills in each lane's state and committed handoffs, and the run's
// diversity and summary.
func (b *reportBuilder) finish(handoffs map[int][]Handoff) RunReport {
	rep := b.rep
	for i, l := range b.r.Lanes {
		lr := &rep.Lanes[i]
		lr.State, lr.WaitingFor, lr.Handoffs = l.State, waitingFor(b.r, l), handoffs[i]
		if awaitsRecovery(b.r, i) {
			lr.WaitingFor = WaitRecovery
		}
		if l.State.Final() {
			lr.Reason = laneReason(l, b.excl[i], b.fins[i])
		}
		if l.State == machines.StateComplete && l.Dispatch != nil {
			lr.Success = l.Dispatch.Descriptor
		}
		for k, a := range lr.Attempts {
			if a.AttemptIndex >= 0 && a.AttemptIndex < len(l.Policy.Attempts) {
				lr.Attempts[k].Alias = l.Policy.Attempts[a.AttemptIndex].Attempt.Kind == policy.KindAlias
			}
		}
	}
	rep.Diversity = diversity(rep)
	rep.Summary = summaryLine(rep)
	return rep
}

// describeFinish fills an attempt from its finish event.
func describeFinish(a *AttemptReport, p events.Finish) {
	a.Outcome, a.ProcessStarted = p.Event.Status, p.Event.ProcessStarted
	switch {
	case p.Receipt != nil:
		a.ReceiptStatus = p.Receipt.Status
		if p.Receipt.ElapsedMs >= 0 {
			ms := p.Receipt.ElapsedMs
			a.DurationMs = &ms
		}
		if u := p.Receipt.Usage; u != nil && *u != (policy.Usage{}) {
			a.Usage = u
		}
		a.Cause = receiptCause(p.Receipt)
		a.Containment = ContainmentText(p.Receipt.Containment)
		a.Fidelity = fidelityOf(p.Receipt, p.Malformed != "")
		if p.Receipt.Status == policy.StatusTimedOut {
			a.TimedOutBy = TimedOutByDeadline
			if p.Stall != nil {
				a.TimedOutBy = TimedOutByStall
			}
		}
		if p.Stall != nil {
			st := *p.Stall
			a.Stall = &st
			a.Cause = string(p.Receipt.Status) + ": " + StallCause(st) + " (the stall watchdog, not a --timeout deadline)"
		} else if a.TimedOutBy == TimedOutByDeadline {
			a.Cause += " (the run's --timeout deadline)"
		}
		if p.Malformed != "" {
			// Recorded as malformed-output: the receipt claimed a
			// delivered response the engine's re-check refused.
			a.ReceiptStatus = policy.StatusMalformedOutput
			a.Cause = string(policy.StatusMalformedOutput) + ": the receipt claimed " + string(p.Receipt.Status) +
				" but the engine's re-check refused it: " + oneLine(p.Malformed, 300) + " (failed; never run again)"
		} else if p.Event.Status == policy.OutcomeFailed && p.Receipt.Status != policy.StatusCancelled &&
			p.Receipt.Status != policy.StatusBillingPolicyBlocked && p.Receipt.Status != policy.StatusUnsupportedCapability {
			a.Cause += " (normalized to failed: the receipt does not prove an eligible outcome)"
		}
	case p.Host != nil:
		a.Cause = "host reported " + string(p.Host.Status)
		if p.Host.EvidenceRef != "" {
			a.Cause += " (evidence " + p.Host.EvidenceRef + ")"
		}
	case p.Unsupported != "":
		a.Cause = p.Unsupported
	case p.Abandoned:
		a.Cause = "abandoned: no usable receipt (the worker's lease went stale, or its receipt was unreadable); never run again"
	}
}

// What ended a timed-out attempt (AttemptReport.TimedOutBy).
const (
	// TimedOutByStall: the stall watchdog (no provider progress for the
	// attempt's stall timeout); the finish records the stall metadata.
	TimedOutByStall = "stall-watchdog"
	// TimedOutByDeadline: the run's explicit --timeout deadline.
	TimedOutByDeadline = "deadline"
)

// StallCause says in one line how a stalled attempt ended: the typed
// failure, how long the stream was idle against the effective timeout, and
// the health the bounded probe found, e.g. "response_stalled after 5m0s
// idle (timeout 5m0s); provider health: request_stalled/available (probe
// available)".
func StallCause(s events.Stall) string {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	cause := fmt.Sprintf("%s after %s idle (timeout %s); provider health: %s/%s (probe %s)",
		s.Failure, ms(s.IdleMs), ms(s.TimeoutMs), s.ProviderHealth, s.Liveness, s.Probe)
	if s.ProviderHealth == events.HealthProviderUnhealthy {
		cause += "; the provider is excluded for the rest of the run"
	}
	if !s.FenceClosed {
		cause += "; the child was not confirmed stopped within the close grace"
	}
	return cause
}

// receiptCause describes a receipt by its status and launcher-authored
// error message: what the receipt shows, nothing more.
func receiptCause(rc *policy.Receipt) string {
	cause := string(rc.Status)
	if rc.Error != nil && strings.TrimSpace(rc.Error.Message) != "" {
		cause += ": " + oneLine(rc.Error.Message, 300)
	}
	if rc.Signal != nil {
		cause += " (signal " + *rc.Signal + ")"
	}
	return cause
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func diversity(rep RunReport) Diversity {
	d := Diversity{Providers: []policy.Provider{}, Attempted: []policy.Provider{}, Lanes: len(rep.Lanes)}
	for _, l := range rep.Lanes {
		for _, a := range l.Attempts {
			if !a.Skipped && !slices.Contains(d.Attempted, a.Provider) {
				d.Attempted = append(d.Attempted, a.Provider)
			}
		}
		if l.State != machines.StateComplete {
			continue
		}
		d.Complete++
		for _, a := range l.Attempts {
			if a.Outcome == policy.OutcomeComplete && !slices.Contains(d.Providers, a.Provider) {
				d.Providers = append(d.Providers, a.Provider)
			}
		}
	}
	// Which complete lanes delivered on each provider, and through what.
	by := map[policy.Provider][]int{}
	var alias []struct {
		lane int
		a    AttemptReport
	}
	for _, l := range rep.Lanes {
		if l.State != machines.StateComplete {
			continue
		}
		for _, a := range l.Attempts {
			if a.Outcome == policy.OutcomeComplete {
				by[a.Provider] = append(by[a.Provider], l.Lane)
				if a.Alias {
					alias = append(alias, struct {
						lane int
						a    AttemptReport
					}{l.Lane, a})
				}
			}
		}
	}
	for _, x := range alias {
		var others []string
		for _, k := range by[x.a.Provider] {
			if k != x.lane {
				others = append(others, fmt.Sprint(k))
			}
		}
		if len(others) > 0 {
			d.AliasReduced = append(d.AliasReduced, fmt.Sprintf("lane %d delivered through the alias %s on the parent's %s, as lane %s also did: one provider fewer than its lanes",
				x.lane, x.a.Descriptor, x.a.Provider, strings.Join(others, ", ")))
		}
	}
	return d
}

func summaryLine(rep RunReport) string {
	counts := map[machines.State]int{}
	handed := 0
	var commits []string
	for _, l := range rep.Lanes {
		if handedOff(l.State, l.Handoffs) {
			handed++
		} else {
			counts[l.State]++
		}
		for _, h := range l.Handoffs {
			commits = append(commits, fmt.Sprintf("lane %d %s %s", l.Lane, h.Provider, shortCommit(h.Commit)))
		}
	}
	var parts []string
	for _, s := range machines.States {
		if s == machines.StateStopped && handed > 0 {
			parts = append(parts, fmt.Sprintf("%d handed off a commit", handed))
		}
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	names := make([]string, len(rep.Diversity.Providers))
	for i, p := range rep.Diversity.Providers {
		names[i] = string(p)
	}
	div := "no provider delivered"
	switch {
	case len(names) > 0:
		div = fmt.Sprintf("%s delivered: %s", plural(len(names), "distinct provider"), strings.Join(names, ", "))
	case len(commits) > 0:
		div = "no lane completed"
	}
	if len(commits) > 0 {
		div += fmt.Sprintf("; %s handed off (the only copy until merged; do not prune it): %s",
			plural(len(commits), "commit"), strings.Join(commits, ", "))
	}
	if len(rep.Diversity.AliasReduced) > 0 {
		div += "; an alias lane reduced provider diversity: " + strings.Join(rep.Diversity.AliasReduced, "; ")
	}
	return fmt.Sprintf("%s: %s; %s", plural(len(rep.Lanes), "lane"), strings.Join(parts, ", "), div)
}

// Text renders the report for people: a header, one line per lane with its
// successful descriptor or final reason, its attempts with their causes,
// and the provider diversity.
func (rep RunReport) Text() string {
	var b strings.Builder
	state := "in progress"
	switch {
	case rep.Cancelled:
		state = "cancelled" // the state status gives the run
	case rep.Final:
		state = "final"
	}
	fmt.Fprintf(&b, "run %s (role %s, parent %s, %s): %s\n", rep.Run, rep.Role, rep.Parent, rep.Access, state)
	if rep.StallWatchdog == events.StallWatchdogOff {
		b.WriteString("stall watchdog off (run --stall-timeout off): no attempt was stopped for silence\n")
	}
	for _, l := range rep.Lanes {
		state := string(l.State)
		if handedOff(l.State, l.Handoffs) {
			state = HandedOffState
		}
		fmt.Fprintf(&b, "lane %d %s: %s", l.Lane, l.LaneID, state)
		switch {
		case handedOff(l.State, l.Handoffs):
			fmt.Fprintf(&b, " commit %s, %s", l.Handoffs[len(l.Handoffs)-1].Commit, handoffStopText(l.Reason))
		case l.Success != "":
			fmt.Fprintf(&b, " via %s", l.Success)
		case l.Reason != "":
			fmt.Fprintf(&b, " (%s)", l.Reason)
		case l.WaitingFor != WaitNone:
			fmt.Fprintf(&b, ", waiting for %s", l.WaitingFor)
		}
		fmt.Fprintf(&b, "; primary %s\n", l.Primary)
		n := 0
		for _, a := range l.Attempts {
			if a.Skipped {
				fmt.Fprintf(&b, "    - %s: %s\n", a.Descriptor, a.Cause)
				continue
			}
			n++
			cause := a.Cause
			if cause == "" {
				cause = "running"
			}
			fmt.Fprintf(&b, "    %d. %s: %s", n, a.Descriptor, cause)
			if a.Override != "" {
				fmt.Fprintf(&b, "; WARNING: ran on an explicit unknown-quota override: %s", a.Override)
			}
			if a.Inspection != nil {
				fmt.Fprintf(&b, "; inspection %s (%s)", a.Inspection.State, a.Inspection.EvidenceRef)
			}
			if a.Operation != "" {
				fmt.Fprintf(&b, "; operation %s", a.Operation)
			}
			b.WriteString("\n")
			if a.StartedFrom != "" {
				fmt.Fprintf(&b, "       %s\n", a.StartedFrom)
			}
			if d := attemptDetails(a); d != "" {
				fmt.Fprintf(&b, "       %s\n", d)
			}
			if a.Fidelity != nil {
				fmt.Fprintf(&b, "       fidelity: %s\n", a.Fidelity.Text)
			}
		}
		for _, h := range l.Handoffs {
			fmt.Fprintf(&b, "    handoff: %s\n", h.Text())
		}
	}
	fmt.Fprintf(&b, "%s\n", rep.Summary)
	return b.String()
}

// attemptDetails is an ended attempt's second report line: how long it
// ran, the tokens its receipt reports, and its output file (or that it
// wrote none). "" while it runs.
func attemptDetails(a AttemptReport) string {
	if a.Outcome == "" && a.DurationMs == nil {
		return ""
	}
	var parts []string
	if a.DurationMs != nil {
		parts = append(parts, (time.Duration(*a.DurationMs) * time.Millisecond).String())
	}
	parts = append(parts, usageText(a.Usage))
	if a.Output != "" {
		parts = append(parts, "output "+a.Output)
	} else {
		parts = append(parts, "no output")
	}
	if a.Artifact != "" {
		parts = append(parts, "artifact "+a.Artifact)
	}
	if a.Containment != "" {
		parts = append(parts, "containment "+a.Containment)
	}
	return strings.Join(parts, ", ")
}

// ContainmentText renders a receipt's containment for reports and the
// console: the class and what verified it, or that it ran unrestricted
// on the run's opt-in; "" for nil.
func ContainmentText(c *policy.ReceiptContainment) string {
	switch {
	case c == nil:
		return ""
	case c.By != "":
		return c.Class + " verified by " + c.By
	case c.Unrestricted:
		return c.Class + ", run unrestricted (--allow-unverified-containment)"
	}
	return c.Class
}

// usageText renders the token counts a receipt reports.
func usageText(u *policy.Usage) string {
	if u == nil {
		return "no token usage reported"
	}
	var parts []string
	for _, c := range []struct {
		name string
		v    *int64
	}{{"in", u.InputTokens}, {"cached in", u.CachedInputTokens}, {"cache write", u.CacheCreationInputTokens},
		{"out", u.OutputTokens}, {"reasoning", u.ReasoningTokens}, {"total", u.TotalTokens}} {
		if c.v != nil {
			parts = append(parts, fmt.Sprintf("%d %s", *c.v, c.name))
		}
	}
	return "tokens " + strings.Join(parts, " / ")
}

// finalSummary is the run-final payload of a run whose lanes are all final;
// envs is its log so far, for the commits its lanes handed off. The lane
// results keep each lane's machine state and reason; only the summary
// words say that a stopped lane handed off a commit.
func finalSummary(r *machines.Run, envs []events.Envelope) events.RunFinal {
	rf := events.RunFinal{Lanes: make([]events.LaneResult, len(r.Lanes))}
	rep := RunReport{Lanes: make([]LaneReport, len(r.Lanes))}
	handoffs := laneHandoffs(r, envs)
	for i, l := range r.Lanes {
		res := events.LaneResult{Lane: i, LaneID: l.Policy.ID, State: events.FinalState(l.State), Reason: l.Reason}
		lr := LaneReport{Lane: i, State: l.State, Handoffs: handoffs[i]}
		if l.State == machines.StateComplete && l.Dispatch != nil {
			res.Descriptor = l.Dispatch.Descriptor
			ap := l.Policy.Attempts[l.Dispatch.AttemptIndex]
			lr.Attempts = []AttemptReport{{Provider: ap.ExhaustionGroup, Outcome: policy.OutcomeComplete}}
		}
		rf.Lanes[i], rep.Lanes[i] = res, lr
	}
	rep.Diversity = diversity(rep)
	rf.Summary = summaryLine(rep)
	return rf
}
