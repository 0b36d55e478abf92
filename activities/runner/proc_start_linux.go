package runner

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// startToken returns a process's start identity, from /proc's start time
// in clock ticks since boot: a reused pid has a different token. It reads
// one small file and never starts a process.
func startToken(pid int) (string, procVerdict) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if os.IsNotExist(err) {
			if _, serr := os.Stat("/proc/self/stat"); serr == nil {
				return "", procAbsent
			}
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return "", procAbsent
			}
		}
		return "", procUnverified
	}
	// Fields after the command name, which is parenthesised and may hold
	// spaces: state is the first, starttime the 20th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", procUnverified
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", procUnverified
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", procAbsent
	}
	return "proc-start:" + f[19], procLive
}
