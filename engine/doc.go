// Package engine orchestrates runs: it freezes a model sheet, resolves one
// role into lanes, and drives every lane through the decision loop, with each
// transition persisted as an event before anything acts on it.
//
// # Lane lifecycle
//
// A lane is one seat of a panel: an ordered chain of at most three attempts,
// each one launch of a provider CLI described as <provider>:<model>@<effort>.
// The engine is the only writer of lane events. For each lane it loops:
//
//  1. Ask policy.Next for a decision from the frozen sheet, the lane's
//     history and the run's exhausted provider groups.
//  2. Record the decision as an event (with the digest of its policy input
//     and of the sheet, so replay can recompute it), then act on it as
//     listed below.
//  3. Consume the worker's reports: a claim (launching → running) and a
//     receipt, normalized into a policy outcome (→ terminal). A usage-exhausted
//     outcome adds the provider to the run's exhausted groups, which every
//     other lane's next decision sees. The parent's verdict or operation
//     result returns a waiting lane to terminal.
//  4. Go back to 1.
//
// What each decision does:
//
//   - launch / continue: publish a job on the provider's work queue, or on
//     the parent's native queue (created, terminal → launching);
//   - inspect: wait for the parent's verdict on a started writer (terminal →
//     inspecting);
//   - parent-operation: hand the operation to the parent (terminal →
//     awaiting-operation);
//   - stop, policy-denied, or stop with reason complete: the lane is final
//     (→ stopped or complete).
//
// The parent may cancel any non-final lane (→ cancelled). complete, stopped
// and cancelled are final; once every lane is, the engine records run-final
// with a one-line summary.
//
// # Using it
//
// One process (switchyard serve, or switchyard run without a server) calls
// Run, which drives every non-final run in the store. Any process on the
// same NATS and data directory calls Submit to start a run, Status, Runs,
// Report and Wait to follow it, Verdict, OperationDone and Cancel to answer
// it, and NativeNext and NativeReport to run its native lanes. Replay needs
// only a Store.
//
// # Runs, one goroutine each
//
// Run lists the runs in the store (a final run is not driven) and watches the store for run-created events. Each
// non-final run gets one driver goroutine, the run's only writer inside the
// engine. It folds the run's log (machines.FoldRun) and appends with the
// fold's expected last sequence per subject; every append it makes is folded
// at once, so its state is always the log as stored. An append conflict
// (another writer) reloads the log and decides again.
//
// The driver reads the run's reports in order, from the highest ReportSeq
// its claim, finish and audit events recorded, so a restarted engine
// resumes exactly after the last report it applied. The engine's one watch
// of every run's reports (reportHub, events.Queue.WatchReports) hands them
// over, decoded once; a run resumed with reports stored before that watch
// began past its mark reads them with its own consumer
// (events.Queue.SubscribeReports). Between inputs it settles the run: records a missing
// group-exhausted, cancels every lane of a cancelled run, decides every lane
// that is created or terminal, publishes every launching execution whose job
// it has not published in this session, and records run-final. Each step is
// derived from the log alone, so an engine killed at any point finishes what
// the previous one started when it restarts.
//
// # Knowing before launch
//
// Before a launch of a provider route (not a native attempt, not a
// continuation, which resumes an attempt already authorized and started),
// the engine passes the eligibility gate (eligibility.go): it reads the
// provider group's current capacity report from Config.Capacity (the
// deployment's one report per provider, which workers acquire where the CLI
// and its login live; the engine never runs provider CLIs). For a provider
// with a live quota source whose report is missing or older than
// Config.CapacityMaxAge, it asks that provider's workers for a fresh one
// and polls up to Config.EligibilityWait; no answer is UNKNOWN, never "go
// ahead". policy.EvaluateEligibility then decides at the engine's clock,
// with the run's unknown-quota overrides (RunRequest.AllowUnknownQuota).
// An ineligible attempt is recorded as an exclude event (code, the report
// and its digest, evaluation time, the decision's input and sheet
// digests); the fold adds its group to the lane's excluded groups, and the
// lane is decided again, so policy.Next skips it like an exhausted group
// and the lane moves to its next authorized attempt, or stops
// chain-exhausted with a reason naming each exclusion. An attempt that
// launches only through the override is logged as a warning and recorded
// as an unknown-quota-override audit just before its launch; the run
// report names it on the attempt.
//
// # Liveness
//
// Every job carries its attempt's effective response-stall timeout
// (RunRequest.ProviderStallTimeouts for its provider, else
// RunRequest.StallTimeout, else events.DefaultStallTimeoutMs), recorded in
// run-created, so the worker's watchdog applies exactly what the run says.
// A finished report's stall metadata is copied into the finish when its
// receipt is timed-out (otherwise the contradiction is audited and the
// stall dropped). A stall whose health probe found the provider
// provider_unhealthy puts its group in the fold's Run.Unhealthy, and the
// gate excludes that group for the rest of the run with the
// provider_unhealthy code, before reading any capacity report; replay
// recomputes it from the same fold.
//
// # Never twice
//
// A launch prepares the execution's files first (their paths are part of the
// event), appends the launch, and only then publishes the job, with message
// id = execution id. The launches one settle pass decides (a panel) prepare
// their files side by side, then are appended in lane order, each job
// published after its own launch is recorded and acknowledged while the
// next launch is appended; the pass ends once every job is acknowledged. A
// launching execution found after a restart is
// published again under the same id; a decision is never taken again for a
// lane that is launching or running. Workers claim each execution id with a
// create-only key before they start anything, so a job delivered twice never
// runs twice. An abandoned attempt (its worker's lease went stale) finishes
// failed with processStarted unknown: the seed maps a started failure with no
// settled child to failed, which never advances; for a writer the worktree
// is kept for the parent to inspect. (DESIGN.md says a writer's abandoned
// attempt normalizes to inspect; policy.Next cannot return inspect for a
// failed outcome, and the seed wins.)
//
// A finished report is checked against the job: the receipt is read from the
// job's receipt path, its digest must equal the report's, and
// policy.Normalize must accept it for the frozen attempt. A receipt that
// fails any check is explained by an audit event and the attempt finishes
// failed. A receipt that claims a delivered response is re-checked first
// (providers.RecheckDelivered: exit 0, the status, the provider's model
// evidence, a non-empty output file, the argv's model pin); one that fails
// is recorded as malformed-output, its reason in Finish.Malformed, failed
// with processStarted unknown. A report that changes nothing (a duplicate, another execution's, a
// final lane's, a job's redelivery after its execution ended) is recorded as
// audit only.
//
// # Same-route continuation
//
// Under # continuation, an interrupted execution (a handoff whose operation
// succeeded, or a permission blockage) may run again on the same
// descriptor. policy.Next needs the parent's clear inspection and recovery
// on that outcome first; while none was given, its missing-readiness answer
// is not recorded and the lane waits (WaitRecovery). Recover sends the
// parent's answer; the driver prepares the continuation's execution (fresh
// id and files, for a writer a worktree of the snapshot commit) and records
// a recover event, which the fold attaches to the interrupted outcome; the
// next decision continues with exactly that execution, or stops (recover.go).
//
// # After run-final
//
// run-final records how far its driver read the run's reports
// (RunFinal.ReportsThrough). Reports and controls stored after that still
// get one audit event each, after run-final on the run subject: the engine
// catches a run up when its driver closes it, when its watch of every
// run's reports (the same reportHub, started before the store is listed)
// sees one for a final run, and at start for every final run whose
// newest report is past what its log records (late.go).
//
// # Control inputs
//
// Verdict, OperationDone and Cancel check the lane against the log, then
// publish an events.Control on the run's control subject
// (events.ControlSubject, inside the reports stream), so the driving engine
// reads them in one ordered sequence with the worker reports. Each names the
// execution it answers; the engine applies it only if the lane still waits
// for it there, which also makes a control delivered again after a restart
// harmless. A lane cancelled while its attempt runs is final at once; the
// worker sees the cancel event and signals its child, and the run waits up
// to Config.CancelGrace for that attempt's report (its cancelled receipt,
// recorded as a report-after-cancel audit; any other report for a final
// lane is a late-report audit) before run-final.
//
// # Native lanes
//
// A native attempt's job goes to events.NativeJobSubject(parent).
// NativeNext claims it (so it is handed out once) and reports the claim;
// the parent runs it with its own subagent primitive and calls NativeReport
// with the explicit host terminal metadata, which the seed requires since a
// native lane has no runner receipt.
//
// # Files
//
// Under Config.DataDir: runs/<run>/prompt (the frozen prompt),
// runs/<run>/L<lane>/<execution>/ with prompt.md (a verified copy), and the
// runner's output.md, receipt.json and progress.json; and for writer runs
// (isolated-write) worktrees/<run>/L<lane>/<execution>, a fresh
// `git worktree add --detach` of the checkout's HEAD per attempt, never the
// checkout itself. Nothing is created twice, overwritten or deleted: failed
// worktrees and receipts stay as they were.
//
// # Replay
//
// The engine calls policy.Next with nil file facts. Those facts only feed
// the continuation readiness gate, whose prepared execution paths the
// engine itself creates fresh, so nothing is lost; in exchange every
// decision is a pure function of the log. Replay folds the log event by
// event and, at each decision, recomputes the input digest, the sheet
// digest, the decision and the event type it maps to; at each exclusion it
// recomputes the decision (a gated launch of that attempt), the report
// digest and policy.EvaluateEligibility over the recorded report, time and
// maximum report age; at each finish it
// normalizes the recorded receipt again; and it resolves the frozen sheet
// again against run-created's lanes. The first difference is reported with
// the event's sequence and type, the field, and the expected and recorded
// values.
package engine
