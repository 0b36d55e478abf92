package events

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processStart reads the start time in clock ticks since boot from
// /proc/<pid>/stat.
func processStart(pid int) (string, ProcState) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if os.IsNotExist(err) {
			if _, serr := os.Stat("/proc/self/stat"); serr == nil {
				return "", ProcAbsent
			}
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return "", ProcAbsent
			}
		}
		return "", ProcUnverified
	}
	// Fields after the command name, which is parenthesised and may hold
	// spaces: state is the first, starttime the 20th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", ProcUnverified
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", ProcUnverified
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", ProcAbsent
	}
	return "proc-start:" + f[19], ProcLive
}
