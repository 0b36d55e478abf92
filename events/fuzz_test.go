package events_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// seedGoldens adds every golden file whose name has prefix (and, with
// exclude, none of those) to f's corpus.
func seedGoldens(f *testing.F, match func(name string) bool) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	require.NoError(f, err)
	for _, p := range files {
		if match(filepath.Base(p)) {
			b, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"schema":1,"type":"cancel","run":"R","lane":0,"time":"2026-01-01T00:00:00Z","payload":{"reason":"r","by":"b"}}`))
}

func isEvent(name string) bool {
	return name != "job.golden" && !strings.HasPrefix(name, "report-")
}

// FuzzDecodeEnvelope: Decode never panics, and whatever it accepts
// re-encodes to bytes that decode to the same envelope.
func FuzzDecodeEnvelope(f *testing.F) {
	seedGoldens(f, isEvent)
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := events.Decode(b)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		again, err := events.Encode(env)
		if errors.Is(err, events.ErrTooLarge) {
			return // re-encoding may escape characters the input had raw.
		}
		require.NoError(t, err)
		back, err := events.Decode(again)
		require.NoError(t, err)
		require.Equal(t, env, back)
	})
}

// FuzzDecodeJob: DecodeJob never panics and round-trips what it accepts.
func FuzzDecodeJob(f *testing.F) {
	seedGoldens(f, func(n string) bool { return n == "job.golden" })
	f.Fuzz(func(t *testing.T, b []byte) {
		job, err := events.DecodeJob(b)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		again, err := events.EncodeJob(job)
		if errors.Is(err, events.ErrTooLarge) {
			return
		}
		require.NoError(t, err)
		back, err := events.DecodeJob(again)
		require.NoError(t, err)
		require.Equal(t, job, back)
	})
}

// FuzzDecodeReport: DecodeReport never panics and round-trips what it
// accepts.
func FuzzDecodeReport(f *testing.F) {
	seedGoldens(f, func(n string) bool { return strings.HasPrefix(n, "report-") })
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := events.DecodeReport(b)
		if err != nil {
			require.ErrorIs(t, err, events.ErrInvalid)
			return
		}
		again, err := events.EncodeReport(r)
		if errors.Is(err, events.ErrTooLarge) {
			return
		}
		require.NoError(t, err)
		back, err := events.DecodeReport(again)
		require.NoError(t, err)
		require.Equal(t, r, back)
	})
}
