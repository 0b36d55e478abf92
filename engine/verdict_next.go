package engine

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// AfterVerdict says in words what lane i of r, inspecting, does once a
// verdict of state applies: the decision the engine will take is
// policy.Next on the lane with the verdict on its latest outcome, exactly
// as decide computes it. from is the reviewed state a clear verdict names
// ("" for none). Only a launch has a next writer, so only then does the
// text say where the next writer starts; a writer that handed off an
// operation goes on to that operation, and a lane with no attempt left
// stops. The eligibility gate may still exclude the named attempt when it
// launches; the live notice then says so.
func AfterVerdict(r *machines.Run, i int, state events.VerdictState, from string) string {
	if state != events.VerdictClear {
		return "the lane stops (" + string(policy.StopUnsafeWriter) + ")"
	}
	st, err := r.LaneState(i)
	if err != nil || len(st.Events) == 0 {
		return ""
	}
	last := &st.Events[len(st.Events)-1]
	last.Inspection = &policy.Inspection{State: string(events.VerdictClear), EvidenceRef: "pending"}
	l := r.Lanes[i]
	dec := policy.Next(l.Policy, st, nil)
	if _, stopped := r.StoppingExclusion(i); stopped {
		dec = policy.Stop(policy.StopExcluded)
	}
	unused := ""
	if from != "" {
		unused = fmt.Sprintf(" (--from %s is recorded with the verdict, but no writer starts from it)", from)
	}
	switch {
	case dec.Kind == policy.DecideLaunch && dec.AttemptIndex != nil:
		k := *dec.AttemptIndex
		start := "the checkout's HEAD (no --from)"
		if from != "" {
			start = from
		}
		return fmt.Sprintf("the next writer, attempt %d %s, starts from %s", k, l.Policy.Attempts[k].Descriptor, start)
	case dec.Kind == policy.DecideParentOperation && dec.Operation != nil:
		op := dec.Operation
		return fmt.Sprintf("no writer follows: the lane goes on to the %s the writer handed off (task %s, checkpoint %s)%s; next: %s",
			op.Kind, op.TaskID, op.CheckpointID, unused, OperationSteps(r.ID, i))
	case awaitingRecovery(st, dec):
		return fmt.Sprintf("no writer follows yet: the lane waits for the parent's recovery%s: switchyard recover --run %s --lane %d --evidence REF --clear ... (or --decline)", unused, r.ID, i)
	case dec.Kind == policy.DecideContinue && dec.AttemptIndex != nil:
		return fmt.Sprintf("the lane continues attempt %d %s%s", *dec.AttemptIndex, l.Policy.Attempts[*dec.AttemptIndex].Descriptor, unused)
	case dec.Kind == policy.DecideStop && dec.Reason == string(policy.StopChainExhausted):
		return fmt.Sprintf("no writer follows: no attempt is left in the lane's chain, so the lane stops (%s)%s", dec.Reason, unused)
	}
	return fmt.Sprintf("no writer follows: the lane stops (%s)%s", dec.Reason, unused)
}
