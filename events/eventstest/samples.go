package eventstest

import (
	"fmt"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// T0 is the fixed time of sample events; offsets of it keep goldens stable.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)

// SampleSheet is the frozen sheet of sample runs.
var SampleSheet = []byte("# Switchyard model sheet\n# fallback: {\"on\":[\"usage-exhausted\"]}\n\nbug-fix: codex:gpt-5.6-sol@max -> grok:grok-4.7@xhigh\n")

// SampleInputDigest stands in for a decision's policy-input digest.
var SampleInputDigest = events.Digest([]byte(`{"lane":{},"state":{}}`))

func ptr[T any](v T) *T { return &v }

var sampleAttempt = policy.AttemptPolicy{
	Descriptor:      "codex:gpt-5.6-sol@max",
	Attempt:         policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Codex, Model: "gpt-5.6-sol", Effort: policy.EffortMax},
	ExhaustionGroup: policy.Codex,
	Funding:         policy.FundingIncluded,
	APISpend:        policy.APISpendDeny,
	Route:           policy.RouteExternal,
	Authorization:   policy.Authorization{State: "allowed"},
}

// SampleLane is the resolved lane of sample runs.
var SampleLane = policy.LanePolicy{
	ID:       "bug-fix#1",
	Attempts: []policy.AttemptPolicy{sampleAttempt},
	Fallback: policy.DefaultFallback(),
}

// SamplePaths are the files of sample executions.
func SamplePaths(run string, lane int, execution string) events.Paths {
	dir := fmt.Sprintf("/var/lib/switchyard/runs/%s/L%d/%s", run, lane, execution)
	return events.Paths{
		Prompt: dir + "/prompt.md", Output: dir + "/output.md", Receipt: dir + "/receipt.json",
		Progress: dir + "/progress.json", Cwd: "/srv/checkout",
	}
}

const sampleReceiptJSON = `{"schemaVersion":2,"status":"complete","parent":"claude","provider":"codex",
"model":"gpt-5.6-sol","effort":"max","mode":"read-only","cwd":"/srv/checkout",
"promptPath":"/var/lib/switchyard/runs/R/L0/x1/prompt.md","outputPath":"/var/lib/switchyard/runs/R/L0/x1/output.md",
"receiptPath":"/var/lib/switchyard/runs/R/L0/x1/receipt.json","executionId":"x1",
"canonicalPaths":{"cwd":"/srv/checkout","output":"/var/lib/switchyard/runs/R/L0/x1/output.md","receipt":"/var/lib/switchyard/runs/R/L0/x1/receipt.json"},
"startedAt":"2026-11-29T12:00:00.000Z","completedAt":"2026-11-29T12:07:41.512Z","elapsedMs":461512,
"executable":"/usr/local/bin/codex","preflight":{"argv":["codex","login","status"],"status":"passed","evidence":"Logged in"},
"argv":["codex","exec","--model","gpt-5.6-sol","--json","-"],"exitCode":0,"signal":null,"reportedModel":null,
"modelVerified":false,"modelEvidence":"pinned-argv","sessionId":null,"usage":{"inputTokens":1200,"outputTokens":300},
"costUsd":null,"error":null,"failurePhase":null,"processStarted":true,"apiSpend":"deny","contract":"legacy","timeoutMs":1800000}`

// SampleReceipt is a decoded schema 2 complete receipt.
func SampleReceipt() *policy.Receipt {
	r, err := policy.DecodeReceipt([]byte(sampleReceiptJSON))
	if err != nil {
		panic(err)
	}
	return r
}

