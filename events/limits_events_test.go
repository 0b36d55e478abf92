package events_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// limitCase is one wire format with a size limit: how to encode a valid
// value of it, one too big to send, and how to decode it.
type limitCase struct {
	name   string
	limit  int
	constN string // the constant the error must name
	valid  func(t *testing.T) []byte
	big    func(t *testing.T) error // encodes an oversized value
	decode func(b []byte) error
}

func limitCases() []limitCase {
	bigText := strings.Repeat("x", events.MaxMessageBytes)
	return []limitCase{
		{
			name: "event over MaxEventBytes", limit: events.MaxEventBytes, constN: "events.MaxEventBytes",
			valid: func(t *testing.T) []byte {
				b, err := events.Encode(eventstest.SampleEnvelope(events.TypeLaunch, "R", 0, eventstest.T0))
				require.NoError(t, err)
				return b
			},
			big: func(*testing.T) error {
				env := eventstest.SampleEnvelope(events.TypeRunCreated, "R", events.RunLane, eventstest.T0)
				p := env.Payload.(events.RunCreated)
				p.Sheet = make([]byte, events.MaxEventBytes)
				p.SheetDigest = events.Digest(p.Sheet)
				env.Payload = p
				_, err := events.Encode(env)
				return err
			},
			decode: func(b []byte) error { _, err := events.Decode(b); return err },
		},
		{
			name: "job over MaxMessageBytes", limit: events.MaxMessageBytes, constN: "events.MaxMessageBytes",
			valid: func(t *testing.T) []byte {
				b, err := events.EncodeJob(eventstest.SampleJob("R", 0, "x1"))
				require.NoError(t, err)
				return b
			},
			big: func(*testing.T) error {
				j := eventstest.SampleJob("R", 0, "x1")
				j.Paths.Prompt = "/" + bigText
				_, err := events.EncodeJob(j)
				return err
			},
			decode: func(b []byte) error { _, err := events.DecodeJob(b); return err },
		},
		{
			name: "report over MaxMessageBytes", limit: events.MaxMessageBytes, constN: "events.MaxMessageBytes",
			valid: func(t *testing.T) []byte {
				b, err := events.EncodeReport(eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "host-a:42"))
				require.NoError(t, err)
				return b
			},
			big: func(*testing.T) error {
				r := eventstest.SampleReport(events.ReportFinished, "R", 0, "x1", "host-a:42")
				r.ReceiptPath = "/" + bigText
				_, err := events.EncodeReport(r)
				return err
			},
			decode: func(b []byte) error { _, err := events.DecodeReport(b); return err },
		},
		{
			name: "control over MaxMessageBytes", limit: events.MaxMessageBytes, constN: "events.MaxMessageBytes",
			valid: func(t *testing.T) []byte {
				b, err := events.EncodeControl(sampleControl())
				require.NoError(t, err)
				return b
			},
			big: func(*testing.T) error {
				c := events.Control{ID: "c1", Kind: events.ControlCancel, Run: "R", Lane: events.RunLane,
					Cancel: &events.Cancel{Reason: bigText, By: "alice"}, Time: eventstest.T0}
				_, err := events.EncodeControl(c)
				return err
			},
			decode: func(b []byte) error { _, err := events.DecodeControl(b); return err },
		},
	}
}

// TestLimitsEventsWireFormats proves each wire format is refused over its
// limit on both sides (the store and queue conformance suites prove Append
// and Publish refuse before writing) with a *LimitError (ErrTooLarge) whose message names
// the constant and the limit: an encoder never produces an oversized
// record, and a decoder refuses one before parsing it. A record of exactly
// the limit is not refused for its size.
func TestLimitsEventsWireFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range limitCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireNamesLimit := func(t *testing.T, err error) {
				t.Helper()
				require.ErrorIs(t, err, events.ErrTooLarge)
				var le *events.LimitError
				require.True(t, errors.As(err, &le), "want a *LimitError, got %T", err)
				require.Equal(t, tc.limit, le.Max)
				require.Equal(t, tc.constN, "events."+le.Limit)
				require.Contains(t, err.Error(), tc.constN)
				require.Contains(t, err.Error(), strconv.Itoa(tc.limit))
			}

			t.Run("encode", func(t *testing.T) { requireNamesLimit(t, tc.big(t)) })

			valid := tc.valid(t)
			at := append(valid, bytes.Repeat([]byte(" "), tc.limit-len(valid))...)
			require.NoError(t, tc.decode(at), "exactly the limit (trailing whitespace) decodes")
			err := tc.decode(append(at, ' '))
			requireNamesLimit(t, err)
			require.ErrorIs(t, err, events.ErrInvalid, "every decode failure is also ErrInvalid")
		})
	}
}
