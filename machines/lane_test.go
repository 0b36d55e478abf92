package machines_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
)

func TestNewLaneIsCreated(t *testing.T) {
	t.Parallel()
	l := machines.NewLane()
	assert.Equal(t, machines.StateCreated, l.State())
	assert.True(t, l.Can(machines.EventLaunch))
	assert.False(t, l.Can(machines.EventClaim))
}

func TestLaneApplyLegal(t *testing.T) {
	t.Parallel()
	for _, tc := range legal {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := machines.NewLane()
			require.NoError(t, l.Restore(tc.from))
			assert.True(t, l.Can(tc.ev))
			require.NoError(t, l.Apply(t.Context(), tc.ev))
			assert.Equal(t, tc.to, l.State())
		})
	}
}

// TestLaneApplyIllegal runs every refused pair through looplab/fsm: the
// error is the same typed error Step gives and the lane does not move.
func TestLaneApplyIllegal(t *testing.T) {
	t.Parallel()
	for _, p := range illegal() {
		t.Run(fmt.Sprintf("%s from %s", p.ev, p.from), func(t *testing.T) {
			t.Parallel()
			l := machines.NewLane()
			require.NoError(t, l.Restore(p.from))
			assert.False(t, l.Can(p.ev))
			err := l.Apply(t.Context(), p.ev)
			assertRefused(t, err, p.from, p.ev)
			_, stepErr := machines.Step(p.from, p.ev)
			assert.Equal(t, stepErr, err, "Lane and Step agree")
			assert.Equal(t, p.from, l.State())
		})
	}
}

func TestLaneFinalStates(t *testing.T) {
	t.Parallel()
	for _, s := range machines.States {
		if !s.Final() {
			continue
		}
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			l := machines.NewLane()
			require.NoError(t, l.Restore(s))
			for _, ev := range machines.Events {
				assert.False(t, l.Can(ev), ev)
				assert.ErrorIs(t, l.Apply(t.Context(), ev), machines.ErrFinal, ev)
			}
			assert.Equal(t, s, l.State())
		})
	}
}

func TestLaneUnknownEvent(t *testing.T) {
	t.Parallel()
	l := machines.NewLane()
	err := l.Apply(t.Context(), "audit")
	assert.ErrorIs(t, err, machines.ErrUnknownEvent)
	assert.Equal(t, machines.StateCreated, l.State())
}

func TestLaneRestoreRejectsUnknownState(t *testing.T) {
	t.Parallel()
	l := machines.NewLane()
	require.NoError(t, l.Apply(t.Context(), machines.EventLaunch))
	err := l.Restore("done")
	assert.ErrorIs(t, err, machines.ErrUnknownState)
	assert.Equal(t, machines.StateLaunching, l.State(), "a refused Restore leaves the lane")
}

// TestLaneApplyCancelledContext: a done ctx refuses the event without
// moving the lane, and the lane still works afterwards (looplab/fsm alone
// would stay stuck "in transition").
func TestLaneApplyCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l := machines.NewLane()
	err := l.Apply(ctx, machines.EventLaunch)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, machines.StateCreated, l.State())
	require.NoError(t, l.Apply(t.Context(), machines.EventLaunch))
	assert.Equal(t, machines.StateLaunching, l.State())
}

// TestLaneMatchesFold drives a Lane and Fold over the same lifecycles.
func TestLaneMatchesFold(t *testing.T) {
	t.Parallel()
	for _, tc := range lifecycles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := machines.NewLane()
			for _, ev := range tc.events {
				require.NoError(t, l.Apply(t.Context(), ev))
			}
			folded, err := machines.Rebuild(tc.events...)
			require.NoError(t, err)
			assert.Equal(t, folded, l.State())
		})
	}
}

// TestLaneConcurrentApply: racing writers are serialized by the machine;
// exactly one claim wins.
func TestLaneConcurrentApply(t *testing.T) {
	t.Parallel()
	l := machines.NewLane()
	require.NoError(t, l.Apply(t.Context(), machines.EventLaunch))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- l.Apply(t.Context(), machines.EventClaim) })
	}
	wg.Wait()
	close(errs)
	wins := 0
	for err := range errs {
		if err == nil {
			wins++
			continue
		}
		assert.ErrorIs(t, err, machines.ErrImpossible)
	}
	assert.Equal(t, 1, wins)
	assert.Equal(t, machines.StateRunning, l.State())
}
