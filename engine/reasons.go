package engine

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// Reason codes of an attempt that never ran (AttemptReport.Code), besides
// the eligibility gate's policy.ExclusionCode values.
const (
	// CodeGroupExhausted: the attempt's provider group was exhausted in the
	// run (a group-exhausted event) before the lane reached it.
	CodeGroupExhausted = "group-exhausted"
	// CodeUnauthorized: the saved policy does not authorize the attempt;
	// the lane stopped unauthorized there.
	CodeUnauthorized = string(policy.StopUnauthorized)
)

// laneReason is the reason a final lane shows: the recorded reason (the
// stop, denial or cancel reason), and with it what the recorded decision
// alone does not say. An unauthorized stop names the blocked attempt and
// its authorization reason ("unauthorized: <authorization reason> (attempt
// N d)"); an excluded stop names the exclusion and the fallback rule that
// stopped the lane; a chain-exhausted stop whose remaining attempts were excluded
// before launch names each exclusion. excl are the lane's exclude events
// in log order.
//
// A not-eligible stop says which of its causes it was ("not-eligible:
// <cause>"): the attempt was stopped while it ran (a cancelled receipt:
// its run was interrupted or its worker stopped), it was abandoned, it
// failed, its outcome is not in # fallback, or the parent's operation
// failed. fin is the lane's last finish (nil if none is known); the
// decision's own reason, the POLICY-CLI contract's, stays "not-eligible".
func laneReason(l machines.LaneRecord, excl []events.Exclude, fin *events.Finish) string {
	if l.State != machines.StateStopped {
		return l.Reason
	}
	switch l.Reason {
	case string(policy.StopNotEligible):
		if c := notEligibleCause(l, fin); c != "" {
			return l.Reason + ": " + c
		}
	case string(policy.StopUnauthorized):
		if k, ok := blockedAttempt(l); ok {
			ap := l.Policy.Attempts[k]
			return fmt.Sprintf("%s: %s (attempt %d %s)", l.Reason, authorizationReason(ap), k, ap.Descriptor)
		}
	case string(policy.StopExcluded):
		for _, x := range excl {
			if x.Rule == policy.ExclusionStops {
				return fmt.Sprintf("%s: attempt %d %s; %s", l.Reason, x.AttemptIndex, exclusionText(x), exclusionRuleText(x, l.Policy.Fallback))
			}
		}
	case string(policy.StopChainExhausted):
		from := scanFrom(l)
		var parts []string
		for _, x := range excl {
			if x.AttemptIndex >= from {
				parts = append(parts, exclusionText(x))
			}
		}
		if len(parts) > 0 {
			return fmt.Sprintf("%s; excluded before launch: %s", l.Reason, strings.Join(parts, "; "))
		}
	}
	return l.Reason
}

// notEligibleCause says why policy.Next stopped lane l not-eligible, from
// its history's anchor and the lane's last finish fin (nil if none is
// known); "" when the history does not say.
func notEligibleCause(l machines.LaneRecord, fin *events.Finish) string {
	a := policy.Anchor(l.History)
	if a < 0 {
		return ""
	}
	last := l.History[a]
	if last.AttemptIndex < 0 || last.AttemptIndex >= len(l.Policy.Attempts) {
		return ""
	}
	d := fmt.Sprintf("attempt %d %s", last.AttemptIndex, l.Policy.Attempts[last.AttemptIndex].Descriptor)
	if fin != nil && fin.Event.AttemptIndex != last.AttemptIndex {
		fin = nil // not the anchor's finish
	}
	switch {
	case last.Status == policy.OutcomeNeedsParentOp:
		for _, e := range l.History[a+1:] {
			if op := e.ParentOperation; op != nil && e.Status != policy.OutcomeComplete {
				return fmt.Sprintf("the parent's %s operation for %s did not succeed; a failed handoff is not retried", op.Kind, d)
			}
		}
		return ""
	case last.Status == policy.OutcomeFailed && fin != nil && fin.Receipt != nil && fin.Receipt.Status == policy.StatusCancelled:
		return d + " was stopped while it ran (receipt cancelled: its run was interrupted, or the worker running it was stopped); it may have done work, so it is not run again and the lane does not fall back"
	case last.Status == policy.OutcomeFailed && fin != nil && fin.Abandoned:
		return d + " was abandoned (its worker went away without a usable receipt); it may have started, so it is not run again and the lane does not fall back"
	case last.Status == policy.OutcomeFailed:
		what := "failed"
		if fin != nil && fin.Receipt != nil {
			what = "failed (" + string(fin.Receipt.Status) + ")"
		}
		return d + " " + what + "; a failure is not an outcome # fallback moves on from"
	case !l.Policy.Fallback.Allows(last.Status):
		on := make([]string, len(l.Policy.Fallback.On))
		for i, o := range l.Policy.Fallback.On {
			on[i] = string(o)
		}
		list := strings.Join(on, ", ")
		if list == "" {
			list = "nothing"
		}
		return fmt.Sprintf("%s ended %s, which # fallback does not move on from (on: %s)", d, last.Status, list)
	}
	return ""
}

