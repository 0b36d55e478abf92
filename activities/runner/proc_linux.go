package runner

import (
	"syscall"
	"unsafe"
)

// exitedUnreaped reports whether the child pid has already exited (or was
// reaped), without reaping it: waitid with WNOWAIT leaves the zombie for
// exec.Cmd.Wait. The runner signals a child only when this is false, so a
// receipt's signal is never claimed for a child that had already ended.
func exitedUnreaped(pid int) bool {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t; si_signo is the first int
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
		uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	if errno == syscall.ECHILD {
		return true
	}
	if errno != 0 {
		return false
	}
	return *(*int32)(unsafe.Pointer(&info[0])) == int32(syscall.SIGCHLD)
}

// childSysProcAttr starts a child in its own process group (the runner
// signals the group) with SIGKILL as its parent-death signal, so the child
// dies with the process that runs the runner, even when that process is
// SIGKILLed (a crashed worker never leaves its CLI running). The kernel
// sends it when the creating thread exits; executor.run holds that thread
// locked until the child is reaped.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
