// Package sandbox applies and verifies an attempt's containment.
//
// The runner never starts a provider CLI unconfined: StartConfined locks
// a fresh OS thread, restricts that thread alone with the kernel's
// Landlock LSM and a seccomp socket filter (both are per thread and pass
// to the children a thread forks), and starts the CLI from it, so the CLI
// and every tool it spawns inherit the rules from their first instruction
// without a launcher process in between; the thread is never returned to
// the Go runtime. Wrap and Enter are the re-exec form of the same
// confinement (the switchyard binary applies the Policy to itself, then
// execs the command), kept for the tests that drive the launcher. A Policy allows reading and executing everything,
// writing only its Writable paths, and TCP connect only to one port, the
// attempt's loopback egress proxy (Proxy), which forwards only to the
// provider's own API hosts.
//
// Containment is verified, not assumed: SelfTest runs a sandboxed child
// that tries a write outside its writable paths, a connect past the proxy
// and a request through the proxy to an allowed stand-in, and only when
// the kernel refuses the first two and the third passes are the classes
// READ_ONLY_NO_NETWORK and WORKSPACE_WRITE_NO_NETWORK verified, "by the
// kernel (Landlock ABI n)". Where Landlock is missing (an older kernel,
// macOS) or the self-test fails, each class is UNVERIFIED with the reason
// and the fix.
//
// What Landlock does not cover is named in docs/GUARANTEES.md: UDP (hence
// DNS), the CLI's own state directories, the same user's processes
// outside the sandbox, root.
package sandbox
