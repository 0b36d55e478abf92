// Package conformance holds the suite that checks the provider facts of
// package providers against the real provider CLIs published on the npm
// registry (codex, claude, gemini, opencode and the sandbox runtime srt),
// installed at pinned versions by `make real-clis`.
//
// Every test runs a real CLI signed out, offline, with a fresh HOME: far
// enough to prove the argv each spec builds is accepted (no usage error,
// the CLI reached its sign-in check), that the version banner parses, and
// that a signed-out attempt ends with the receipt the contract promises.
// A failure names the CLI, its version and the argv. Without the install
// the tests skip and say how to get it, except under CI=true, where they
// fail. `make conformance VERSIONS="pkg@version ..."` runs the suite
// against other releases.
//
// The package has no code of its own: it is this doc and the tests.
package conformance
