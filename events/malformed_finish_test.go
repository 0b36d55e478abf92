package events_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestMalformedFinish (issue 26): a finish the engine recorded
// malformed-output (a delivered receipt its re-check refused) carries the
// receipt and the reason, is failed with processStarted unknown, and
// round-trips; any other shape is invalid.
func TestMalformedFinish(t *testing.T) {
	malformed := func() events.Finish {
		p := eventstest.SamplePayload(events.TypeFinish).(events.Finish)
		p.Malformed = "exit status 1 (success needs exit 0)"
		p.Event = policy.Event{AttemptIndex: 0, Status: policy.OutcomeFailed}
		return p
	}
	env := events.NewEnvelope("R", 0, eventstest.T0, malformed())
	b, err := events.Encode(env)
	require.NoError(t, err)
	require.Contains(t, string(b), `"malformed":"exit status 1 (success needs exit 0)"`)
	got, err := events.Decode(b)
	require.NoError(t, err)
	require.Equal(t, env, got)

	for name, mut := range map[string]func(*events.Finish){
		"an outcome other than failed": func(p *events.Finish) { p.Event.Status = policy.OutcomeComplete },
		"a known start":                func(p *events.Finish) { p.Event.ProcessStarted = new(bool) },
		"no receipt":                   func(p *events.Finish) { p.Receipt, p.ReceiptDigest, p.Abandoned = nil, "", true },
		"a receipt that claims no delivery": func(p *events.Finish) {
			rc := *p.Receipt
			rc.Status = policy.StatusChildFailed
			p.Receipt = &rc
		},
		"a reason over the cap": func(p *events.Finish) { p.Malformed = strings.Repeat("x", events.MaxMalformedReason+1) },
	} {
		t.Run(name, func(t *testing.T) {
			p := malformed()
			mut(&p)
			_, err := events.Encode(events.NewEnvelope("R", 0, eventstest.T0, p))
			require.ErrorIs(t, err, events.ErrInvalid)
		})
	}
}
