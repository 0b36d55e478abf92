package client

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// The engine's views of a run, as the client returns them.
type (
	// RunStatus is a run's state as its log stands: each lane's state,
	// what it waits for, the exhausted providers.
	RunStatus = engine.RunStatus
	// Report is the run report: per lane every attempt with its cause,
	// the descriptor that delivered, and the diversity achieved.
	Report = engine.RunReport
	// LaneChange is one lane state change.
	LaneChange = engine.LaneChange
	// OperationScope is what an operation's validation checks: the
	// expected HEAD, the files and the checks.
	OperationScope = engine.OperationScope
	// RecoverInput is the parent's answer to an interrupted execution.
	RecoverInput = engine.RecoverInput
	// Validation is a validated operation handoff: its digest and files.
	Validation = contract.Validation
	// OperationStep is a recorded operation step.
	OperationStep = events.OperationStep
	// VerdictState is a writer lane's inspection verdict.
	VerdictState = events.VerdictState
	// OperationResult is the outcome of a performed operation.
	OperationResult = events.OperationResult
)

// The verdicts, and the operation results.
const (
	VerdictClear  = events.VerdictClear
	VerdictUnsafe = events.VerdictUnsafe

	OperationSucceeded = events.OperationSucceeded
	OperationFailed    = events.OperationFailed
)

// AllLanes is the lane argument of Cancel that cancels the whole run.
const AllLanes = events.RunLane

// Run is a handle on one run. It holds only the id: every method asks the
// deployment, so a handle may be made for any run (Client.Run) and used
// from any goroutine.
type Run struct {
	c  *Client
	id string
}

// Run returns a handle on the run with id (it is not looked up: a method
// on it fails with ErrNotFound when there is no such run).
func (c *Client) Run(id string) *Run { return &Run{c: c, id: id} }

// ID is the run's id.
func (r *Run) ID() string { return r.id }

// Status returns the run's status as its log stands.
func (r *Run) Status(ctx context.Context) (RunStatus, error) {
	st, err := r.c.eng.Status(ctx, r.id)
	return st, mapError(err, "")
}

// Report returns the run report as the log stands (Report.Final says
// whether the run is final). See FinalReport for one that must be final.
func (r *Run) Report(ctx context.Context) (Report, error) {
	rep, err := r.c.eng.Report(ctx, r.id)
	return rep, mapError(err, "")
}

// FinalReport returns the run report, or ErrNotFinal while the run is not
// final.
func (r *Run) FinalReport(ctx context.Context) (Report, error) {
	rep, err := r.Report(ctx)
	if err == nil && !rep.Final {
		return rep, &kindError{kind: ErrNotFinal, err: errors.New("run " + r.id + " is not final yet; Wait for it")}
	}
	return rep, err
}

// Wait follows the run until it is final and returns its report. A
// connection lost meanwhile (a serve restarted) is resumed; Wait ends
// early only with ctx.
func (r *Run) Wait(ctx context.Context) (Report, error) {
	rep, err := r.c.eng.Wait(ctx, r.id, nil)
	return rep, mapError(err, "")
}

