// Package events defines Switchyard's event log and message formats (strict,
// versioned JSON) and the seams the engine and workers persist and
// exchange them through: Store (lane and run events), Queue (jobs and
// reports), Claims (create-only execution claims with leases), Presence
// (workers' announcements, which expire after a TTL) and Capacity (each
// provider's current capacity report, and refresh requests). Each seam
// has a JetStream implementation (an embedded in-process server, or an
// external server or cluster by URL) and an in-memory one, and both pass one
// conformance suite (package eventstest).
//
// # Wire format
//
// An event is an Envelope — schema version, Type, run id, lane, store
// sequence, caller's time — around one typed Payload:
//
//	run-level (sy.ev.<run>.run):  run-created, group-exhausted, run-final
//	lane-level (sy.ev.<run>.L<n>): launch, continue, claim, finish, inspect,
//	    verdict, request-operation, operation-done, complete, stop,
//	    recover, exclude
//	either:                        cancel, audit
//
// Encode validates and writes the canonical JSON; Decode is strict: unknown
// type, unknown or duplicate key (case-sensitive), wrong schema version,
// trailing data, a null where no null fits, or more than MaxEventBytes is an
// error matching ErrInvalid. Jobs (EncodeJob/DecodeJob) and reports
// (EncodeReport/DecodeReport) follow the same rules with MaxMessageBytes.
// testdata/golden holds one file per type; refresh with
// go test ./events -update (a run that changes a file fails: review the
// diff, then rerun without -update).
//
// Decision events (launch, continue, inspect, request-operation, complete,
// stop) carry the policy.Decision, InputDigest of the lane policy and lane
// state it was computed from, and the run's sheet digest, so replay can
// recompute and compare every decision. An exclude (the eligibility gate
// kept an attempt from launching) also carries the capacity report its
// verdict was computed from and that report's digest, which validation
// recomputes.
//
// # Capacity reports
//
// Capacity keeps each provider's current capacity report (JetStream: the KV
// bucket CapacityBucket, history 1): workers Put, and a Put keeps only a
// strictly newer acquisition, by a compare-and-set on the key's revision, so
// racing workers never roll a report back. Get and List decode strictly; a
// stored value that does not is an error naming its key. RequestRefresh
// asks a provider's workers, over core NATS on
// CapacityRefreshSubjectPrefix+<provider>, for a fresh report; nothing is
// stored, so the asker polls Get with a deadline.
//
// # Recording a transition (engine)
//
// The engine is the only writer of events. For each lane it keeps the
// sequence of the lane's last event and appends with it:
//
//	seq, err := store.Append(ctx, events.NewEnvelope(run, lane, now, payload), lastSeq)
//	switch {
//	case errors.Is(err, events.ErrConflict): // someone else moved the lane: Load it and decide again.
//	case err != nil:                         // not recorded; retrying the same envelope is safe.
//	default:                                 // recorded at seq; act on it now.
//	}
//
// A retried Append of the same envelope at the same position returns the
// original sequence, however long ago it was stored; a different event at
// that position is a conflict. Load(run, lane), LoadRun(run), Last(run,
// lane) and Runs rebuild state after a restart; Watch streams events for
// status --watch.
//
// # Jobs, claims and reports (workers)
//
// A launch publishes a Job on JobSubject(provider) (NativeJobSubject(parent)
// for native routes) with message id ExecutionID. Workers of one provider
// share one durable consumer (Queue.Jobs) and, for each delivery:
//
//  1. Claims.Claim(executionID, workerID, ttl). On ErrClaimed the execution
//     may have started already and is never started here: Inspect it; if it
//     is held and LeaseStale says so after watching it for a TTL, Abandon it
//     (one worker wins) and publish an abandoned Report; if it is held and
//     live, keep the job (Delivery.InProgress) and look again later; if it
//     is released or abandoned, Ack the job.
//  2. Publish a claimed Report, start the CLI, and while it runs Renew the
//     lease and call Delivery.InProgress well within their deadlines. If
//     Renew returns ErrLeaseLost, stop the child.
//  3. Publish the finished Report (receipt path and digest, or host
//     metadata for native lanes), Release the claim, Ack the job.
//
// Reports are published with retries and deterministic ids (ReportMsgID).
// The engine reads them in order with Queue.SubscribeReports and records
// each as claim, finish or audit; the ReportSeq those events carry tells a
// restarted engine where to resume.
//
// # Servers
//
// StartEmbedded runs NATS with JetStream in-process (fsync on every write by
// default; FsyncInterval trades that for throughput and may lose
// acknowledged events on power loss or an OS crash). Connect reaches an
// external server or cluster (--nats URLs). OpenJetStream creates or
// updates the streams (EventsStream, JobsStream, ReportsStream,
// WorkersStream, the ClaimsBucket and the CapacityBucket) with the
// configured replicas and returns the seams.
package events
