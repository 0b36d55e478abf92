package conformance

import (
	"os"
	"testing"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// TestMain lets this test binary serve as the sandbox launcher of the
// attempts the harness runs through the runner: a re-exec carrying a
// sandbox policy applies it and execs the real CLI, never the tests.
func TestMain(m *testing.M) {
	sandbox.Enter()
	os.Exit(m.Run())
}
