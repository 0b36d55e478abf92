package activities

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// TestMain lets the test binary double as a worker process (the crash
// tests) and checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	sandbox.Enter() // this test binary is the sandbox launcher of the runners it starts
	if os.Getenv(envWorkerProcess) != "" {
		os.Exit(workerProcessMain())
	}
	goleak.VerifyTestMain(m)
}
