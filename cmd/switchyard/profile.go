package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// profileEnv names a directory: when set, every switchyard process writes a
// CPU profile of its whole life there, as <command>.<pid>.pprof (make
// bench-e2e and docs/PERFORMANCE.md use it to see where a run's time goes
// across serve, worker and run processes). Unset, nothing happens.
const profileEnv = "SWITCHYARD_CPUPROFILE_DIR"

// startCPUProfile starts the profile profileEnv asks for and returns what
// stops and writes it. A profile that cannot start is reported on stderr
// and skipped: profiling never changes what the command does.
func startCPUProfile(args []string) func() {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return func() {}
	}
	name := "switchyard"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name = filepath.Base(args[0])
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s.%d.pprof", name, os.Getpid())))
	if err != nil {
		fmt.Fprintf(os.Stderr, "switchyard: %s: %v (no profile)\n", profileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "switchyard: %s: %v (no profile)\n", profileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
