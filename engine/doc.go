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
//     and of the sheet, so replay can recompute it), then act on it:
//     - launch / continue: publish a job on the provider's work queue
//     (created, terminal, inspecting or awaiting-operation → launching);
//     - inspect: wait for the parent's verdict on a started writer
//     (terminal → inspecting);
//     - parent-operation: hand the operation to the parent
//     (terminal → awaiting-operation);
//     - stop, or a complete outcome: the lane is final
//     (→ complete or stopped).
//  3. Consume the worker's reports: a claim (launching → running) and a
//     receipt, normalized into a policy outcome (→ terminal). A usage-exhausted
//     outcome adds the provider to the run's exhausted groups, which every
//     other lane's next decision sees.
//  4. Go back to 1.
//
// The parent may cancel any non-final lane (→ cancelled). complete, stopped
// and cancelled are final. An attempt whose process may have started is never
// executed again: a redelivered job whose lease went stale is reported as
// abandoned, never launched a second time.
package engine
