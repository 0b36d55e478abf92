package events_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// update rewrites golden files instead of comparing: go test ./events -update.
var update = flag.Bool("update", false, "rewrite the golden files under events/testdata/golden")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
