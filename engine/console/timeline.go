package console

import (
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Timeline is a run's lanes over time, built from its event log.
type Timeline struct {
	Run   string         `json:"run"`
	Start time.Time      `json:"start"` // the run-created event's time
	End   time.Time      `json:"end"`   // the latest event's time
	Lanes []LaneTimeline `json:"lanes"`
}

// LaneTimeline is one lane's attempts, skipped attempts and waits for the
// parent, in order.
type LaneTimeline struct {
	Lane     int           `json:"lane"`
	Attempts []AttemptSpan `json:"attempts"`
	Skipped  []SkipMark    `json:"skipped"`
	Waits    []WaitSpan    `json:"waits"`
	// Ended is when the lane became final (complete, stop, cancel); nil
	// while it is not.
	Ended *time.Time `json:"ended,omitempty"`
	// EndedBy is the event that made it final.
	EndedBy events.Type `json:"endedBy,omitempty"`
}

// AttemptSpan is one execution: a bar from its launch (or continue) to its
// finish.
type AttemptSpan struct {
	ExecutionID  string         `json:"executionId"`
	AttemptIndex int            `json:"attemptIndex"`
	Descriptor   string         `json:"descriptor"`
	Route        policy.Route   `json:"route"`
	Continued    bool           `json:"continued,omitempty"`
	Launched     time.Time      `json:"launched"`
	Claimed      *time.Time     `json:"claimed,omitempty"`
	Finished     *time.Time     `json:"finished,omitempty"`
	WorkerID     string         `json:"workerId,omitempty"`
	Outcome      policy.Outcome `json:"outcome,omitempty"`
	Abandoned    bool           `json:"abandoned,omitempty"`
}

// SkipMark is an attempt the eligibility gate excluded before launch.
type SkipMark struct {
	At           time.Time            `json:"at"`
	AttemptIndex int                  `json:"attemptIndex"`
	Descriptor   string               `json:"descriptor"`
	Code         policy.ExclusionCode `json:"code"`
	Detail       string               `json:"detail,omitempty"`
}

// WaitSpan is a wait for the parent: an inspection verdict or a parent
// operation, from the request to the answer (nil To: still waiting).
type WaitSpan struct {
	Kind   string     `json:"kind"` // verdict or operation
	From   time.Time  `json:"from"`
	To     *time.Time `json:"to,omitempty"`
	Answer string     `json:"answer,omitempty"`
}

// BuildTimeline folds a run's events (store order) into its timeline.
// Events it has no bar for (claims of unknown executions, audits) are
// ignored; it never fails.
func BuildTimeline(envs []events.Envelope) Timeline {
	var t Timeline
	lane := func(i int) *LaneTimeline {
		if i < 0 || i > events.MaxLanes {
			return nil
		}
		for len(t.Lanes) <= i {
			t.Lanes = append(t.Lanes, LaneTimeline{Lane: len(t.Lanes), Attempts: []AttemptSpan{}, Skipped: []SkipMark{}, Waits: []WaitSpan{}})
		}
		return &t.Lanes[i]
	}
	at := func(x time.Time) *time.Time { return &x }
	for i, env := range envs {
		if i == 0 {
			t.Run, t.Start = env.Run, env.Time
		}
		t.End = env.Time
		switch p := env.Payload.(type) {
		case events.RunCreated:
			for j := range p.Lanes {
				lane(j)
			}
		case events.Launch:
			if l := lane(env.Lane); l != nil {
				l.Attempts = append(l.Attempts, AttemptSpan{ExecutionID: p.ExecutionID, AttemptIndex: p.AttemptIndex,
					Descriptor: p.Descriptor, Route: p.Route, Launched: env.Time})
			}
		case events.Continue:
			if l := lane(env.Lane); l != nil {
				l.Attempts = append(l.Attempts, AttemptSpan{ExecutionID: p.ExecutionID, AttemptIndex: p.AttemptIndex,
					Descriptor: p.Descriptor, Route: p.Route, Continued: true, Launched: env.Time})
			}
		case events.Claim:
			if a := findAttempt(lane(env.Lane), p.ExecutionID); a != nil {
				a.Claimed, a.WorkerID = at(env.Time), p.WorkerID
			}
		case events.Finish:
			if a := findAttempt(lane(env.Lane), p.ExecutionID); a != nil {
				a.Finished, a.Outcome, a.Abandoned = at(env.Time), p.Event.Status, p.Abandoned
			}
		case events.Exclude:
			if l := lane(env.Lane); l != nil {
				l.Skipped = append(l.Skipped, SkipMark{At: env.Time, AttemptIndex: p.AttemptIndex, Descriptor: p.Descriptor,
					Code: p.Verdict.Code, Detail: p.Verdict.Detail})
			}
		case events.Inspect:
			if l := lane(env.Lane); l != nil {
				l.Waits = append(l.Waits, WaitSpan{Kind: "verdict", From: env.Time})
			}
		case events.RequestOperation:
			if l := lane(env.Lane); l != nil {
				l.Waits = append(l.Waits, WaitSpan{Kind: "operation", From: env.Time})
			}
		case events.Verdict:
			closeWait(lane(env.Lane), "verdict", env.Time, string(p.State))
		case events.OperationDone:
			closeWait(lane(env.Lane), "operation", env.Time, string(p.Result))
		case events.Complete, events.Stop, events.Cancel:
			if env.Lane == events.RunLane {
				continue // a run-level cancel: each lane gets its own
			}
			if l := lane(env.Lane); l != nil && l.Ended == nil {
				l.Ended, l.EndedBy = at(env.Time), env.Type
				for k := range l.Waits {
					if l.Waits[k].To == nil {
						l.Waits[k].To, l.Waits[k].Answer = at(env.Time), string(env.Type)
					}
				}
			}
		}
	}
	if t.Lanes == nil {
		t.Lanes = []LaneTimeline{}
	}
	return t
}

func findAttempt(l *LaneTimeline, id string) *AttemptSpan {
	if l == nil {
		return nil
	}
	for i := len(l.Attempts) - 1; i >= 0; i-- {
		if l.Attempts[i].ExecutionID == id {
			return &l.Attempts[i]
		}
	}
	return nil
}

func closeWait(l *LaneTimeline, kind string, at time.Time, answer string) {
	if l == nil {
		return
	}
	for i := len(l.Waits) - 1; i >= 0; i-- {
		if w := &l.Waits[i]; w.Kind == kind && w.To == nil {
			w.To, w.Answer = &at, answer
			return
		}
	}
}