// SamplePayload returns a valid, fully populated payload of type t.
func SamplePayload(t events.Type) events.Payload {
	launch := policy.Decision{Kind: policy.DecideLaunch, AttemptIndex: ptr(0), Attempt: &sampleAttempt, Execution: 1}
	dispatch := events.Launch{
		Decision: launch, InputDigest: SampleInputDigest, SheetDigest: events.Digest(SampleSheet),
		ExecutionID: "x1", AttemptIndex: 0, Descriptor: sampleAttempt.Descriptor, Route: policy.RouteExternal,
		JobSubject: events.JobSubject("codex"), Paths: SamplePaths("R", 0, "x1"),
	}
	decided := func(d policy.Decision) events.Decided {
		return events.Decided{Decision: d, InputDigest: SampleInputDigest, SheetDigest: events.Digest(SampleSheet)}
	}
	switch t {
	case events.TypeRunCreated:
		return events.RunCreated{
			Sheet: SampleSheet, SheetDigest: events.Digest(SampleSheet), Role: "bug-fix",
			Parent: policy.ParentClaude, Access: policy.ReadOnly,
			PromptDigest: events.Digest([]byte("Fix the flaky test.\n")), PromptPath: "/srv/checkout/.prompt.md",
			Cwd: "/srv/checkout", Lanes: []policy.LanePolicy{SampleLane},
			Options: events.RunOptions{Contract: policy.ContractLegacy, TimeoutMs: 1800000, AllowUnknownQuota: []policy.Provider{policy.Grok},
				StallTimeoutMs: 600000, ProviderStallTimeoutMs: map[policy.Provider]int64{policy.Grok: 120000}},
		}
	case events.TypeGroupExhausted:
		return events.GroupExhausted{Provider: policy.Codex, FromLane: 0, ExecutionID: "x1"}
	case events.TypeRunFinal:
		return events.RunFinal{
			Lanes:          []events.LaneResult{{Lane: 0, LaneID: "bug-fix#1", State: events.FinalComplete, Descriptor: sampleAttempt.Descriptor}},
			Summary:        "1 lane: 1 complete",
			ReportsThrough: 7,
		}
	case events.TypeLaunch:
		return dispatch
	case events.TypeContinue:
		c := events.Continue(dispatch)
		c.Decision = policy.Decision{Kind: policy.DecideContinue, AttemptIndex: ptr(0), Attempt: &sampleAttempt, Execution: 2,
			PreparedExecution: &policy.ExecutionIdentity{ID: "x2", OutputPath: "/var/lib/switchyard/runs/R/L0/x2/output.md",
				ReceiptPath: "/var/lib/switchyard/runs/R/L0/x2/receipt.json", WorkspacePath: "/srv/checkout",
				Descriptor: sampleAttempt.Descriptor, APISpend: policy.APISpendDeny, Access: policy.ReadOnly, Contract: policy.ContractLegacy}}
		c.ExecutionID, c.Paths = "x2", SamplePaths("R", 0, "x2")
		return c
	case events.TypeClaim:
		return events.Claim{ExecutionID: "x1", WorkerID: "worker-a:4242", Lease: events.LeaseInfo{TTLMs: 15000, Revision: 3}, ReportSeq: 1}
	case events.TypeFinish:
		return events.Finish{
			ExecutionID: "x1", WorkerID: "worker-a:4242", ReceiptDigest: events.Digest([]byte(sampleReceiptJSON)),
			Receipt: SampleReceipt(),
			Event: policy.Event{AttemptIndex: 0, Status: policy.OutcomeComplete, ProcessStarted: ptr(true),
				ReceiptPath: "/var/lib/switchyard/runs/R/L0/x1/receipt.json"},
			ReportSeq: 2,
		}
	case events.TypeInspect:
		return events.Inspect(decided(policy.Decision{Kind: policy.DecideInspect, Reason: policy.InspectReasonStartedWriter}))
	case events.TypeVerdict:
		return events.Verdict{State: events.VerdictClear, EvidenceRef: "git:3f2c1ab", By: "claude"}
	case events.TypeRequestOperation:
		return events.RequestOperation(decided(policy.Decision{Kind: policy.DecideParentOperation, AttemptIndex: ptr(0),
			Operation: &policy.Operation{Kind: policy.OpRunChecks, TaskID: "t1", CheckpointID: "c1"}}))
	case events.TypeOperationDone:
		return events.OperationDone{Operation: policy.ParentOperation{Kind: policy.OpRunChecks, TaskID: "t1", CheckpointID: "c1"},
			Result: events.OperationSucceeded, Ref: "checks:run-42"}
	case events.TypeComplete:
		return events.Complete(decided(policy.Stop(policy.StopComplete)))
	case events.TypeStop:
		return events.Stop(decided(policy.Stop(policy.StopChainExhausted)))
	case events.TypeCancel:
		return events.Cancel{Reason: "user request", By: "cli"}
	case events.TypeAudit:
		r := SampleReport(events.ReportFinished, "R", 0, "x1", "worker-a:4242")
		r.Schema = events.JobSchemaVersion
		return events.Audit{Reason: events.AuditDuplicateReport, ExecutionID: "x1", ReportSeq: 5, Report: &r,
			Detail: "finish already recorded at seq 9"}
	case events.TypeRecover:
		return events.Recover{State: events.VerdictClear, EvidenceRef: "review/handoff-x1.md", By: "claude",
			Recovery: &policy.Recovery{
				Correction: "commit the checkpoint first, then continue from it", BlockageID: "handoff-C-1",
				SnapshotRef: "refs/switchyard/R/L0/C-1", SnapshotDigest: "4a7d1ed414474e4033ac29ccb8653d9b4a7d1ed414474e4033ac29ccb8653d9b",
				PartialWorkRef: "review/partial-x1.md", SideEffectsRef: "review/effects-x1.md", StoppedWritersRef: "review/stopped-x1.md",
				NextExecution: &policy.ExecutionIdentity{ID: "x2", OutputPath: SamplePaths("R", 0, "x2").Output,
					ReceiptPath: SamplePaths("R", 0, "x2").Receipt, WorkspacePath: "/srv/checkout",
					Descriptor: sampleAttempt.Descriptor, APISpend: sampleAttempt.APISpend, Access: policy.ReadOnly,
					Contract: policy.ContractLegacy},
			}}
	case events.TypeOperationStep:
		return events.OperationStep{ExecutionID: "x1", Step: events.OperationBegun, Nonce: "n1",
			Operation: policy.ParentOperation{Kind: policy.OpCommitCheckpoint, TaskID: "t1", CheckpointID: "c1"},
			Repo:      "/data/worktrees/R/L0/x1", Head: "0f848e97e8437ab55e133a19a5587045a9daaaa8",
			Digest: "becbe687a36ce14a227fcf92ec2c3b5694d17f49ddb900a3e26a86c6b576e9a7",
			Files:  []string{"run.sh", "src/a.txt"}, Checks: []string{"unit"}, By: "claude"}
	case events.TypeExclude:
		report := SampleExcludedReport()
		return events.Exclude{
			AttemptIndex: 0, Descriptor: sampleAttempt.Descriptor, Provider: policy.Codex, Source: policy.QuotaLiveRPC,
			Verdict: policy.EligibilityVerdict{Code: policy.ExcludePolicyBlocked, Capacity: policy.EvidenceMeasured,
				Detail: "codex: purchased credits are present; execution would spend them"},
			Report: &report, ReportDigest: SampleReportDigest(report),
			EvaluatedAt: T0, MaxAgeMs: 900000, InputDigest: SampleInputDigest, SheetDigest: events.Digest(SampleSheet),
		}
	}
	panic(fmt.Sprintf("eventstest: no sample for event type %q", t))
}

