package machines

import (
	"fmt"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Run is one run folded from its event log: the frozen inputs, each lane's
// machine state and policy history, and the run's exhausted groups. It is a
// pure fold: Apply reads nothing but the envelope and never does I/O, so the
// engine, status and replay all rebuild the same Run from the same log.
//
// What each envelope type contributes:
//
//   - run-created (first, once): Created, and one lane in StateCreated per
//     resolved lane policy.
//   - group-exhausted: its provider joins Exhausted (once, in order of first
//     exhaustion); every lane's LaneState carries it.
//   - run-final (last): Closed; every lane must already be final, in the
//     state the payload reports. Only audit may follow.
//   - launch, continue: the lane machine moves; Dispatch becomes this
//     execution (a fresh execution id on an attempt of the lane) and Claim
//     is cleared. Neither may follow a run-level cancel.
//   - claim: the machine moves; Claim is set. It must name Dispatch's
//     execution.
//   - finish: the machine moves; the payload's normalized policy.Event is
//     appended to History. It must name Dispatch's execution and attempt.
//     A stall the health probe found provider_unhealthy adds the
//     attempt's exhaustion group to Unhealthy (once).
//   - inspect: the machine moves.
//   - verdict: the machine moves; the verdict becomes the Inspection of the
//     last History event, which must be an execution without one (a
//     recorded verdict, unsafe above all, is never replaced).
//   - request-operation: the machine moves; Request is set.
//   - operation-done: the machine moves; a parentOperation event (status
//     complete when the operation succeeded, failed otherwise, on the
//     attempt the request named) is appended to History; Request is
//     cleared.
//   - complete, stop: the machine moves; Reason is the decision's reason.
//   - cancel: on a lane, the machine moves and Reason is the cancel reason;
//     on the run, Cancel records the request (the engine then cancels each
//     lane with its own event).
//   - recover: no transition (terminal only); the parent's inspection and
//     recovery are attached to the interrupted outcome in History.
//   - exclude: no transition (created or terminal only, not after a
//     run-level cancel); the attempt joins Excluded, so LaneState carries
//     its group with the run's exhausted groups. The attempt must be one
//     of the lane's, with the recorded descriptor and exhaustion group,
//     and not excluded before.
//   - audit: nothing but the subject's last sequence.
//
// The exported fields are the fold's result: read them, change them only
// through Apply. The zero value is an empty run, ready for run-created.
type Run struct {
	// ID is the run id, set by run-created.
	ID string
	// Created is the run-created payload: the frozen sheet, role, parent,
	// access, lane policies and options. nil before run-created.
	Created *events.RunCreated
	// Lanes are the run's lanes, Lanes[i] for lane i.
	Lanes []LaneRecord
	// Exhausted is the run's exhausted provider groups in order of first
	// exhaustion.
	Exhausted []policy.Provider
	// Unhealthy is the run's provider groups that a finish recorded
	// provider_unhealthy after a stall, in order of first record; the
	// engine's eligibility gate excludes them for the rest of the run.
	Unhealthy []policy.Provider
	// SignedOut is the run's provider groups whose attempt a finish
	// recorded unauthenticated before it started (the preflight proved no
	// login), in order of first record: the eligibility gate's auth
	// condition for an UNSUPPORTED provider for the rest of the run.
	SignedOut []policy.Provider
	// Cancel is the run-level cancel request, if any.
	Cancel *events.Cancel
	// Closed is the run-final payload, once recorded.
	Closed *events.RunFinal
	// Seq is the store sequence of the last run-level envelope: the
	// expected last sequence of the next append on the run subject.
	Seq uint64

	applied int // envelopes applied, audit included.

	// laneInputs caches each lane's policy as the policy-input digest
	// hashes it (LaneInput): a lane's policy never changes after
	// run-created.
	laneInputs []*events.LaneInput
}

// LaneInput is lane i's policy as the policy-input digest hashes it
// (events.NewLaneInput), made on first use and kept: the engine and
// replay digest the same lane's policy at every decision.
func (r *Run) LaneInput(i int) (*events.LaneInput, error) {
	if i < 0 || i >= len(r.Lanes) {
		return nil, fmt.Errorf("lane %d: the run has %d lanes", i, len(r.Lanes))
	}
	if len(r.laneInputs) != len(r.Lanes) {
		r.laneInputs = make([]*events.LaneInput, len(r.Lanes))
	}
	if r.laneInputs[i] == nil {
		b, err := events.NewLaneInput(r.Lanes[i].Policy)
		if err != nil {
			return nil, err
		}
		r.laneInputs[i] = b
	}
	return r.laneInputs[i], nil
}

// LaneRecord is one lane of a Run.
type LaneRecord struct {
	// Index is the lane's 0-based position in the run.
	Index int
	// Policy is the lane's resolved policy from run-created.
	Policy policy.LanePolicy
	// State is the lane machine's state.
	State State
	// History is the lane's policy history: normalized finish events with
	// their verdicts, and parent operations, in order. LaneState returns it
	// as policy.Next takes it.
	History []policy.Event
	// Dispatch is the latest launch or continue (a continue is stored in
	// its Launch form); nil before the first.
	Dispatch *events.Launch
	// Continued reports whether Dispatch came from a continue.
	Continued bool
	// Claim is the worker's claim of Dispatch; nil until claimed.
	Claim *events.Claim
	// Request is the operation a request-operation asked for, while the
	// lane awaits it; nil otherwise.
	Request *events.RequestOperation
	// Handoff is the handoff the lane's last execution delivered (its
	// receipt's pstack-handoff block): the scope a parent operation may
	// cover. nil when the last finish carried none.
	Handoff *policy.ReceiptHandoff
	// Validated is the last validated scope of the operation the lane
	// awaits (operation-step validated); Pending its begun step, the
	// ledger's pending record, until operation-done settles it. Both are
	// nil while the lane awaits nothing.
	Validated *events.OperationStep
	Pending   *events.OperationStep
	// Excluded are the attempts the eligibility gate kept from launching,
	// in order of exclusion; LaneState adds their groups to the run's
	// exhausted groups for this lane.
	Excluded []Exclusion
	// Reason says why a final lane ended: the complete or stop decision's
	// reason, or the cancel reason. Empty while the lane is not final.
	Reason string
	// Seq is the store sequence of the lane's last envelope (audit
	// included): the expected last sequence of its next append.
	Seq uint64
}

// Exclusion is one attempt of a lane that the eligibility gate kept from
// launching (an exclude event): the attempt, its exhaustion group, why, and
// the report the verdict was computed from.
type Exclusion struct {
	AttemptIndex int
	Group        policy.Provider
	Code         policy.ExclusionCode
	Detail       string
	// Until is the known end of the condition (an exhaustion's reset),
	// when the verdict gave one.
	Until *time.Time
	// ReportDigest is the digest of the capacity report the verdict was
	// computed from; empty when there was none.
	ReportDigest string
	EvaluatedAt  time.Time
	// Rule is how the lane's fallback treats the exclusion: a lane moves
	// past it (skipping its group) unless Rule is policy.ExclusionStops.
	Rule policy.ExclusionRule
}

// FoldRun folds a run's envelopes, in log order, into a new Run. The first
// envelope Apply refuses stops the fold; its *LogError is returned with the
// run as it stood before that envelope.
func FoldRun(envs []events.Envelope) (*Run, error) {
	r := &Run{}
	for _, env := range envs {
		if err := r.Apply(env); err != nil {
			return r, err
		}
	}
	return r, nil
}

// Final reports whether the run has lanes and every one is final. The
// engine then records run-final.
func (r *Run) Final() bool {
	if r.Created == nil {
		return false
	}
	for _, l := range r.Lanes {
		if !l.State.Final() {
			return false
		}
	}
	return true
}

// LaneState returns lane i's input to policy.Next: its history, the
// groups it must skip and the run's access mode. The groups are the run's
// exhausted groups, then the lane's excluded groups not already among them
// in order of exclusion, for the exclusions whose rule moves the lane on:
// policy.Next skips such an excluded attempt exactly as it skips an
// exhausted one. A stopping exclusion's group is not among them (see
// StoppingExclusion). The slices are copies; the events they hold
// share pointers with the log, so treat them as read-only.
func (r *Run) LaneState(i int) (policy.LaneState, error) {
	if r.Created == nil || i < 0 || i >= len(r.Lanes) {
		return policy.LaneState{}, fmt.Errorf("lane %d: the run has %d lanes", i, len(r.Lanes))
	}
	groups := slices.Clone(r.Exhausted)
	for _, x := range r.Lanes[i].Excluded {
		if x.Rule.MovesOn() && !slices.Contains(groups, x.Group) {
			groups = append(groups, x.Group)
		}
	}
	return policy.LaneState{
		Events:          slices.Clone(r.Lanes[i].History),
		ExhaustedGroups: groups,
		Access:          r.Created.Access,
	}, nil
}

// StoppingExclusion is lane i's exclusion whose rule stops the lane (its
// fallback does not move on from the exclusion's outcome class), if any:
// the lane's next decision is then a stop with reason excluded.
func (r *Run) StoppingExclusion(i int) (Exclusion, bool) {
	if i < 0 || i >= len(r.Lanes) {
		return Exclusion{}, false
	}
	for _, x := range r.Lanes[i].Excluded {
		if !x.Rule.MovesOn() {
			return x, true
		}
	}
	return Exclusion{}, false
}

// Apply folds one envelope into the run. A refused envelope returns a
// *LogError (wrapping a *TransitionError for a transition the lane table
// refuses, ErrInconsistent otherwise) and leaves the run unchanged.
func (r *Run) Apply(env events.Envelope) error {
	var err error
	if env.Lane == events.RunLane {
		err = r.applyRun(env)
	} else {
		err = r.applyLane(env)
	}
	if err != nil {
		return &LogError{Index: r.applied, Seq: env.Seq, Type: env.Type, Lane: env.Lane, Err: err}
	}
	r.applied++
	return nil
}

// applyRun folds a run-level envelope.
func (r *Run) applyRun(env events.Envelope) error {
	if err := r.checkHead(env); err != nil {
		return err
	}
	if env.Type.Scope() == events.ScopeLane {
		return inconsistent("%s is a lane event; it cannot be run-level", env.Type)
	}
	if env.Payload == nil || env.Payload.EventType() != env.Type {
		return inconsistent("type %s carries a %T payload", env.Type, env.Payload)
	}
	if err := checkSeq(r.Seq, env.Seq); err != nil {
		return err
	}
	if r.Closed != nil && env.Type != events.TypeAudit {
		return inconsistent("the run is closed by run-final; only audit may follow")
	}
	switch p := env.Payload.(type) {
	case events.RunCreated:
		if r.Created != nil {
			return inconsistent("a second run-created")
		}
		r.ID, r.Created = env.Run, &p
		r.Lanes = make([]LaneRecord, len(p.Lanes))
		for i, lp := range p.Lanes {
			r.Lanes[i] = LaneRecord{Index: i, Policy: lp, State: StateCreated}
		}
	case events.GroupExhausted:
		if p.FromLane < 0 || p.FromLane >= len(r.Lanes) {
			return inconsistent("group-exhausted from lane %d: the run has %d lanes", p.FromLane, len(r.Lanes))
		}
		if !slices.Contains(r.Exhausted, p.Provider) {
			r.Exhausted = append(r.Exhausted, p.Provider)
		}
	case events.RunFinal:
		if err := r.checkFinal(p); err != nil {
			return err
		}
		r.Closed = &p
	case events.Cancel:
		if r.Cancel == nil {
			r.Cancel = &p
		}
	case events.Audit:
	}
	r.Seq = max(r.Seq, env.Seq)
	return nil
}

// checkHead checks the envelope belongs to this run, after run-created.
func (r *Run) checkHead(env events.Envelope) error {
	if r.Created == nil {
		if env.Type != events.TypeRunCreated {
			return inconsistent("%s before run-created", env.Type)
		}
		return nil
	}
	if env.Run != r.ID {
		return inconsistent("envelope of run %q in the log of run %q", env.Run, r.ID)
	}
	return nil
}

// checkFinal checks run-final against the lanes.
func (r *Run) checkFinal(p events.RunFinal) error {
	if len(p.Lanes) != len(r.Lanes) {
		return inconsistent("run-final reports %d lanes; the run has %d", len(p.Lanes), len(r.Lanes))
	}
	for i, l := range r.Lanes {
		if !l.State.Final() {
			return inconsistent("run-final while lane %d is %s", i, l.State)
		}
		if string(p.Lanes[i].State) != string(l.State) {
			return inconsistent("run-final reports lane %d %s; it is %s", i, p.Lanes[i].State, l.State)
		}
	}
	return nil
}

// checkSeq refuses a sequence that does not increase along a subject; 0
// (an envelope not yet stored) is not checked.
func checkSeq(last, seq uint64) error {
	if seq != 0 && last != 0 && seq <= last {
		return inconsistent("sequence %d does not follow %d on its subject", seq, last)
	}
	return nil
}
