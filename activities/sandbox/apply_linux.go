//go:build linux

package sandbox

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// KernelABI is the Landlock ABI version the running kernel offers; 0 when
// it has none (built without Landlock, or Landlock not in its lsm= list).
func KernelABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// handled is what the sandbox restricts: every filesystem right of ABI 6,
// TCP connect, and both scopes. TCP bind stays open: a listener is no
// egress, and CLIs may serve themselves on loopback. Best effort is off, so a kernel
// below MinABI makes Apply fail instead of silently restricting less.
var handled = landlock.Config{
	HandledAccessFS:  landlock.V6.HandledAccessFS,
	HandledAccessNet: llsys.AccessNetConnectTCP,
	Scoped:           landlock.V6.Scoped,
}

// Apply restricts the calling process and its future descendants to p.
// It fails closed: a writable path that does not exist, or a kernel that
// cannot enforce every handled right, is an error and nothing may run.
func Apply(p Policy) error {
	rules, err := rulesFor(p)
	if err != nil {
		return err
	}
	if err := handled.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return limitSockets()
}

// rulesFor validates p against this kernel and turns it into Landlock
// rules: the whole filesystem readable, the device files a CLI needs,
// p's writable paths, and TCP connect to p's port only.
func rulesFor(p Policy) ([]landlock.Rule, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if abi := KernelABI(); abi < MinABI {
		return nil, fmt.Errorf("Landlock ABI %d is below the %d the sandbox needs", abi, MinABI)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full").WithIoctlDev(),
		landlock.RWFiles("/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
	for _, w := range p.Writable {
		st, err := os.Stat(w)
		if err != nil {
			return nil, fmt.Errorf("writable path: %w", err)
		}
		if st.IsDir() {
			rules = append(rules, landlock.RWDirs(w).WithRefer())
		} else {
			rules = append(rules, landlock.RWFiles(w))
		}
	}
	if p.ConnectPort != 0 {
		rules = append(rules, landlock.ConnectTCP(p.ConnectPort))
	}
	return rules, nil
}

// available says whether this platform has a sandbox implementation.
const available = true

// mechanism names the kernel mechanism for an ABI version.
func mechanism(abi int) string { return fmt.Sprintf("the kernel (Landlock ABI %d)", abi) }
