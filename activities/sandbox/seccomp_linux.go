//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's TCP rules cover IPPROTO_TCP sockets only: a Multipath TCP
// socket (which falls back to plain TCP with any server) or an SCTP one
// connects past them. limitSockets closes that gap with a seccomp filter
// on every thread: an AF_INET or AF_INET6 socket must be a stream socket
// of protocol 0 or TCP, or a datagram socket of protocol 0, UDP or ICMP
// (UDP is outside the guarantee: docs/GUARANTEES.md). Any other inet
// socket, and every system call of a foreign ABI (x32, or 32-bit x86 and
// its socketcall), fails with EACCES.
func limitSockets() error {
	// no_new_privs is already set on every thread by the Landlock
	// restriction; TSYNC puts the filter on every thread.
	return socketFilter(unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// limitThreadSockets puts the same filter on the calling thread only
// (its no_new_privs must be set), for StartConfined's locked thread.
func limitThreadSockets() error { return socketFilter(0) }

func socketFilter(flags uintptr) error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	}
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // low 32 bits (little-endian)
		offArg1 = 24
		offArg2 = 32
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		allow   = unix.SECCOMP_RET_ALLOW
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	// Jump offsets count instructions after the jump; the layout is
	// fixed, so each target is written as a distance to the labelled
	// return at the end (ALLOW at index 23, DENY at 24).
	prog := []unix.SockFilter{
		/* 0 */ ld(offArch),
		/* 1 */ jeq(arch, 0, 22), // foreign ABI -> 24 DENY
		/* 2 */ ld(offNr),
		/* 3 */ {Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: 0x40000000, Jt: 20, Jf: 0}, // x32 -> 24 DENY
		/* 4 */ jeq(uint32(unix.SYS_SOCKET), 0, 18), // not socket -> 23 ALLOW
		/* 5 */ ld(offArg0),
		/* 6 */ jeq(unix.AF_INET, 1, 0), // -> 8
		/* 7 */ jeq(unix.AF_INET6, 0, 15), // other family -> 23 ALLOW
		/* 8 */ ld(offArg1),
		/* 9 */ {Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0xf},
		/* 10 */ jeq(unix.SOCK_STREAM, 2, 0), // -> 13
		/* 11 */ jeq(unix.SOCK_DGRAM, 5, 0), // -> 17
		/* 12 */ ret(deny),
		/* 13 */ ld(offArg2),
		/* 14 */ jeq(0, 8, 0), // -> 23 ALLOW
		/* 15 */ jeq(unix.IPPROTO_TCP, 7, 0), // -> 23 ALLOW
		/* 16 */ ret(deny),
		/* 17 */ ld(offArg2),
		/* 18 */ jeq(0, 4, 0), // -> 23
		/* 19 */ jeq(unix.IPPROTO_UDP, 3, 0), // -> 23
		/* 20 */ jeq(unix.IPPROTO_ICMP, 2, 0), // -> 23
		/* 21 */ jeq(unix.IPPROTO_ICMPV6, 1, 0), // -> 23
		/* 22 */ ret(deny),
		/* 23 */ ret(allow),
		/* 24 */ ret(deny),
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	runtime.KeepAlive(prog)
	return nil
}