// authorizationReason is why the saved policy blocks ap.
func authorizationReason(ap policy.AttemptPolicy) string {
	if r := strings.TrimSpace(ap.Authorization.Reason); r != "" {
		return r
	}
	return "authorization " + ap.Authorization.State
}

// scanFrom is where policy.Next's scan of lane l's attempts starts: after
// the attempt of the last execution, or at 0.
func scanFrom(l machines.LaneRecord) int {
	if a := policy.Anchor(l.History); a >= 0 {
		return l.History[a].AttemptIndex + 1
	}
	return 0
}

// blockedAttempt is the attempt an unauthorized stop of lane l stopped at:
// policy.Next checks authorization before it skips an exhausted or
// excluded group, so it is the first attempt from the scan's start whose
// authorization is not allowed.
func blockedAttempt(l machines.LaneRecord) (int, bool) {
	for k := scanFrom(l); k < len(l.Policy.Attempts); k++ {
		if !l.Policy.Attempts[k].Authorization.Allowed() {
			return k, true
		}
	}
	return 0, false
}

// laneExclusions groups envs' exclude events by lane, in log order.
func laneExclusions(envs []events.Envelope) map[int][]events.Exclude {
	out := map[int][]events.Exclude{}
	for _, env := range envs {
		if x, ok := env.Payload.(events.Exclude); ok {
			out[env.Lane] = append(out[env.Lane], x)
		}
	}
	return out
}

// HistoryNotes explains the events of a run's whole log (envs, in order)
// whose meaning needs more than their own payload, keyed by sequence: each
// stop with its full reason (an unauthorized stop's authorization reason, a
// chain-exhausted stop's exclusions, an excluded stop's exclusion, as the
// run report shows them), and each exclusion with its descriptor, code,
// detail, report digest and the rule the lane's fallback applied to it.
// `switchyard history` prints these. A log that does not fold explains
// what it folded up to.
func HistoryNotes(envs []events.Envelope) map[uint64]string {
	notes := map[uint64]string{}
	r := &machines.Run{}
	excl := map[int][]events.Exclude{}
	fins := map[int]*events.Finish{}
	for _, env := range envs {
		if err := r.Apply(env); err != nil {
			return notes
		}
		switch p := env.Payload.(type) {
		case events.Finish:
			fins[env.Lane] = &p
		case events.Exclude:
			excl[env.Lane] = append(excl[env.Lane], p)
			note := fmt.Sprintf("attempt %d %s excluded before launch: %s; %s quota, %s capacity",
				p.AttemptIndex, p.Descriptor, exclusionWhy(p), p.Source, p.Verdict.Capacity)
			if p.Report != nil {
				note += ", report acquired " + p.Report.Snapshot.AcquiredAt.UTC().Format("2006-01-02T15:04:05Z") + " " + shortDigest(p.ReportDigest)
			} else {
				note += ", no report"
			}
			notes[env.Seq] = note + "; " + exclusionRuleText(p, r.Lanes[env.Lane].Policy.Fallback)
		case events.Stop:
			notes[env.Seq] = fmt.Sprintf("lane stopped: %s %s", p.Decision.Kind, laneReason(r.Lanes[env.Lane], excl[env.Lane], fins[env.Lane]))
		}
	}
	return notes
}

// shortDigest is a digest's first 12 hex digits, for reading.
func shortDigest(d string) string {
	if h, ok := strings.CutPrefix(d, events.DigestPrefix); ok && len(h) > 12 {
		return events.DigestPrefix + h[:12]
	}
	return d
}