// SampleEnvelope wraps SamplePayload(t) for run at at; lane applies to
// lane-level types (run-level types always get events.RunLane).
func SampleEnvelope(t events.Type, run string, lane int, at time.Time) events.Envelope {
	if t.Scope() == events.ScopeRun {
		lane = events.RunLane
	}
	return events.NewEnvelope(run, lane, at, SamplePayload(t))
}

// SampleJob is a valid external job.
func SampleJob(run string, lane int, executionID string) events.Job {
	return events.Job{
		ExecutionID: executionID, Run: run, Lane: lane, AttemptIndex: 0,
		Descriptor: sampleAttempt.Descriptor, Provider: policy.Codex, Model: "gpt-5.6-sol", Effort: policy.EffortMax,
		Mode: policy.ReadOnly, APISpend: policy.APISpendDeny, Contract: policy.ContractLegacy, Parent: policy.ParentClaude,
		Route: policy.RouteExternal, Paths: SamplePaths(run, lane, executionID), TimeoutMs: 1800000,
		StallTimeoutMs: events.DefaultStallTimeoutMs,
	}
}

// SampleStall is valid stall metadata: a provider the health probe found
// signed out after its stream went quiet.
func SampleStall() events.Stall {
	return events.Stall{Failure: events.StallFailure, IdleMs: 300012, TimeoutMs: events.DefaultStallTimeoutMs,
		ProviderHealth: events.HealthProviderUnhealthy, Liveness: events.LivenessUnavailable, Probe: "unavailable", FenceClosed: true,
		Adapter: "codex", Target: "gpt-5.6-sol", HealthObservationSeq: &sampleSeq}
}

// sampleSeq is SampleStall's health observation sequence number.
var sampleSeq uint64 = 3

// SampleReport is a valid report of kind.
func SampleReport(kind events.ReportKind, run string, lane int, executionID, worker string) events.Report {
	r := events.Report{ExecutionID: executionID, Run: run, Lane: lane, Kind: kind, WorkerID: worker, Time: T0.Add(time.Minute)}
	switch kind {
	case events.ReportClaimed:
		r.Lease = &events.LeaseInfo{TTLMs: 15000, Revision: 3}
	case events.ReportFinished:
		r.ReceiptPath = SamplePaths(run, lane, executionID).Receipt
		r.ReceiptDigest = events.Digest([]byte(sampleReceiptJSON))
	case events.ReportRedelivered:
		r.JobSeq, r.Delivery = 12, 2
	}
	return r
}

// SampleExcludedReport is the codex report of the sample exclude: healthy
// windows, but purchased credits present, so its eligibility is
// policy_blocked.
func SampleExcludedReport() policy.CapacityReport {
	r := SampleCapacityReport(policy.Codex, T0.Add(-2*time.Minute).Truncate(time.Second))
	r.Eligibility.State = policy.EligibilityPolicyBlocked
	r.Eligibility.Reasons = []policy.EligibilityReason{"credits_present"}
	return r
}

// SampleReportDigest is the digest an exclude records of r
// (policy.CapacityReportDigest).
func SampleReportDigest(r policy.CapacityReport) string {
	d, err := policy.CapacityReportDigest(r)
	if err != nil {
		panic(err)
	}
	return d
}
