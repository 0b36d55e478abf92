package events_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// TestMain checks that no goroutine of ours outlives the tests. One of
// nats-server's is ignored: its access-time ticker (server/ats), a single
// process-wide goroutine that runs while any stream store is open. On an
// in-process three-node cluster a stream store can be opened while its node
// is shutting down, after the node closed the others, and is then never
// closed, so the ticker outlives the (fully shut down) servers: CI saw it
// once, and one run in about forty of TestClusterR3Conformance here.
func TestMain(m *testing.M) {
	sandbox.Enter() // this test binary is the sandbox launcher of the runners it starts
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server/ats.Register.func1"))
}
