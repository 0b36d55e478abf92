package machines_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// update rewrites golden files instead of comparing: go test ./machines -update.
var update = flag.Bool("update", false, "rewrite the golden files under machines/testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
