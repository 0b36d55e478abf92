package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// queueOnly is a Queue that cannot carry control inputs.
type queueOnly struct{ events.Queue }

// TestConfigValidate proves New refuses a configuration missing a seam,
// the data directory, or a queue that carries controls, and that a valid
// Engine runs and stops cleanly.
// TestConfigValidateJoinsErrors proves Validate reports every problem at
// once (errors.Join), as the worker's and the runner's configurations do.
func TestConfigValidateJoinsErrors(t *testing.T) {
	t.Parallel()
	err := engine.Config{Queue: queueOnly{events.NewMemoryQueue()}, CancelGrace: -1, Actor: "a b"}.Validate()
	for _, want := range []string{"Store is required", "does not implement events.ControlQueue", "Claims is required",
		"DataDir is required", "Capacity is required", "durations must not be negative", "Actor"} {
		require.ErrorContains(t, err, want)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := engine.Config{Store: events.NewMemoryStore(), Queue: events.NewMemoryQueue(), Claims: events.NewMemoryClaims(nil), DataDir: t.TempDir(),
		Capacity: events.NewMemoryCapacity()}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		mut  func(*engine.Config)
	}{
		{"no store", func(c *engine.Config) { c.Store = nil }},
		{"no queue", func(c *engine.Config) { c.Queue = nil }},
		{"no claims", func(c *engine.Config) { c.Claims = nil }},
		{"no data directory", func(c *engine.Config) { c.DataDir = "" }},
		{"no capacity store", func(c *engine.Config) { c.Capacity = nil }},
		{"negative eligibility wait", func(c *engine.Config) { c.EligibilityWait = -1 }},
		{"negative capacity max age", func(c *engine.Config) { c.CapacityMaxAge = -1 }},
		{"queue without controls", func(c *engine.Config) { c.Queue = queueOnly{c.Queue} }},
		{"negative grace", func(c *engine.Config) { c.CancelGrace = -1 }},
		{"actor with a space", func(c *engine.Config) { c.Actor = "a b" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mut(&c)
			require.Error(t, c.Validate())
			_, err := engine.New(c)
			require.Error(t, err)
		})
	}

	e, err := engine.New(ok)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	_, err = e.Status(context.Background(), "nope")
	require.ErrorIs(t, err, engine.ErrUnknownRun)
	_, err = e.Wait(context.Background(), "nope", nil)
	require.ErrorIs(t, err, engine.ErrUnknownRun)
	cancel()
	require.NoError(t, <-done)
}
