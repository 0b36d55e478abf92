//go:build race

package events

// raceEnabled reports whether this test binary has the race detector,
// which makes sync.Pool drop a share of what is put back.
const raceEnabled = true
