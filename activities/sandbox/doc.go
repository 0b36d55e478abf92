// Package sandbox applies and verifies an attempt's containment.
//
// The runner never starts a provider CLI directly: it starts the
// switchyard binary again (Wrap) with the attempt's Policy in the
// environment; that process (Enter, dispatched at the top of main and of
// every test binary's TestMain) restricts itself with the kernel's
// Landlock LSM and then execs the CLI, so the CLI and every tool it spawns
// inherit the rules. A Policy allows reading and executing everything,
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
