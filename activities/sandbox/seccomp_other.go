//go:build linux && !(amd64 || arm64)

package sandbox

import (
	"errors"
	"runtime"
)

// limitSockets has no filter for this architecture: the sandbox fails
// closed rather than leave Multipath TCP open.
func limitSockets() error {
	return errors.New("no socket filter for linux/" + runtime.GOARCH)
}

// limitThreadSockets fails closed like limitSockets.
func limitThreadSockets() error { return limitSockets() }
