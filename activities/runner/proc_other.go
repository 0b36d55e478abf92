//go:build !linux

package runner

import "syscall"

// exitedUnreaped cannot peek without reaping on this platform; a child
// that has not been waited for is treated as live.
func exitedUnreaped(pid int) bool { return false }

// childSysProcAttr starts a child in its own process group. There is no
// parent-death signal on this platform: a child can outlive a killed
// worker here.
func childSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