// Watch follows the run from its first event until it is final, yielding
// every lane state change in log order: those already recorded first,
// then live ones. The sequence ends when the run is final, or yields one
// error (ctx's, or why the run cannot be followed) and ends. Breaking out
// of the loop stops the watch.
//
//	for ch, err := range run.Watch(ctx) {
//		if err != nil { return err }
//		fmt.Println(ch.Lane, ch.From, "->", ch.To)
//	}
func (r *Run) Watch(ctx context.Context) iter.Seq2[LaneChange, error] {
	return func(yield func(LaneChange, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		changes := make(chan LaneChange)
		done := make(chan error, 1)
		go func() {
			_, err := r.c.eng.Wait(ctx, r.id, func(ch LaneChange) {
				select {
				case changes <- ch:
				case <-ctx.Done():
				}
			})
			done <- err
		}()
		for {
			select {
			case ch := <-changes:
				if !yield(ch, nil) {
					cancel()
					<-done
					return
				}
			case err := <-done:
				if err != nil {
					yield(LaneChange{}, mapError(err, ""))
				}
				return
			}
		}
	}
}

// Cancel cancels lane (AllLanes: the whole run). The engine records it
// and stops the lane's running attempts.
func (r *Run) Cancel(ctx context.Context, lane int) error {
	return r.CancelWithReason(ctx, lane, "cancelled by a switchyard client")
}

// CancelWithReason is Cancel with the reason recorded.
func (r *Run) CancelWithReason(ctx context.Context, lane int, reason string) error {
	if lane != AllLanes {
		if err := checkLane(lane); err != nil {
			return err
		}
	}
	return mapError(r.c.eng.Cancel(ctx, r.id, lane, reason), "")
}

// Verdict is a parent's inspection verdict on a writer lane that paused
// for it (the lane's status waits for "verdict").
type Verdict struct {
	// State is VerdictClear (the partial work is safe; the next writer
	// may start) or VerdictUnsafe (the lane stops).
	State VerdictState
	// EvidenceRef names what was inspected. Required.
	EvidenceRef string
	// ReviewedRef, with VerdictClear, is the commit or snapshot ref that
	// was reviewed: the next writer starts from it ("" starts from the
	// checkout's HEAD).
	ReviewedRef string
}

// Verdict answers lane's inspection.
func (r *Run) Verdict(ctx context.Context, lane int, v Verdict) error {
	if err := checkLane(lane); err != nil {
		return err
	}
	switch {
	case v.State != VerdictClear && v.State != VerdictUnsafe:
		return &InvalidInputError{Field: "State", Reason: "verdict state " + string(v.State) + ": want clear or unsafe"}
	case strings.TrimSpace(v.EvidenceRef) == "":
		return &InvalidInputError{Field: "EvidenceRef", Reason: "a verdict needs an evidence ref (what was inspected)"}
	case v.ReviewedRef != "" && v.State != VerdictClear:
		return &InvalidInputError{Field: "ReviewedRef", Reason: "a reviewed ref goes with a clear verdict only: an unsafe verdict stops the lane"}
	}
	return mapError(r.c.eng.VerdictFrom(ctx, r.id, lane, v.State, v.EvidenceRef, v.ReviewedRef), "")
}

// OperationValidate validates the handoff of a lane awaiting a parent
// operation against its worktree and records the validated scope and
// digest. A refused handoff is a *contract.Refusal and records nothing.
func (r *Run) OperationValidate(ctx context.Context, lane int, s OperationScope) (*Validation, error) {
	if err := checkLane(lane); err != nil {
		return nil, err
	}
	v, err := r.c.eng.OperationValidate(ctx, r.id, lane, s)
	return v, mapError(err, "")
}

// OperationBegin reserves the validated operation (digest: the last
// validation's) and waits up to wait for the engine to record it; only
// the parent whose begin was recorded may perform the operation.
func (r *Run) OperationBegin(ctx context.Context, lane int, digest string, wait time.Duration) (OperationStep, error) {
	if err := checkLane(lane); err != nil {
		return OperationStep{}, err
	}
	step, err := r.c.eng.OperationBegin(ctx, r.id, lane, digest, wait)
	return step, mapError(err, "")
}

// OperationDone settles the lane's pending operation with its result
// (ref: the operation's product, the commit of a succeeded
// commit-checkpoint; detail: a human explanation of a failure).
func (r *Run) OperationDone(ctx context.Context, lane int, result OperationResult, ref, detail string) error {
	if err := checkLane(lane); err != nil {
		return err
	}
	if result != OperationSucceeded && result != OperationFailed {
		return &InvalidInputError{Field: "Result", Reason: "operation result " + string(result) + ": want succeeded or failed"}
	}
	return mapError(r.c.eng.OperationSettle(ctx, r.id, lane, result, false, ref, detail), "")
}

// OperationReject settles the lane's pending operation as rejected: it
// will not be performed (detail: why); the lane continues as if it failed.
func (r *Run) OperationReject(ctx context.Context, lane int, detail string) error {
	if err := checkLane(lane); err != nil {
		return err
	}
	return mapError(r.c.eng.OperationSettle(ctx, r.id, lane, OperationFailed, true, "", detail), "")
}

// Recover answers lane's interrupted execution (its status waits for
// "recovery").
func (r *Run) Recover(ctx context.Context, lane int, in RecoverInput) error {
	if err := checkLane(lane); err != nil {
		return err
	}
	return mapError(r.c.eng.Recover(ctx, r.id, lane, in), "")
}

// checkLane is an *InvalidInputError for a lane index out of range.
func checkLane(lane int) error {
	if lane < 0 || lane > events.MaxLanes {
		return &InvalidInputError{Field: "Lane", Reason: "want a zero-based lane index"}
	}
	return nil
}
