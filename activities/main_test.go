package activities

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain lets the test binary double as a worker process (the crash
// tests) and checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	if os.Getenv(envWorkerProcess) != "" {
		os.Exit(workerProcessMain())
	}
	goleak.VerifyTestMain(m)
}
