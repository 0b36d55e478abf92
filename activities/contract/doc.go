// Package contract is the parent's worker-contract tool behind
// `switchyard contract` (provider-dispatch.md "Worker handoffs and parent
// operations"): it interprets a worker's final response, validates a
// handoff against a real Git worktree and computes its checkpoint digest,
// and keeps the operation ledger a parent reserves and settles its
// parent-only operations in.
//
// Nothing here authorizes an operation. A valid handoff and a pending
// ledger record are the preconditions a parent checks before it runs its
// own fixed operation (stage the approved paths with --, or run a
// parent-owned check id); the worker's request never supplies shell text.
package contract
