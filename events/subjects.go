package events

import (
	"strconv"
	"strings"
)

// Subject layout. Every token below is validated before it reaches a
// subject, so no id can inject a wildcard or an extra token.
//
//	sy.ev.<run>.L<lane>     one lane's events            (EventSubject)
//	sy.ev.<run>.run         the run's own events         (EventSubject with RunLane)
//	sy.job.<provider>       jobs for one provider        (JobSubject)
//	sy.job.native.<parent>  native jobs for one parent   (NativeJobSubject)
//	sy.rep.<run>.L<lane>    worker reports for one lane  (ReportSubject)
//	sy.cmd.<worker>.<cmd>   worker commands, request-reply, no stream
//	                        (CommandSubject; <worker> is the digest of
//	                        the worker id, <cmd> one of WorkerCommands)
const (
	EventSubjectPrefix  = "sy.ev."  // events stream subjects: sy.ev.>
	JobSubjectPrefix    = "sy.job." // jobs stream subjects: sy.job.>
	ReportSubjectPrefix = "sy.rep." // reports stream subjects: sy.rep.>
	WorkerSubjectPrefix = "sy.wk."  // workers (presence) stream subjects: sy.wk.<digest of the worker id>
	nativeToken         = "native"
	runToken            = "run"
)

// RunLane is the lane index of run-level events (subject sy.ev.<run>.run);
// in JSON the lane key is then omitted.
const RunLane = -1

// LaneToken is the subject token of a lane: "L<index>", or "run" for
// RunLane. Lane indexes are 0-based positions in the run's resolved lanes.
func LaneToken(lane int) string {
	if lane == RunLane {
		return runToken
	}
	return "L" + strconv.Itoa(lane)
}

// ParseLaneToken is the inverse of LaneToken.
func ParseLaneToken(tok string) (int, error) {
	if tok == runToken {
		return RunLane, nil
	}
	if len(tok) < 2 || tok[0] != 'L' || (tok[1] == '0' && len(tok) > 2) || strings.Trim(tok[1:], "0123456789") != "" {
		// Digits only: strconv.Atoi alone would also take "L+1" and "L-0",
		// second spellings of L1 and L0.
		return 0, invalidf("lane token %q: want L<index> or run", tok)
	}
	n, err := strconv.Atoi(tok[1:])
	if err != nil || n < 0 || n > MaxLanes {
		return 0, invalidf("lane token %q: want L<index> or run", tok)
	}
	return n, nil
}

// EventSubject is sy.ev.<run>.<LaneToken(lane)>. The run id must be valid
// (ValidateRunID); Store methods check it.
func EventSubject(run string, lane int) string {
	return EventSubjectPrefix + run + "." + LaneToken(lane)
}

// onEventSubject reports whether subject is EventSubject(run, lane),
// without building it (checkStored asks it of every event it loads).
func onEventSubject(subject, run string, lane int) bool {
	rest, ok := strings.CutPrefix(subject, EventSubjectPrefix)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, run); !ok || !strings.HasPrefix(rest, ".") {
		return false
	}
	if lane == RunLane {
		return rest[1:] == runToken
	}
	var b [24]byte
	return rest[1:] == string(strconv.AppendInt(append(b[:0], 'L'), int64(lane), 10))
}

// RunEventsFilter matches every event subject of one run: sy.ev.<run>.>.
func RunEventsFilter(run string) string { return EventSubjectPrefix + run + ".>" }

// ParseEventSubject splits sy.ev.<run>.<lane> into its run id and lane.
func ParseEventSubject(subject string) (run string, lane int, err error) {
	rest, ok := strings.CutPrefix(subject, EventSubjectPrefix)
	toks := strings.Split(rest, ".")
	if !ok || len(toks) != 2 {
		return "", 0, invalidf("event subject %q: want sy.ev.<run>.<lane>", subject)
	}
	if err := ValidateRunID(toks[0]); err != nil {
		return "", 0, err
	}
	lane, err = ParseLaneToken(toks[1])
	return toks[0], lane, err
}

// JobSubject is sy.job.<provider>: the work queue of one provider's workers.
func JobSubject(provider string) string { return JobSubjectPrefix + provider }

// NativeJobSubject is sy.job.native.<parent>: native-route jobs that the
// parent harness claims itself (switchyard native next).
func NativeJobSubject(parent string) string {
	return JobSubjectPrefix + nativeToken + "." + parent
}

// ValidateJobSubject accepts exactly the subjects JobSubject and
// NativeJobSubject build from valid names.
func ValidateJobSubject(subject string) error {
	rest, ok := strings.CutPrefix(subject, JobSubjectPrefix)
	if native, isNative := strings.CutPrefix(rest, nativeToken+"."); isNative {
		rest = native
	}
	if !ok || rest == nativeToken || ValidateProvider(rest) != nil {
		_, err := jobQueueName(subject) // the error names the forms
		return err
	}
	return nil
}

// jobQueueName returns the durable consumer name shared by every consumer of
// a job subject: jobs_<provider> or jobs_native_<parent>. Provider and
// parent names cannot contain '_', so the two forms never collide.
func jobQueueName(subject string) (string, error) {
	rest, ok := strings.CutPrefix(subject, JobSubjectPrefix)
	toks := strings.Split(rest, ".")
	switch {
	case ok && len(toks) == 1 && toks[0] != nativeToken && ValidateProvider(toks[0]) == nil:
		return "jobs_" + toks[0], nil
	case ok && len(toks) == 2 && toks[0] == nativeToken && ValidateProvider(toks[1]) == nil:
		return "jobs_native_" + toks[1], nil
	}
	return "", invalidf("job subject %q: want sy.job.<provider> or sy.job.native.<parent>", subject)
}

// ReportSubject is sy.rep.<run>.<LaneToken(lane)>.
func ReportSubject(run string, lane int) string {
	return ReportSubjectPrefix + run + "." + LaneToken(lane)
}

// RunReportsFilter matches every report subject of one run: sy.rep.<run>.>.
func RunReportsFilter(run string) string { return ReportSubjectPrefix + run + ".>" }

// reportSubjectRun is the run token of a reports-stream subject
// (sy.rep.<run>.<lane or ctl>), or "" when subject is not one.
func reportSubjectRun(subject string) string {
	rest, ok := strings.CutPrefix(subject, ReportSubjectPrefix)
	if !ok {
		return ""
	}
	run, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return run
}
