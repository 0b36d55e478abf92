package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"
)

// Enter is the re-exec's entry point, called first in main (and in the
// TestMain of every test binary that runs the runner): without EnvPolicy
// in the environment it returns at once; with it, the process applies the
// policy and execs its arguments (or, for the self-test, runs EnvProbe's
// probes and prints their results) and never returns. When the policy
// cannot be applied or the command cannot be exec'd it prints why on
// stderr and exits ExitSandboxFailed: the command never runs unconfined.
//
// With EnvProbe and no EnvPolicy it runs the probes as it is: the
// self-test starts it with StartConfined, so the probes test the
// confinement the runner gives every CLI, inherited from the thread that
// started it (an unconfined start fails the self-test, never passes it).
func Enter() {
	raw, ok := os.LookupEnv(EnvPolicy)
	if !ok {
		if probes, isProbe := os.LookupEnv(EnvProbe); isProbe {
			os.Exit(runProbes(probes, os.Stdout, os.Stderr))
		}
		return
	}
	os.Exit(enter(raw, os.Args[1:], os.Stdout, os.Stderr))
}

func enter(raw string, argv []string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "switchyard sandbox: %v; the command was not started\n", err)
		return ExitSandboxFailed
	}
	p, err := decodePolicy(raw)
	if err != nil {
		return fail(err)
	}
	probes, isProbe := os.LookupEnv(EnvProbe)
	env := slices.DeleteFunc(os.Environ(), isSandboxVar)
	// The kernel's restriction covers every thread; the lock keeps the
	// exec on the thread that applied it regardless.
	runtime.LockOSThread()
	if err := Apply(p); err != nil {
		return fail(err)
	}
	if isProbe {
		return runProbes(probes, stdout, stderr)
	}
	if len(argv) == 0 {
		return fail(fmt.Errorf("no command"))
	}
	err = syscall.Exec(argv[0], argv, env)
	return fail(fmt.Errorf("exec %s: %w", argv[0], err))
}

// runProbes runs the self-test's probes inside the sandbox and prints
// their outcomes as one JSON array.
func runProbes(raw string, stdout, stderr io.Writer) int {
	var ps []Probe
	if err := json.Unmarshal([]byte(raw), &ps); err != nil {
		fmt.Fprintf(stderr, "switchyard sandbox: probes: %v\n", err)
		return ExitSandboxFailed
	}
	out := make([]ProbeResult, len(ps))
	for i, p := range ps {
		out[i] = p.run()
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		return ExitSandboxFailed
	}
	return 0
}
