package events

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procStatMax bounds a /proc/<pid>/stat read: 52 numeric fields and a
// command name of at most 64 bytes fit well inside it. A longer answer is
// not one this parser knows, and is unverified.
const procStatMax = 2048

// processStart reads the start time in clock ticks since boot from
// /proc/<pid>/stat. It reads with the system calls directly into a stack
// buffer: the runner asks at every child's start, and an *os.File's
// poller registration and a growing buffer cost more than the read.
func processStart(pid int) (string, ProcState) {
	var buf [procStatMax]byte
	n, err := readProcStat(pid, buf[:])
	if err != nil {
		if err == syscall.ENOENT {
			if _, serr := os.Stat("/proc/self/stat"); serr == nil {
				return "", ProcAbsent
			}
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return "", ProcAbsent
			}
		}
		return "", ProcUnverified
	}
	return parseProcStat(buf[:n])
}

// readProcStat reads /proc/<pid>/stat whole into buf and returns its
// length; an answer that fills buf is refused (syscall.EFBIG).
func readProcStat(pid int, buf []byte) (int, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case m == 0:
			return n, nil
		}
		n += m
	}
	return 0, syscall.EFBIG
}

// parseProcStat takes the state and the start time from one stat line:
// the fields after the command name (parenthesised, and it may hold
// spaces or parentheses), state the first of them and starttime the 20th.
func parseProcStat(b []byte) (string, ProcState) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", ProcUnverified
	}
	var field [20][]byte
	k := 0
	for rest := b[i+1:]; k < len(field); k++ {
		rest = bytes.TrimLeft(rest, " \t\n")
		j := bytes.IndexAny(rest, " \t\n")
		if j < 0 {
			j = len(rest)
		}
		if j == 0 {
			break
		}
		field[k], rest = rest[:j], rest[j:]
	}
	if k < len(field) {
		return "", ProcUnverified
	}
	if s := string(field[0]); s == "Z" || s == "X" {
		return "", ProcAbsent
	}
	return "proc-start:" + string(field[19]), ProcLive
}
