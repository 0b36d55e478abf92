package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// capacitySeeds are every golden report, every refused input and a few
// shapes at the edges.
func capacitySeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, r := range capacityGoldens() {
		seeds = append(seeds, mustMarshalReport(tb, r))
	}
	for _, rj := range reportRejects(tb) {
		seeds = append(seeds, rj.in)
	}
	seeds = append(seeds, []byte(`{}`), []byte(`null`), []byte(`{"schema_version":1,"schema_version":1}`),
		[]byte(`{"snapshot":{"windows":[{}]}}`), []byte("\ufeff{}"))
	return seeds
}

// FuzzDecodeCapacityReport: decoding never panics; whatever it accepts is
// valid, marshals, and decodes again to an equal value with the same bytes.
func FuzzDecodeCapacityReport(f *testing.F) {
	for _, s := range capacitySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeCapacityReport(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidCapacity)
			require.Equal(t, CapacityReport{}, r)
			return
		}
		require.NoError(t, r.Validate())
		out, err := MarshalCapacityReport(r)
		require.NoError(t, err)
		again, err := DecodeCapacityReport(out)
		require.NoError(t, err, "re-decode %s", out)
		require.Equal(t, r, again)
		out2, err := MarshalCapacityReport(again)
		require.NoError(t, err)
		require.Equal(t, string(out), string(out2), "canonical bytes are a fixed point")
		// The gate never panics on an accepted report either.
		for _, src := range QuotaSources {
			v := EvaluateEligibility(EligibilityInput{Provider: r.Provider, Source: src, Report: &r, Now: capT0})
			require.True(t, v.Capacity.Valid())
			require.Equal(t, v.Eligible, v.Code == "")
		}
	})
}

// FuzzDecodeCapacitySnapshot and FuzzDecodeExecutionEligibility hold the
// standalone decoders to the same promise.
func FuzzDecodeCapacitySnapshot(f *testing.F) {
	for _, r := range capacityGoldens() {
		b, err := MarshalCapacitySnapshot(r.Snapshot)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"windows":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeCapacitySnapshot(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidCapacity)
			return
		}
		out, err := MarshalCapacitySnapshot(s)
		require.NoError(t, err)
		again, err := DecodeCapacitySnapshot(out)
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}

func FuzzDecodeExecutionEligibility(f *testing.F) {
	for _, r := range capacityGoldens() {
		if r.Eligibility != nil {
			b, err := MarshalExecutionEligibility(*r.Eligibility)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte(`{"reasons":[null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeExecutionEligibility(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidCapacity)
			return
		}
		require.Equal(t, e.State, EligibilityStateOf(e.Reasons))
		out, err := MarshalExecutionEligibility(e)
		require.NoError(t, err)
		again, err := DecodeExecutionEligibility(out)
		require.NoError(t, err)
		require.Equal(t, e, again)
	})
}
