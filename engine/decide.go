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
func decision(r *machines.Run, i int, st policy.LaneState) (policy.Decision, events.Decided, error) {
	lp := r.Lanes[i].Policy
	dec := policy.Next(lp, st, nil)
	digest, err := events.InputDigest(lp, st)
	if err != nil {
		return dec, events.Decided{}, fmt.Errorf("lane %d: input digest: %w", i, err)
	}
	return dec, events.Decided{Decision: dec, InputDigest: digest, SheetDigest: r.Created.SheetDigest}, nil
}
