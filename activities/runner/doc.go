// Package runner executes one attempt of a provider CLI: it reserves the
// attempt's private paths, runs the CLI with a deadline and cancellation,
// writes progress snapshots and the receipt, and returns the receipt as a
// value. It knows nothing of jobs or events: the worker (package
// activities) and `switchyard runner` both drive it.
//
// Runner.Run takes typed Options and a context whose cause decides how an
// interruption ends: ErrDeadline (or Options.Timeout) times the attempt
// out (exit 124), any other cause cancels it (exit 130), a Signalled cause
// naming the signal forwarded to a live child. Runner.Main is
// `switchyard runner` (RUNNER.md section 1) on the same core. One attempt:
//
//  1. Flags are parsed strictly and the descriptor checked (effort rules,
//     no native-covered same-provider route, explicit --api-spend for
//     Antigravity); paths are resolved, aliasing is refused, and output,
//     receipt and progress are created exclusively (0600, O_EXCL,
//     O_NOFOLLOW). Any problem so far is a usage error: exit 64, no
//     receipt.
//  2. From here every outcome writes a schema 2 receipt. --contract strict
//     stops at once (exit 79); the billing guard of --api-spend deny blocks
//     with the variable names only (exit 78); a missing CLI is
//     unavailable-cli.
//  3. A private directory "<receipt>.private" (0700) receives the spec's
//     files; the child environment is constructed by providers.ChildEnv,
//     never passed through.
//  4. The spec's preflight probes run in order (one bounded retry when a
//     verdict asks for it), then the workload runs exactly once, in its
//     own process group, with the worker-contract preamble and
//     "Assigned task:" before the prompt on stdin (or in the spec's file).
//     No shell is involved.
//  5. providers.Classify alone turns the settled workload into a status;
//     the runner itself decides only cancellation by SIGINT or SIGTERM
//     (exit 130) and the --timeout deadline (exit 124), which is one
//     absolute deadline from entry to Run or Main across every stage.
//  6. The final text goes to the output file on delivery, else the empty
//     reservation is removed; the private files are removed after every
//     outcome; the receipt is written (indented) and printed as one line.
//
// Runner.Status is `switchyard runner status`: a read-only view of lanes
// from their progress snapshots and receipts.
package runner
