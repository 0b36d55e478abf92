//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
)

// KernelABI is 0: Landlock is Linux-only. A macOS Seatbelt profile would
// fill this seam (Apply, KernelABI, mechanism) without changing callers.
func KernelABI() int { return 0 }

// Apply fails closed: no sandbox exists for this platform yet.
func Apply(Policy) error {
	return errors.New("no sandbox for " + runtime.GOOS + ": Landlock is Linux-only")
}

const available = false

func mechanism(abi int) string { return fmt.Sprintf("the kernel (Landlock ABI %d)", abi) }
