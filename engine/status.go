package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// WaitKind says what a lane is waiting for.
type WaitKind string

// Wait kinds. A final lane waits for nothing (WaitNone).
const (
	// WaitNone: the lane is final.
	WaitNone WaitKind = ""
	// WaitEngine: the lane is created or terminal; the engine's next
	// decision is due (a live engine takes it at once).
	WaitEngine WaitKind = "engine"
	// WaitWorker: an external attempt is queued for or running on a
	// provider worker.
	WaitWorker WaitKind = "worker"
	// WaitNative: a native attempt waits for the parent harness
	// (switchyard native next, then native report).
	WaitNative WaitKind = "native"
	// WaitVerdict: a started writer waits for the parent's inspection
	// verdict (switchyard inspect).
	WaitVerdict WaitKind = "verdict"
	// WaitOperation: a handoff waits for the parent operation it asked for
	// (LaneStatus.Operation).
	WaitOperation WaitKind = "operation"
	// WaitRecovery: an interrupted execution that # continuation may
	// resume waits for the parent's inspection and recovery (switchyard
	// recover).
	WaitRecovery WaitKind = "recovery"
)

// LaneStatus is one lane as its log stands.
type LaneStatus struct {
	Lane   int            `json:"lane"`
	LaneID string         `json:"laneId"`
	State  machines.State `json:"state"`
	// WaitingFor says who must act next.
	WaitingFor WaitKind `json:"waitingFor,omitempty"`
	// Attempt, Descriptor, Route, ExecutionID and Paths describe the
	// current (latest) execution; unset before the first launch.
	Attempt     *int          `json:"attempt,omitempty"`
	Descriptor  string        `json:"descriptor,omitempty"`
	Route       policy.Route  `json:"route,omitempty"`
	ExecutionID string        `json:"executionId,omitempty"`
	Paths       *events.Paths `json:"paths,omitempty"`
	// WorkerID is the worker that claimed the current execution.
	WorkerID string `json:"workerId,omitempty"`
	// Outcome is the latest recorded execution outcome.
	Outcome policy.Outcome `json:"outcome,omitempty"`
	// Stall is the current execution's stall metadata when it ended
	// response_stalled.
	Stall *events.Stall `json:"stall,omitempty"`
	// Operation is the parent operation the lane awaits.
	Operation *policy.Operation `json:"operation,omitempty"`
	// Validated is the operation's last validated scope and digest
	// (operation validate); Pending its begun step, the pending record a
	// parent that crashed must reconcile before anything else.
	Validated *events.OperationStep `json:"validated,omitempty"`
	Pending   *events.OperationStep `json:"pending,omitempty"`
	// Reason says why a final lane ended: the stop, denial or cancel
	// reason, with an unauthorized stop's authorization reason and a
	// chain-exhausted stop's exclusions (see RunReport).
	Reason string `json:"reason,omitempty"`
	// Exclusions are the lane's attempts the eligibility gate kept from
	// launching, in order.
	Exclusions []Exclusion `json:"exclusions,omitempty"`
	// Handoffs are the commits the lane handed to the parent (see
	// Handoff); a stopped lane with one handed off its work, and State
	// and Reason stay as recorded.
	Handoffs []Handoff `json:"handoffs,omitempty"`
}

// Exclusion is one attempt the eligibility gate kept from launching, as
// its exclude event records it.
type Exclusion struct {
	AttemptIndex int                     `json:"attemptIndex"`
	Descriptor   string                  `json:"descriptor"`
	Provider     policy.Provider         `json:"provider"` // the attempt's provider group
	Source       policy.QuotaSource      `json:"source"`
	Code         policy.ExclusionCode    `json:"code"`
	Detail       string                  `json:"detail,omitempty"`
	Capacity     policy.CapacityEvidence `json:"capacity"`
	// Until is when an exclusion for a known exhaustion ends.
	Until        *time.Time `json:"until,omitempty"`
	EvaluatedAt  time.Time  `json:"evaluatedAt"`
	ReportDigest string     `json:"reportDigest,omitempty"` // "" when there was no report
	// Rule is the rule the lane's fallback applied (fallback-moves-on,
	// fallback-stops); empty on an exclusion recorded before it existed.
	Rule policy.ExclusionRule `json:"rule,omitempty"`
}

// exclusionOfEvent is p as an Exclusion.
func exclusionOfEvent(p events.Exclude) Exclusion {
	return Exclusion{AttemptIndex: p.AttemptIndex, Descriptor: p.Descriptor, Provider: p.Provider, Source: p.Source,
		Code: p.Verdict.Code, Detail: p.Verdict.Detail, Capacity: p.Verdict.Capacity, Until: p.Verdict.Until,
		EvaluatedAt: p.EvaluatedAt, ReportDigest: p.ReportDigest, Rule: p.Rule}
}

// RunStatus is a run as its log stands.
type RunStatus struct {
	Run         string            `json:"run"`
	Role        string            `json:"role"`
	Parent      policy.Parent     `json:"parent"`
	Access      policy.Access     `json:"access"`
	SheetDigest string            `json:"sheetDigest"`
	Created     time.Time         `json:"created"`
	Updated     time.Time         `json:"updated"` // time of the latest event.
	Final       bool              `json:"final"`   // run-final is recorded.
	Cancelled   bool              `json:"cancelled,omitempty"`
	Exhausted   []policy.Provider `json:"exhausted"`
	// Unhealthy are the provider groups a stall's health probe found
	// provider_unhealthy in this run: excluded for the rest of it.
	Unhealthy []policy.Provider `json:"unhealthy,omitempty"`
	Lanes     []LaneStatus      `json:"lanes"`
	// Summary is run-final's one-line summary, once final.
	Summary string `json:"summary,omitempty"`
	// Audits counts the recorded deliveries that changed nothing (late,
	// duplicate, stale or malformed reports, redelivered jobs, a cancelled
	// attempt's report after its cancel), by reason,
	// including those recorded after run-final. (An unknown-quota
	// override, recorded as an audit too, is no delivery: the run report
	// names it on its attempt.)
	Audits map[events.AuditReason]int `json:"audits,omitempty"`
	// StaleSheet is the run's stale-sheet notice (its sheet pins versioned
	// Claude IDs that run as their family alias), from the stale-sheet
	// audit recorded once per run; "" when the sheet is current.
	StaleSheet string `json:"staleSheet,omitempty"`
}

