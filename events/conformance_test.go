package events_test

import (
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// Each seam's conformance suite runs against both implementations (the
// queue's in two parts, jobs and reports, run by one test each); the
// JetStream runs share one embedded server (default fsync: always).

func TestMemoryStoreConformance(t *testing.T) {
	t.Parallel()
	eventstest.RunStoreConformance(t, func(*testing.T) events.Store { return events.NewMemoryStore() })
}

func TestJetStreamStoreConformance(t *testing.T) {
	t.Parallel()
	j := eventstest.Open(t, eventstest.StartServer(t), events.JetStreamConfig{})
	eventstest.RunStoreConformance(t, func(*testing.T) events.Store { return j.Store() })
}

func TestMemoryQueueConformance(t *testing.T) {
	t.Parallel()
	newQueue := func(*testing.T) events.Queue { return events.NewMemoryQueue() }
	eventstest.RunQueueJobsConformance(t, newQueue)
	eventstest.RunQueueReportsConformance(t, newQueue)
}

func TestJetStreamQueueConformance(t *testing.T) {
	t.Parallel()
	j := eventstest.Open(t, eventstest.StartServer(t), events.JetStreamConfig{})
	newQueue := func(*testing.T) events.Queue { return j.Queue() }
	eventstest.RunQueueJobsConformance(t, newQueue)
	eventstest.RunQueueReportsConformance(t, newQueue)
}

func TestMemoryQueueCapsConformance(t *testing.T) {
	t.Parallel()
	eventstest.RunQueueCapsConformance(t,
		func(*testing.T) eventstest.CapsQueue { return events.NewMemoryQueue() },
		func(_ *testing.T, q eventstest.CapsQueue) eventstest.CapsQueue { return q })
}

// The JetStream caps reopen the streams on the same server: the caps live
// in the consumers' configuration, which every process reads.
func TestJetStreamQueueCapsConformance(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	eventstest.RunQueueCapsConformance(t,
		func(*testing.T) eventstest.CapsQueue { return j.Queue() },
		func(t *testing.T, _ eventstest.CapsQueue) eventstest.CapsQueue {
			return eventstest.Open(t, e, events.JetStreamConfig{}).Queue()
		})
}

func TestMemoryClaimsConformance(t *testing.T) {
	t.Parallel()
	eventstest.RunClaimsConformance(t, func(*testing.T) events.Claims { return events.NewMemoryClaims(time.Now) })
}

func TestJetStreamClaimsConformance(t *testing.T) {
	t.Parallel()
	j := eventstest.Open(t, eventstest.StartServer(t), events.JetStreamConfig{})
	eventstest.RunClaimsConformance(t, func(*testing.T) events.Claims { return j.Claims() })
}

func TestMemoryPresenceConformance(t *testing.T) {
	t.Parallel()
	eventstest.RunPresenceConformance(t, func(*testing.T) events.Presence { return events.NewMemoryPresence(500*time.Millisecond, time.Now) })
}

func TestJetStreamPresenceConformance(t *testing.T) {
	t.Parallel()
	j := eventstest.Open(t, eventstest.StartServer(t), events.JetStreamConfig{PresenceTTL: time.Second})
	eventstest.RunPresenceConformance(t, func(*testing.T) events.Presence { return j.Presence() })
}

func TestMemoryCapacityConformance(t *testing.T) {
	t.Parallel()
	eventstest.RunCapacityConformance(t, func(*testing.T) events.Capacity { return events.NewMemoryCapacity() })
}

func TestJetStreamCapacityConformance(t *testing.T) {
	t.Parallel()
	e := eventstest.StartServer(t)
	j := eventstest.Open(t, e, events.JetStreamConfig{})
	eventstest.RunCapacityConformance(t, func(t *testing.T) events.Capacity { return emptyCapacity(t, e.Conn(), j) })
}
