package events_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestRunCreatedStallWatchdog: run-created's stallWatchdog is on, off or
// absent (a run recorded before it: watched); off with a stall timeout, or
// any other value, is refused; a job with the watchdog off carries no
// stall timeout.
func TestRunCreatedStallWatchdog(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	base := eventstest.SamplePayload(events.TypeRunCreated).(events.RunCreated)
	enc := func(c events.RunCreated) error {
		_, err := events.Encode(events.NewEnvelope("r1", events.RunLane, at, c))
		return err
	}
	for _, w := range []events.StallWatchdog{events.StallWatchdogOn, events.StallWatchdogLegacy} {
		c := base
		c.Options.StallWatchdog = w
		require.NoError(t, enc(c), w)
	}
	off := base
	off.Options.StallWatchdog = events.StallWatchdogOff
	require.ErrorContains(t, enc(off), "stallWatchdog off with a stall timeout set", "the sample sets stall timeouts")
	off.Options.StallTimeoutMs, off.Options.ProviderStallTimeoutMs = 0, nil
	require.NoError(t, enc(off))
	bad := base
	bad.Options.StallWatchdog = "sometimes"
	require.ErrorContains(t, enc(bad), "stallWatchdog")

	require.True(t, events.StallWatchdogLegacy.Watched())
	require.False(t, events.StallWatchdogOff.Watched())

	l := eventstest.SamplePayload(events.TypeLaunch).(events.Launch)
	j, err := events.JobOf("r1", 0, off, l, nil)
	require.NoError(t, err)
	require.True(t, j.StallWatchdogOff)
	require.Zero(t, j.StallTimeoutMs)
	j.StallTimeoutMs = 1000
	_, err = events.EncodeJob(j)
	require.ErrorContains(t, err, "stallWatchdogOff")
}
