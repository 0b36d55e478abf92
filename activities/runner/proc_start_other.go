//go:build !linux

package runner

// startToken returns a process's start identity where there is no /proc:
// from ps -o lstart, bounded to one second (psStartToken).
func startToken(pid int) (string, procVerdict) { return psStartToken(pid) }
