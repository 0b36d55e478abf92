package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// humanDuration renders 5s, 3m07s or 2h04m.
func humanDuration(d time.Duration) string {
	s := int64(max(d, 0)+500*time.Millisecond) / int64(time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", (n+1<<19)>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func parseISO(s string) time.Time {
	t, _ := time.Parse(isoMillis, s)
	return t
}

// renderLane returns the lane's line and changeKey. The key covers phase,
// child state, cancellation, launcher verdict and terminal facts, and
// deliberately leaves out elapsed time and byte counts, so it changes only
// when something a person should hear about changed.
func renderLane(v laneView, now time.Time) (line, key string) {
	s := v.snap
	var parts []string
	k := []string{v.kind}
	switch v.kind {
	case "terminal":
		parts = append(parts, fmt.Sprintf("terminal %s (receipt)", v.status))
		if s != nil {
			if s.Terminal != nil {
				parts = append(parts, "ran "+humanDuration(parseISO(s.Terminal.At).Sub(parseISO(s.Runner.StartedAt))))
			}
			if v.status == policy.StatusCancelled {
				parts = append(parts, cancelConfirmation(v))
			}
		}
		k = append(k, string(v.status), fmt.Sprint(s != nil && s.Terminal != nil), childKey(s), settledKey(s))
		return strings.Join(parts, "; "), strings.Join(k, "|")
	case "unknown":
		parts = append(parts, "unknown: "+unknownDetail(v), "not a failure verdict")
		k = append(k, v.reason, boolKey(v.receiptWritten))
		if s != nil && v.reason == "launcher-unverified" {
			parts = append(parts, "last seen "+s.Phase, "up "+humanDuration(now.Sub(parseISO(s.Runner.StartedAt))))
			if r := s.Cancellation.Requested; r != nil {
				parts = append(parts, r.Signal+" requested; only the receipt confirms it")
			}
			k = append(k, s.Phase, childKey(s), requestedKey(s), settledKey(s))
		}
		return strings.Join(parts, "; "), strings.Join(k, "|")
	case "interrupted":
		who := "runner process gone"
		if v.reason == "pid-reused" {
			who = "runner pid now belongs to another process"
		}
		parts = append(parts, "interrupted: "+who, "last seen "+s.Phase)
		switch v.child {
		case "possibly-running":
			parts = append(parts, "its CLI child may still be running")
		case "none":
		default:
			parts = append(parts, "CLI child "+v.child)
		}
		parts = append(parts, "not a failure verdict")
		k = append(k, v.reason, v.child, s.Phase)
		return strings.Join(parts, "; "), strings.Join(k, "|")
	}
	parts = append(parts, s.Phase+" for "+humanDuration(now.Sub(parseISO(s.Runner.StartedAt))))
	if c := s.Child; c != nil {
		if c.Running {
			parts = append(parts, string(c.Role)+" child running")
		} else {
			msg := fmt.Sprintf("%s child exited %s", c.Role, intKey(c.ExitCode))
			if !c.Drained {
				msg += ", output pipes still open"
			}
			parts = append(parts, msg)
		}
	}
	if a := s.Activity; a.LastActivityAt == nil {
		parts = append(parts, "no output yet")
	} else {
		parts = append(parts, fmt.Sprintf("last output %s ago (%s)",
			humanDuration(now.Sub(parseISO(*a.LastActivityAt))), humanBytes(a.StdoutBytes+a.StderrBytes)))
	}
	if r := s.Cancellation.Requested; r != nil {
		switch {
		case s.ChildSettled == nil:
			parts = append(parts, r.Signal+" requested, not yet confirmed")
		case s.ChildSettled.Outcome == settledSignalled:
			parts = append(parts, r.Signal+" requested; CLI child signalled and exited")
		default:
			parts = append(parts, r.Signal+" requested; CLI child had already exited")
		}
	} else if st := s.ChildSettled; st != nil {
		parts = append(parts, "deadline passed; CLI child "+map[bool]string{true: "signalled and exited", false: "had already exited"}[st.Outcome == settledSignalled])
	}
	parts = append(parts, "quiet output is not failure")
	k = append(k, s.Phase, childKey(s), "live", requestedKey(s), settledKey(s))
	return strings.Join(parts, "; "), strings.Join(k, "|")
}

func unknownDetail(v laneView) string {
	switch v.reason {
	case "missing":
		return "no progress file or receipt yet"
	case "not-started":
		return "receipt reserved, no progress yet"
	case "terminal-without-receipt":
		if v.receiptWritten != nil && !*v.receiptWritten {
			return "runner finished without writing a receipt"
		}
		return "runner finished but the receipt does not parse"
	case "launcher-unverified":
		return "runner identity cannot be verified"
	}
	return "progress file unreadable (" + v.reason + ")"
}

// cancelConfirmation words a cancelled terminal lane.
func cancelConfirmation(v laneView) string {
	if cancelConfirmed(v) {
		if v.snap.Child == nil {
			return "cancellation confirmed before any CLI started"
		}
		return "cancellation confirmed, CLI child settled (descendants not verified)"
	}
	return "cancellation recorded, child settlement unverified"
}

// cancelConfirmed: a cancelled receipt landed, the snapshot is terminal and
// the direct child (if any) settled.
func cancelConfirmed(v laneView) bool {
	s := v.snap
	return v.kind == "terminal" && v.status == policy.StatusCancelled && s != nil && s.Terminal != nil &&
		(s.Child == nil || (!s.Child.Running && s.ChildSettled != nil))
}

func childKey(s *snapshot) string {
	if s == nil || s.Child == nil {
		return "-"
	}
	return fmt.Sprintf("%s:%t:%s:%t", s.Child.Role, s.Child.Running, intKey(s.Child.ExitCode), s.Child.Drained)
}

func requestedKey(s *snapshot) string {
	if s == nil || s.Cancellation.Requested == nil {
		return "-"
	}
	return s.Cancellation.Requested.Signal
}

func settledKey(s *snapshot) string {
	if s == nil || s.ChildSettled == nil {
		return "-"
	}
	return s.ChildSettled.Outcome + ":" + s.ChildSettled.Cause
}

func intKey(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

func boolKey(p *bool) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// laneBase holds the fields every lane has in `status --json`.
type laneBase struct {
	Lane         int              `json:"lane"`
	Provider     *policy.Provider `json:"provider"`
	AttemptID    *string          `json:"attemptId"`
	Kind         string           `json:"kind"`
	UpdatedAt    *string          `json:"updatedAt"`
	Seq          *int64           `json:"seq"`
	Line         string           `json:"line"`
	ChangeKey    string           `json:"changeKey"`
	ElapsedMs    *int64           `json:"elapsedMs"`
	Cancellation any              `json:"cancellation"`
}

type laneCancellation struct {
	Requested    *string `json:"requested"`
	ChildSettled *string `json:"childSettled"`
	Confirmed    bool    `json:"confirmed"`
}

// laneJSON renders one lane for --json.
func laneJSON(i int, v laneView, line, key string, now time.Time) any {
	s := v.snap
	b := laneBase{Lane: i + 1, Kind: v.kind, Line: line}
	prefix := fmt.Sprint(i + 1)
	if s != nil {
		prov, id, upd, seq := s.Provider, s.AttemptID, s.UpdatedAt, s.Seq
		b.Provider, b.AttemptID, b.UpdatedAt, b.Seq = &prov, &id, &upd, &seq
		prefix = s.AttemptID
		if v.kind != "terminal" || s.Terminal != nil {
			end := now
			if s.Terminal != nil {
				end = parseISO(s.Terminal.At)
			}
			ms := max(end.Sub(parseISO(s.Runner.StartedAt)).Milliseconds(), 0)
			b.ElapsedMs = &ms
		}
		c := laneCancellation{Confirmed: cancelConfirmed(v)}
		if r := s.Cancellation.Requested; r != nil {
			c.Requested = &r.Signal
		}
		if st := s.ChildSettled; st != nil {
			c.ChildSettled = &st.Outcome
		}
		b.Cancellation = c
	}
	b.ChangeKey = prefix + "|" + key
	switch v.kind {
	case "terminal":
		return struct {
			laneBase
			Status policy.ReceiptStatus `json:"status"`
		}{b, v.status}
	case "unknown":
		var phase *string
		if s != nil {
			phase = &s.Phase
		}
		return struct {
			laneBase
			Reason         string  `json:"reason"`
			ReceiptWritten *bool   `json:"receiptWritten"`
			Phase          *string `json:"phase"`
		}{b, v.reason, v.receiptWritten, phase}
	case "interrupted":
		return struct {
			laneBase
			Reason string `json:"reason"`
			Child  string `json:"child"`
			Phase  string `json:"phase"`
		}{b, v.reason, v.child, s.Phase}
	}
	type activeChild struct {
		Role     childRole `json:"role"`
		Running  bool      `json:"running"`
		ExitCode *int      `json:"exitCode"`
		Drained  bool      `json:"drained"`
	}
	type settled struct {
		Outcome string `json:"outcome"`
		Cause   string `json:"cause"`
	}
	type signalOnly struct {
		Signal string `json:"signal"`
	}
	type activeCancellation struct {
		Requested    *signalOnly `json:"requested"`
		ChildSettled *settled    `json:"childSettled"`
	}
	var child *activeChild
	if c := s.Child; c != nil {
		child = &activeChild{c.Role, c.Running, c.ExitCode, c.Drained}
	}
	var ac activeCancellation
	if r := s.Cancellation.Requested; r != nil {
		ac.Requested = &signalOnly{r.Signal}
	}
	if st := s.ChildSettled; st != nil {
		ac.ChildSettled = &settled{st.Outcome, st.Cause}
	}
	b.Cancellation = ac
	return struct {
		laneBase
		Phase     string       `json:"phase"`
		Launcher  string       `json:"launcher"`
		RetryWait bool         `json:"retryWait"`
		Child     *activeChild `json:"child"`
		Activity  snapActivity `json:"activity"`
	}{b, s.Phase, "live", s.RetryWait, child, s.Activity}
}
