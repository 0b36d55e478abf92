package main

import (
	"debug/buildinfo"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryHasTheRaceDetectorIffTheTestsDo: the binary TestMain builds
// for the end-to-end, golden and crash tests carries the race detector
// exactly when this test binary does (go test -race, as make test runs).
func TestBinaryHasTheRaceDetectorIffTheTestsDo(t *testing.T) {
	t.Parallel()
	info, err := buildinfo.ReadFile(binPath)
	require.NoError(t, err)
	race := "false"
	for _, s := range info.Settings {
		if s.Key == "-race" {
			race = s.Value
		}
	}
	want := "false"
	if raceEnabled {
		want = "true"
	}
	require.Equal(t, want, race, "switchyard built with -race=%s; the tests run with race=%v", race, raceEnabled)
}
