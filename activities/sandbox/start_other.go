//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
)

// StartConfined fails closed: no sandbox exists for this platform yet.
func StartConfined(Policy, *exec.Cmd) (func(), error) {
	return nil, errors.New("no sandbox for " + runtime.GOOS + ": Landlock is Linux-only")
}
