package engine

import (
	"context"
	"fmt"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// decide takes lane i's next decision if one is due (the lane is created or
// terminal) and records it before acting on it.
//
// A launch of a provider route passes the eligibility gate first (see
// gate): an attempt whose provider may not be routed to is recorded as
// excluded with the rule the lane's fallback applies to it, and the lane
// is decided again. When the fallback moves on from the exclusion's
// outcome class, its group joins the lane's excluded groups, so
// policy.Next skips it the way it skips an exhausted group and the lane
// moves to its next authorized attempt (or stops chain-exhausted);
// otherwise the lane stops with reason excluded.
//
// The decision is policy.Next(lane policy, lane state, nil): the engine
// never passes live file facts. They only feed the continuation readiness
// gate, whose prepared execution the engine itself creates fresh, and a nil
// FileFacts makes every decision a pure function of the log, which is what
// Replay recomputes.
func (d *driver) decide(ctx context.Context, i int) error {
	l := d.r.Lanes[i]
	if l.State != machines.StateCreated && l.State != machines.StateTerminal {
		return nil
	}
	// Each exclusion moves the lane's excluded groups on, so the lane is
	// decided again at most once per attempt.
	excluded := map[int]bool{}
	for range len(l.Policy.Attempts) + 1 {
		st, err := d.r.LaneState(i)
		if err != nil {
			return err
		}
		dec, rec, err := decision(d.r, i, st)
		if err != nil {
			return err
		}
		if awaitingRecovery(st, dec) {
			// Not recorded: the lane waits for the parent's recover (see
			// recover.go); its answer makes the next decision.
			return nil
		}
		attempt := -1
		if dec.AttemptIndex != nil {
			attempt = *dec.AttemptIndex
		}
		d.log.Info("decision", "lane", i, "kind", dec.Kind, "reason", dec.Reason, "attempt", attempt)
		if gated(dec) {
			if excluded[attempt] {
				return fmt.Errorf("lane %d: attempt %d was excluded yet decided again: the fold does not skip its group", i, attempt)
			}
			ex, override, err := d.gate(ctx, i, rec)
			if err != nil {
				return err
			}
			if ex != nil {
				if err := d.appendEvent(ctx, i, *ex); err != nil {
					return err
				}
				excluded[attempt] = true
				continue
			}
			if override != nil {
				if err := d.audit(ctx, i, *override); err != nil {
					return err
				}
			}
		}
		return d.act(ctx, i, dec, rec)
	}
	return fmt.Errorf("lane %d: more exclusions than attempts", i)
}

// act records decision dec of lane i (and publishes its job for a launch).
func (d *driver) act(ctx context.Context, i int, dec policy.Decision, rec events.Decided) error {
	switch dec.Kind {
	case policy.DecideLaunch, policy.DecideContinue:
		return d.launch(ctx, i, rec)
	case policy.DecideInspect:
		return d.appendEvent(ctx, i, events.Inspect(rec))
	case policy.DecideParentOperation:
		return d.appendEvent(ctx, i, events.RequestOperation(rec))
	case policy.DecideStop:
		if dec.Reason == string(policy.StopComplete) {
			return d.appendEvent(ctx, i, events.Complete(rec))
		}
		return d.appendEvent(ctx, i, events.Stop(rec))
	case policy.DecidePolicyDenied:
		return d.appendEvent(ctx, i, events.Stop(rec))
	}
	return fmt.Errorf("lane %d: policy.Next returned unknown decision kind %q", i, dec.Kind)
}

// decision computes lane i's decision from st and the record every decision
// event carries. Replay calls it with the same fold at the same point.
//
// A lane whose exclusion stopped it (machines.Run.StoppingExclusion) is
// decided stop with reason excluded: the sheet's fallback does not move on
// from the exclusion's outcome class, and policy.Next, which knows nothing
// of the gate, would launch the excluded attempt again.
func decision(r *machines.Run, i int, st policy.LaneState) (policy.Decision, events.Decided, error) {
	lp := r.Lanes[i].Policy
	dec := policy.Next(lp, st, nil)
	if _, stopped := r.StoppingExclusion(i); stopped {
		dec = policy.Stop(policy.StopExcluded)
	}
	in, err := r.LaneInput(i)
	if err != nil {
		return dec, events.Decided{}, fmt.Errorf("lane %d: input digest: %w", i, err)
	}
	digest, err := in.Digest(st)
	if err != nil {
		return dec, events.Decided{}, fmt.Errorf("lane %d: input digest: %w", i, err)
	}
	return dec, events.Decided{Decision: dec, InputDigest: digest, SheetDigest: r.Created.SheetDigest}, nil
}
