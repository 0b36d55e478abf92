//go:build !race

package main

// raceEnabled reports whether this test binary has the race detector; the
// switchyard binary the tests drive is then built with it too.
const raceEnabled = false