// Status folds run's log into its status. ErrUnknownRun if the run has no
// events.
func (e *Engine) Status(ctx context.Context, run string) (RunStatus, error) {
	r, envs, err := e.load(ctx, run)
	if err != nil {
		return RunStatus{}, err
	}
	return statusOf(r, envs), nil
}

// Runs returns the status of every run in the store, in run id order. A run
// whose log does not fold is skipped (and logged); Status reports its
// error.
func (e *Engine) Runs(ctx context.Context) ([]RunStatus, error) {
	ids, err := e.cfg.Store.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := make([]RunStatus, 0, len(ids))
	for _, id := range ids {
		st, err := e.Status(ctx, id)
		if errors.Is(err, ErrInconsistentLog) {
			e.log.Warn("run log does not fold", "run", id, "err", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// statusOf builds the status of a folded run.
func statusOf(r *machines.Run, envs []events.Envelope) RunStatus {
	c := r.Created
	st := RunStatus{
		Run: r.ID, Role: c.Role, Parent: c.Parent, Access: c.Access, SheetDigest: c.SheetDigest,
		Final: r.Closed != nil, Cancelled: r.Cancel != nil, Exhausted: append([]policy.Provider{}, r.Exhausted...),
		Unhealthy: slices.Clone(r.Unhealthy), Lanes: make([]LaneStatus, len(r.Lanes)),
	}
	if len(envs) > 0 {
		st.Created, st.Updated = envs[0].Time, envs[len(envs)-1].Time
	}
	handoffs := laneHandoffs(r, envs)
	if r.Closed != nil {
		st.Summary = r.Closed.Summary
		if len(handoffs) > 0 && r.Final() {
			// A log recorded before handoffs were summarized says "no
			// provider delivered"; the words come from the same fold.
			st.Summary = finalSummary(r, envs).Summary
		}
	}
	excl := laneExclusions(envs)
	fins := map[int]*events.Finish{}
	for _, env := range envs {
		if f, ok := env.Payload.(events.Finish); ok {
			fins[env.Lane] = &f
		}
	}
	for i, l := range r.Lanes {
		st.Lanes[i] = laneStatus(r, l)
		st.Lanes[i].Handoffs = handoffs[i]
		if awaitsRecovery(r, i) {
			st.Lanes[i].WaitingFor = WaitRecovery
		}
		if l.State.Final() {
			st.Lanes[i].Reason = laneReason(l, excl[i], fins[i])
		}
		for _, x := range excl[i] {
			st.Lanes[i].Exclusions = append(st.Lanes[i].Exclusions, exclusionOfEvent(x))
		}
	}
	for _, env := range envs {
		if f, ok := env.Payload.(events.Finish); ok && env.Lane >= 0 && env.Lane < len(st.Lanes) {
			if ls := &st.Lanes[env.Lane]; f.ExecutionID == ls.ExecutionID {
				ls.Stall = f.Stall
			}
		}
		if a, ok := env.Payload.(events.Audit); ok && a.Reason == events.AuditStaleSheet {
			st.StaleSheet = a.Detail
		} else if ok && a.Reason != events.AuditUnknownQuotaOverride {
			if st.Audits == nil {
				st.Audits = map[events.AuditReason]int{}
			}
			st.Audits[a.Reason]++
		}
	}
	return st
}

func laneStatus(r *machines.Run, l machines.LaneRecord) LaneStatus {
	ls := LaneStatus{Lane: l.Index, LaneID: l.Policy.ID, State: l.State, WaitingFor: waitingFor(r, l)}
	if d := l.Dispatch; d != nil {
		idx, paths := d.AttemptIndex, d.Paths
		ls.Attempt, ls.Descriptor, ls.Route, ls.ExecutionID, ls.Paths = &idx, d.Descriptor, d.Route, d.ExecutionID, &paths
	}
	if l.Claim != nil {
		ls.WorkerID = l.Claim.WorkerID
	}
	if a := policy.Anchor(l.History); a >= 0 {
		ls.Outcome = l.History[a].Status
	}
	if l.State == machines.StateAwaitingOperation && l.Request != nil {
		ls.Operation = l.Request.Decision.Operation
		ls.Validated, ls.Pending = l.Validated, l.Pending
	}
	if l.State.Final() {
		ls.Reason = l.Reason
	}
	return ls
}

// waitingFor says who must act next on lane l of run r. A strict-contract
// native execution is never handed out: the engine ends it.
func waitingFor(r *machines.Run, l machines.LaneRecord) WaitKind {
	switch l.State {
	case machines.StateCreated, machines.StateTerminal:
		return WaitEngine
	case machines.StateLaunching, machines.StateRunning:
		if l.Dispatch != nil && l.Dispatch.Route == policy.RouteNative {
			if r.Created != nil && r.Created.Options.Contract == policy.ContractStrict {
				return WaitEngine
			}
			return WaitNative
		}
		return WaitWorker
	case machines.StateInspecting:
		return WaitVerdict
	case machines.StateAwaitingOperation:
		return WaitOperation
	}
	return WaitNone
}
