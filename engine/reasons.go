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
func laneReason(l machines.LaneRecord, excl []events.Exclude) string {
	if l.State != machines.StateStopped {
		return l.Reason
	}
	switch l.Reason {
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
	for _, env := range envs {
		if err := r.Apply(env); err != nil {
			return notes
		}
		switch p := env.Payload.(type) {
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
			notes[env.Seq] = fmt.Sprintf("lane stopped: %s %s", p.Decision.Kind, laneReason(r.Lanes[env.Lane], excl[env.Lane]))
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
