package events

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcState is what a process-identity probe found.
type ProcState int

const (
	// ProcLive: the process runs; the token is its start identity.
	ProcLive ProcState = iota
	// ProcAbsent: no such process (or a zombie).
	ProcAbsent
	// ProcUnverified: the platform gave no usable answer.
	ProcUnverified
)

// psProbeTimeout bounds one ps probe, as the dispatch seed bounds the local
// process-start probe to one second.
const psProbeTimeout = time.Second

// ProcessStart returns a process's start identity: a token that differs
// for a pid the kernel has handed to another process since. On Linux it
// is the start time in clock ticks from /proc/<pid>/stat (one small read,
// no child process); elsewhere ps -o lstart (PSProcessStart).
func ProcessStart(pid int) (string, ProcState) {
	if pid <= 0 {
		return "", ProcAbsent
	}
	return processStart(pid)
}

// PSProcessStart returns a process's start identity from ps -o lstart (the
// dispatch seed's probe, with the platform's timestamp precision: seconds),
// for platforms without /proc. A reused pid started at another second has
// another token. ps runs with a fixed C locale and system PATH so that the
// token's format does not depend on the caller's environment.
func PSProcessStart(pid int) (string, ProcState) {
	ctx, cancel := context.WithTimeout(context.Background(), psProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ps", "-o", "stat=", "-o", "lstart=", "-p", strconv.Itoa(pid))
	cmd.Env = []string{"LC_ALL=C", "PATH=/bin:/usr/bin"}
	out, err := cmd.Output()
	f := strings.Fields(string(out))
	if err != nil {
		var exit *exec.ExitError
		// ps exits 1 with nothing printed when no process matched; make
		// sure with kill(pid, 0) before calling the process absent.
		if errors.As(err, &exit) && ctx.Err() == nil && len(f) == 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			return "", ProcAbsent
		}
		return "", ProcUnverified
	}
	// stat, then lstart's five fields: "Thu Dec  4 15:40:58 2026".
	if len(f) != 6 {
		return "", ProcUnverified
	}
	if strings.HasPrefix(f[0], "Z") {
		return "", ProcAbsent
	}
	return "ps-lstart:" + strings.Join(f[1:], " "), ProcLive
}
