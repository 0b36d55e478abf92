package console_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Enter() // this test binary is the sandbox launcher of the runners TestOpenAPIOperationAndRecover's worker starts
	goleak.VerifyTestMain(m)
}
