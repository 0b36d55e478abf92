package machines_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// Fixtures for run logs. Every envelope passes events' own Validate, so the
// fold is exercised on events the engine could really record.

const runID = "run-1"

var (
	digestA = events.Digest([]byte("input"))
	sheet   = []byte("# frozen sheet\n")
	t0      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// lanePolicy is a lane whose attempts are claude then codex, each its own
// exhaustion group, with the given fallback outcomes.
func lanePolicy(id string, fallback ...policy.Outcome) policy.LanePolicy {
	lp := policy.LanePolicy{ID: id, Fallback: policy.FallbackPolicy{On: fallback}}
	for _, p := range []policy.Provider{policy.Claude, policy.Codex} {
		lp.Attempts = append(lp.Attempts, policy.AttemptPolicy{
			Descriptor:      string(p) + ":model@high",
			Attempt:         policy.Attempt{Kind: policy.KindDescriptor, Provider: p, Model: "model", Effort: policy.EffortHigh},
			ExhaustionGroup: p,
			Funding:         policy.FundingIncluded,
			APISpend:        policy.APISpendDeny,
			Route:           policy.RouteExternal,
			Authorization:   policy.Authorization{State: "allowed"},
		})
	}
	return lp
}

// runLog builds a run's log, numbering envelopes from seq 1.
type runLog struct {
	t    testing.TB
	envs []events.Envelope
}

func newRunLog(t testing.TB, access policy.Access, lanes ...policy.LanePolicy) *runLog {
	l := &runLog{t: t}
	return l.add(events.RunLane, events.RunCreated{
		Sheet: sheet, SheetDigest: events.Digest(sheet), Role: "swarm workers",
		Parent: policy.ParentClaude, Access: access,
		PromptDigest: digestA, PromptPath: "/data/prompt.md", Cwd: "/work/repo",
		Lanes: lanes, Options: events.RunOptions{Contract: policy.ContractLegacy},
	})
}

func (l *runLog) add(lane int, p events.Payload) *runLog {
	l.t.Helper()
	env := events.NewEnvelope(runID, lane, t0.Add(time.Duration(len(l.envs))*time.Second), p)
	env.Seq = uint64(len(l.envs) + 1)
	require.NoError(l.t, env.Validate(), "fixture %s must be a valid event", env.Type)
	l.envs = append(l.envs, env)
	return l
}

func decided(d policy.Decision) events.Decided {
	return events.Decided{Decision: d, InputDigest: digestA, SheetDigest: events.Digest(sheet)}
}

func launchP(attempt int, exec string) events.Launch {
	provider := []string{"claude", "codex", "grok"}[attempt]
	dir := "/data/runs/" + runID + "/" + exec + "/"
	return events.Launch{
		Decision:    policy.Decision{Kind: policy.DecideLaunch, AttemptIndex: &attempt, Execution: 1},
		InputDigest: digestA, SheetDigest: events.Digest(sheet),
		ExecutionID: exec, AttemptIndex: attempt, Descriptor: provider + ":model@high",
		Route: policy.RouteExternal, JobSubject: events.JobSubject(provider),
		Paths: events.Paths{Prompt: dir + "prompt", Output: dir + "output", Receipt: dir + "receipt.json", Progress: dir + "progress.json", Cwd: "/work/repo"},
	}
}

func continueP(attempt int, exec string, execution int) events.Continue {
	c := events.Continue(launchP(attempt, exec))
	c.Decision.Kind, c.Decision.Execution = policy.DecideContinue, execution
	return c
}

func claimP(exec string) events.Claim {
	return events.Claim{ExecutionID: exec, WorkerID: "host-a:42", Lease: events.LeaseInfo{TTLMs: 30000, Revision: 1}}
}

func finishP(exec string, ev policy.Event) events.Finish {
	return events.Finish{ExecutionID: exec, WorkerID: "host-a:42", Host: &events.HostMetadata{Status: ev.Status, ProcessStarted: ev.ProcessStarted}, Event: ev}
}

func outcome(attempt int, status policy.Outcome, started bool) policy.Event {
	return policy.Event{AttemptIndex: attempt, Status: status, ProcessStarted: &started, ReceiptPath: fmt.Sprintf("/data/r%d.json", attempt)}
}

var handoff = policy.Handoff{Operation: policy.OpCommitCheckpoint, TaskID: "task-1", CheckpointID: "cp-1"}

func inspectP() events.Inspect {
	return events.Inspect(decided(policy.Decision{Kind: policy.DecideInspect, Reason: policy.InspectReasonStartedWriter}))
}

func verdictP(s events.VerdictState) events.Verdict {
	return events.Verdict{State: s, EvidenceRef: "diff and tool log reviewed", By: "parent"}
}

func requestP(attempt int) events.RequestOperation {
	return events.RequestOperation(decided(policy.Decision{
		Kind: policy.DecideParentOperation, AttemptIndex: &attempt,
		Operation: &policy.Operation{Kind: handoff.Operation, TaskID: handoff.TaskID, CheckpointID: handoff.CheckpointID},
	}))
}

func opDoneP(r events.OperationResult) events.OperationDone {
	return events.OperationDone{
		Operation: policy.ParentOperation{Kind: handoff.Operation, TaskID: handoff.TaskID, CheckpointID: handoff.CheckpointID},
		Result:    r, Ref: "commit abc123",
	}
}

func completeP() events.Complete { return events.Complete(decided(policy.Stop(policy.StopComplete))) }

func stopP(r policy.StopReason) events.Stop { return events.Stop(decided(policy.Stop(r))) }

func deniedP(r policy.DenyReason) events.Stop { return events.Stop(decided(policy.Deny(r))) }

func cancelP() events.Cancel { return events.Cancel{Reason: "operator cancelled", By: "alice"} }

func exhaustedP(p policy.Provider, lane int, exec string) events.GroupExhausted {
	return events.GroupExhausted{Provider: p, FromLane: lane, ExecutionID: exec}
}

func auditP() events.Audit {
	return events.Audit{Reason: events.AuditDuplicateReport, ExecutionID: "e1"}
}

func finalP(states ...events.FinalState) events.RunFinal {
	f := events.RunFinal{}
	for i, s := range states {
		f.Lanes = append(f.Lanes, events.LaneResult{Lane: i, LaneID: fmt.Sprintf("lane#%d", i+1), State: s})
	}
	return f
}

// excludeP excludes attempt (claude:model@high or codex:model@high, as
// lanePolicy builds them) with code; quota_exhausted ones carry their
// reset, and every one carries the report it was computed from.
func excludeP(attempt int, code policy.ExclusionCode) events.Exclude {
	provider := []policy.Provider{policy.Claude, policy.Codex}[attempt]
	report := eventstest.SampleCapacityReport(provider, t0)
	v := policy.EligibilityVerdict{Code: code, Capacity: policy.EvidenceMeasured, Detail: string(provider) + " is not eligible"}
	if code == policy.ExcludeQuotaExhausted {
		until := t0.Add(3 * time.Hour)
		v.Until = &until
	}
	return events.Exclude{
		AttemptIndex: attempt, Descriptor: string(provider) + ":model@high", Provider: provider, Source: report.Snapshot.Source,
		Verdict: v, Report: &report, ReportDigest: eventstest.SampleReportDigest(report),
		EvaluatedAt: t0.Add(time.Minute), MaxAgeMs: 900000, InputDigest: digestA, SheetDigest: events.Digest(sheet),
	}
}
