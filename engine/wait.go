package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// LaneChange is one lane state change, for live progress lines.
type LaneChange struct {
	Run    string         `json:"run"`
	Lane   int            `json:"lane"`
	LaneID string         `json:"laneId"`
	From   machines.State `json:"from"`
	To     machines.State `json:"to"`
	// Event is the event type that moved the lane.
	Event events.Type `json:"event"`
	Seq   uint64      `json:"seq"`
	Time  time.Time   `json:"time"`
	// Descriptor and ExecutionID name the lane's current execution.
	Descriptor  string `json:"descriptor,omitempty"`
	ExecutionID string `json:"executionId,omitempty"`
	// Outcome is set by finish: the normalized outcome.
	Outcome policy.Outcome `json:"outcome,omitempty"`
	// Reason is set when the lane becomes final.
	Reason string `json:"reason,omitempty"`
	// WaitingFor is who must act next.
	WaitingFor WaitKind `json:"waitingFor,omitempty"`
	// Notice is the seed's progress notice when one is due (before a
	// replacement is launched, when a writer pauses for inspection, when a
	// lane waits for the parent): the failed descriptor, the observed
	// cause and the next approved descriptor or action. Empty otherwise.
	Notice string `json:"notice,omitempty"`
	// Handoff is set when the lane stops after it handed off a commit
	// (see Handoff): the latest one. To stays stopped; people are shown
	// HandedOffState.
	Handoff *Handoff `json:"handoff,omitempty"`
}

