package sandbox_test

import (
	"os"
	"testing"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// TestMain lets this test binary serve as the sandbox launcher: a re-exec
// with the policy variable applies it and never runs the tests.
func TestMain(m *testing.M) {
	sandbox.Enter()
	os.Exit(m.Run())
}
