package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestOrderedReaderStopsItsOwnIterator: abandoning an ordered reader whose
// Next is waiting ends that Next through its context, and the pump stops
// the iterator itself rather than the reader stopping it from
// another goroutine (which can leak a pull iterator when it races a
// consumer re-creation in nats.go v1.55.0). TestMain's leak check then
// finds no goroutine of it left.
func TestOrderedReaderStopsItsOwnIterator(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	for range 3 {
		byPump, err := events.OrderedAbandonProbe(t.Context(), j, events.EventSubjectPrefix+"nothing-here.>")
		require.NoError(t, err)
		require.True(t, byPump, "the pump stopped its own iterator")
	}
}