// Wait follows run's log from its first event until run-final, calling
// onChange (if not nil) once per lane state change in log order (the
// changes already recorded first, then live ones), and returns the final
// report. It needs no running engine in this process, only one somewhere.
// ErrUnknownRun if the run has no events.
//
// A watch that ends before run-final without ctx being done (the server
// went away: a serve killed and restarted, a cluster failing over) is
// resumed after the last event seen, with backoff, until ctx is done; only
// a stored event that does not decode (the store's ErrInvalid) or does not
// fold ends Wait with an error.
func (e *Engine) Wait(ctx context.Context, run string, onChange func(LaneChange)) (RunReport, error) {
	if err := events.ValidateRunID(run); err != nil {
		return RunReport{}, fmt.Errorf("%w: %v", ErrUnknownRun, err)
	}
	if _, err := e.cfg.Store.Last(ctx, run, events.RunLane); errors.Is(err, events.ErrNotFound) {
		return RunReport{}, fmt.Errorf("run %s: %w", run, ErrUnknownRun)
	}
	r := &machines.Run{}
	var envs []events.Envelope
	finishes := map[int]*events.Finish{} // latest finish per lane, for notices
	excl := map[int][]events.Exclude{}   // exclusions per lane, for reasons and notices
	var rep RunReport
	err := e.followRun(ctx, run, func(env events.Envelope) (bool, error) {
		from := machines.State("")
		if env.Lane >= 0 && env.Lane < len(r.Lanes) {
			from = r.Lanes[env.Lane].State
		}
		if err := r.Apply(env); err != nil {
			return false, fmt.Errorf("run %s: %w: %w", run, ErrInconsistentLog, err)
		}
		envs = append(envs, env)
		switch p := env.Payload.(type) {
		case events.Finish:
			finishes[env.Lane] = &p
		case events.Exclude:
			excl[env.Lane] = append(excl[env.Lane], p)
		}
		if env.Lane >= 0 && onChange != nil && r.Lanes[env.Lane].State != from {
			ch := laneChange(r, env, from, finishes[env.Lane], excl[env.Lane])
			if hs := laneHandoffs(r, envs)[env.Lane]; handedOff(ch.To, hs) {
				h := hs[len(hs)-1]
				ch.Handoff = &h
				ch.Notice = fmt.Sprintf("lane %d: %s %s; %s", env.Lane, ch.Descriptor, h.Text(), handoffStopText(ch.Reason))
			}
			onChange(ch)
		}
		if r.Closed != nil {
			rep = withOutputs(buildReport(r, envs))
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return RunReport{}, err
	}
	return rep, nil
}

// followRun calls onEvent with run's events in log order, from its first,
// until onEvent says done (true) or fails; it returns onEvent's error,
// ctx's once ctx ends, or why the log cannot be followed. A watch that
// ends early without ctx being done (the server went away: a serve killed
// and restarted, a cluster failing over) is resumed after the last event
// seen, with backoff; only a stored event that does not decode (the
// store's ErrInvalid) ends it with an error. The one watch-and-resume loop
// of a run's log: Wait and Logs follow runs through it.
func (e *Engine) followRun(ctx context.Context, run string, onEvent func(events.Envelope) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var after uint64
	retry := events.Backoff{Min: waitRetryMin, Max: waitRetryMax}
	for {
		ch, err := e.cfg.Store.Watch(ctx, run, after)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, events.ErrInvalid) {
				return fmt.Errorf("watch run %s: %w", run, err)
			}
			e.log.Warn("cannot watch the run; retrying", "run", run, "err", err, "in", retry.Current())
		} else {
			for env := range ch {
				after = env.Seq
				retry.Reset()
				if done, err := onEvent(env); err != nil || done {
					return err
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The watch ended early: a lost connection, which is resumed, or
			// an event that does not decode, which LoadRun names.
			if _, err := e.cfg.Store.LoadRun(ctx, run); errors.Is(err, events.ErrInvalid) {
				return fmt.Errorf("watch run %s ended before run-final: %w", run, err)
			}
			e.log.Warn("run watch ended before run-final; watching again", "run", run, "after", after, "in", retry.Current())
		}
		if !retry.Wait(ctx) {
			return ctx.Err()
		}
	}
}

// Backoff of Wait's watch retries.
const (
	waitRetryMin = 50 * time.Millisecond
	waitRetryMax = 2 * time.Second
)

// laneChange describes the change env made to its lane; excl are the
// lane's exclusions so far.
func laneChange(r *machines.Run, env events.Envelope, from machines.State, fin *events.Finish, excl []events.Exclude) LaneChange {
	l := r.Lanes[env.Lane]
	ch := LaneChange{Run: r.ID, Lane: env.Lane, LaneID: l.Policy.ID, From: from, To: l.State, Event: env.Type,
		Seq: env.Seq, Time: env.Time, WaitingFor: waitingFor(r, l)}
	if l.Dispatch != nil {
		ch.Descriptor, ch.ExecutionID = l.Dispatch.Descriptor, l.Dispatch.ExecutionID
	}
	if l.State.Final() {
		ch.Reason = laneReason(l, excl, fin)
	}
	switch p := env.Payload.(type) {
	case events.Finish:
		ch.Outcome = p.Event.Status
	case events.Launch:
		ch.Notice = replacementNotice(r, env.Lane, fin, p, excl)
	case events.Continue:
		ch.Notice = replacementNotice(r, env.Lane, fin, events.Launch(p), excl)
	case events.Inspect:
		ch.Notice = fmt.Sprintf("lane %d: writer %s ended %s; its worktree and receipt are preserved and it pauses for inspection: switchyard inspect --run %s --lane %d --state clear|unsafe --evidence REF [--from COMMIT|REF]",
			env.Lane, ch.Descriptor, causeOf(fin), r.ID, env.Lane)
	case events.RequestOperation:
		if op := p.Decision.Operation; op != nil {
			// operation done is refused until the operation was validated
			// and begun: the notice names the first step, as status does.
			ch.Notice = fmt.Sprintf("lane %d: %s handed off %s (task %s, checkpoint %s); the parent validates it first: %s",
				env.Lane, ch.Descriptor, op.Kind, op.TaskID, op.CheckpointID, OperationSteps(r.ID, env.Lane))
		}
	case events.Stop:
		if fin != nil {
			ch.Notice = fmt.Sprintf("lane %d: %s ended %s; the lane stops (%s)", env.Lane, ch.Descriptor, causeOf(fin), ch.Reason)
		}
	}
	if awaitsRecovery(r, env.Lane) {
		ch.WaitingFor = WaitRecovery
		ch.Notice = fmt.Sprintf("lane %d: %s was interrupted and # continuation may resume it on the same route once the parent inspects it: switchyard recover --run %s --lane %d --evidence REF --clear --correction TEXT --blockage-id ID --snapshot-ref REF --snapshot-digest SHA256 --partial-work-ref REF --side-effects-ref REF --stopped-writers-ref REF (or --decline)",
			env.Lane, ch.Descriptor, r.ID, env.Lane)
	}
	if ch.Notice == "" && ch.WaitingFor == WaitNative && env.Type != events.TypeClaim {
		ch.Notice = fmt.Sprintf("lane %d: native attempt %s waits for the parent: switchyard native next --parent %s, then switchyard native report --execution %s --status S",
			env.Lane, ch.Descriptor, r.Created.Parent, ch.ExecutionID)
	}
	return ch
}

// replacementNotice is due when a launch replaces a failed execution, or
// starts past attempts skipped for an exhausted group or excluded before
// launch: it names the failed descriptor and its observed cause, the
// skipped descriptors, each excluded one with its code, and the next
// descriptor.
func replacementNotice(r *machines.Run, lane int, fin *events.Finish, launch events.Launch, excl []events.Exclude) string {
	l := r.Lanes[lane]
	from := 0
	var b strings.Builder
	fmt.Fprintf(&b, "lane %d: ", lane)
	if fin != nil {
		from = fin.Event.AttemptIndex + 1
		fmt.Fprintf(&b, "%s ended %s; ", l.Policy.Attempts[fin.Event.AttemptIndex].Descriptor, causeOf(fin))
	}
	var skipped, excluded []string
	for k := from; k < launch.AttemptIndex && k < len(l.Policy.Attempts); k++ {
		if x, ok := exclusionOf(excl, k); ok {
			excluded = append(excluded, exclusionText(x))
			continue
		}
		skipped = append(skipped, l.Policy.Attempts[k].Descriptor)
	}
	if fin == nil && len(skipped) == 0 && len(excluded) == 0 {
		return ""
	}
	if len(excluded) > 0 {
		fmt.Fprintf(&b, "excluded before launch: %s; ", strings.Join(excluded, "; "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "skipping %s (provider group already exhausted); ", strings.Join(skipped, ", "))
	}
	verb := "falls back to"
	switch {
	case l.Continued:
		verb = "continues with"
	case fin == nil:
		verb = "launches"
	}
	fmt.Fprintf(&b, "%s %s", verb, launch.Descriptor)
	if base := launch.WorktreeBase; base != nil && fin != nil {
		// A fallback writer: say what its fresh worktree is built on.
		if base.Source == events.BaseReviewed {
			fmt.Fprintf(&b, ", in a worktree of the reviewed state %s (commit %s)", base.Ref, base.Commit)
		} else {
			fmt.Fprintf(&b, ", in a worktree of the checkout's HEAD (commit %s)", base.Commit)
		}
	}
	return b.String()
}

// exclusionOf is the last exclusion of attempt k among excl.
func exclusionOf(excl []events.Exclude, k int) (events.Exclude, bool) {
	for j := len(excl) - 1; j >= 0; j-- {
		if excl[j].AttemptIndex == k {
			return excl[j], true
		}
	}
	return events.Exclude{}, false
}

// causeOf is the observed cause of a finished execution, as the run
// report words it; its outcome when nothing more is known.
func causeOf(fin *events.Finish) string {
	if fin == nil {
		return "without a recorded outcome"
	}
	var a AttemptReport
	describeFinish(&a, *fin)
	if a.Cause == "" {
		return string(fin.Event.Status)
	}
	if a.ReceiptStatus != "" && string(a.ReceiptStatus) != string(fin.Event.Status) {
		return a.Cause + " (outcome " + string(fin.Event.Status) + ")"
	}
	return a.Cause
}
