// Package client is the Go client of a Switchyard deployment: what an
// orchestrator (a parent harness, a CI job, a scheduler) uses to start
// runs, follow them and answer their lanes from one long-lived process,
// instead of starting a `switchyard` process per action and parsing its
// output.
//
// # Connecting
//
// Dial connects to a data directory's `switchyard serve` (found through
// its serve.json, with the credentials of its serve.auth, and followed
// when the serve is restarted, even on another port), or to a NATS server
// or cluster by URL with credentials, an nkey, user and password, a token,
// TLS files or a nats CLI context. The client logs in as a role: a parent
// (the default) submits and answers runs; a reader only reads. The client
// never starts a server and never creates anything in a data directory.
//
//	c, err := client.Dial(ctx, client.Options{DataDir: "/srv/switchyard"})
//	if err != nil { ... }
//	defer c.Close()
//
// The command line reaches a serve or cluster through the same code
// (internal/engineconn), so the two agree on where a data directory is,
// how a moved serve is found and what each failure says.
//
// # Runs
//
// Submit takes a RunRequest whose sheet and prompt are bytes; the engine
// freezes them as `switchyard run` does. With a RunID, Submit is
// idempotent: the same request again returns the same run, a different
// request under the id fails with ErrExists. A *Run is a handle on a run
// by id: Status and Report read it as its log stands, Watch is an
// iterator of its lanes' state changes until it is final, Wait returns
// its final report, Logs yields what is recorded of its attempts
// (launches, claims, progress snapshots, finishes with their capped
// diagnostics, outputs), once or following, and Cancel cancels a lane or
// the whole run. Verdict,
// OperationValidate, OperationBegin, OperationDone, OperationReject and
// Recover answer a lane that waits for its parent; NativeNext and
// NativeReport serve native launches. List, Replay, Usage and Workers
// read the deployment.
//
// # Errors
//
// Errors a caller may act on match, with errors.Is, one of ErrNotFound,
// ErrExists, ErrPermissionDenied, ErrNotFinal, ErrFinal, ErrNotWaiting
// and ErrUnavailable; a refused value is an *InvalidInputError naming the
// field. The engine's and the events package's own sentinels and types
// (engine.ErrUnknownRun, *engine.LaneError, *policy.PolicyError, …) stay in
// the chain.
//
// docs/CLIENT.md walks through an orchestrator; examples/orchestrator is
// one that runs in CI against a real serve and worker.
package client
