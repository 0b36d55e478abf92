package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// benchEvents is one sample event of every type (the golden files'
// values, with a run id as long as a real one) in its stored form.
func benchEvents(b *testing.B) [][]byte {
	b.Helper()
	var out [][]byte
	for _, typ := range events.Types {
		env := eventstest.SampleEnvelope(typ, "0b5e6f1c-5b7e-4a8e-9a61-2f4c8d7e9b10", 0, eventstest.T0)
		data, err := events.Encode(env)
		require.NoError(b, err)
		out = append(out, data)
	}
	return out
}

// BenchmarkDecode decodes every canonical golden event (the fast path a
// stored event takes) and BenchmarkEncode encodes them; events/s and MB/s
// are per event decoded or encoded:
//
//	go test ./events -run '^$' -bench 'BenchmarkDecode|BenchmarkEncode' -count 5
func BenchmarkDecode(b *testing.B) {
	data := benchEvents(b)
	size := 0
	for _, d := range data {
		size += len(d)
	}
	b.SetBytes(int64(size / len(data)))
	n := 0
	for b.Loop() {
		if _, err := events.Decode(data[n%len(data)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkEncode(b *testing.B) {
	var envs []events.Envelope
	for _, d := range benchEvents(b) {
		env, err := events.Decode(d)
		require.NoError(b, err)
		envs = append(envs, env)
	}
	n := 0
	for b.Loop() {
		if _, err := events.Encode(envs[n%len(envs)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeMessages decodes a job and each kind of report in their
// wire (compact) form, as a worker and the engine read them.
func BenchmarkDecodeMessages(b *testing.B) {
	job, err := events.EncodeJob(eventstest.SampleJob("0b5e6f1c-5b7e-4a8e-9a61-2f4c8d7e9b10", 0, "x1"))
	require.NoError(b, err)
	b.Run("job", func(b *testing.B) {
		for b.Loop() {
			if _, err := events.DecodeJob(job); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, kind := range []events.ReportKind{events.ReportClaimed, events.ReportFinished} {
		r, err := events.EncodeReport(eventstest.SampleReport(kind, "0b5e6f1c-5b7e-4a8e-9a61-2f4c8d7e9b10", 0, "x1", "worker-a:4242"))
		require.NoError(b, err)
		b.Run("report="+string(kind), func(b *testing.B) {
			for b.Loop() {
				if _, err := events.DecodeReport(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
