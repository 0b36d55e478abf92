package console

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCleanMessage(t *testing.T) {
	for in, want := range map[string]string{
		"run dem: run dem: engine: unknown run":    "run dem: unknown run",
		"run a lane 0: engine: lane is final":      "run a lane 0: lane is final",
		"lane \"x\": want a zero-based lane index": "lane \"x\": want a zero-based lane index",
		"load run a: nats: timeout: nats: timeout": "load run a: nats: timeout: nats: timeout",
		"run a: run a: run a: engine: unknown run": "run a: unknown run",
	} {
		require.Equal(t, want, cleanMessage(in), in)
	}
}
