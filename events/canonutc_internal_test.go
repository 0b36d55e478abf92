package events

import (
	"math/rand/v2"
	"testing"
	"time"
)

// oldUTC is how envelope times were read before canonUTC: time.Parse,
// and the UTC time must format back to the same string.
func oldUTC(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	t = t.UTC()
	return t, t.Format(time.RFC3339Nano) == s
}

// checkCanonUTC requires canonUTC to accept exactly what oldUTC accepts,
// with the same time, and parseUTC to agree with both.
func checkCanonUTC(t *testing.T, s string) {
	t.Helper()
	want, wantOK := oldUTC(s)
	got, ok := canonUTC(s)
	if ok != wantOK || (ok && got != want) {
		t.Fatalf("canonUTC(%q) = %v, %v; time.Parse and format give %v, %v", s, got, ok, want, wantOK)
	}
	if got, ok := parseUTC(s); ok != wantOK || got != want {
		t.Fatalf("parseUTC(%q) = %v, %v; want %v, %v", s, got, ok, want, wantOK)
	}
}

// TestCanonUTC: random times over years 0 to 9999 at every fraction
// length read back exactly, and near misses (each field out of range by
// one, a trailing zero, another zone, a missing or extra digit) decline
// as time.Parse's round trip declines them.
func TestCanonUTC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		at := time.Unix(r.Int64N(253402300800+62135596800)-62135596800, r.Int64N(1e9)).UTC()
		for _, trunc := range []time.Duration{1, time.Microsecond, time.Millisecond, time.Second} {
			s := at.Truncate(trunc).Format(time.RFC3339Nano)
			if _, ok := canonUTC(s); !ok {
				t.Fatalf("canonUTC declines %q", s)
			}
			checkCanonUTC(t, s)
		}
	}
	for _, s := range []string{
		"2026-12-06T18:00:00Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2000-02-29T23:59:59.999999999Z",
		"1900-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.9Z", "2026-04-31T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-12-00T00:00:00Z", "2026-12-32T00:00:00Z",
		"2026-12-06T24:00:00Z", "2026-12-06T23:60:00Z", "2026-12-06T23:59:60Z", "2026-12-06T18:00:00.Z",
		"2026-12-06T18:00:00.10Z", "2026-12-06T18:00:00.1234567891Z", "2026-12-06T18:00:00.000000000Z",
		"2026-12-06T18:00:00+00:00", "2026-12-06T18:00:00z", "2026-12-06t18:00:00Z", "2026-12-06 18:00:00Z",
		"2026-1-06T18:00:00Z", "20261-12-06T18:00:00Z", "2026-12-06T18:00:00", "2026-12-06T18:00:0aZ",
		"-026-12-06T18:00:00Z", "2026-12-06T18:00:00.-1Z", "2026-12-06T18:00:00.1 Z", "",
	} {
		checkCanonUTC(t, s)
	}
}

func FuzzCanonUTC(f *testing.F) {
	for _, s := range []string{"2026-12-06T18:00:00Z", "2026-12-06T18:00:00.123456789Z", "2024-02-29T00:00:00.5Z", "2026-12-06T18:00:00+01:00"} {
		f.Add(s)
	}
	f.Fuzz(checkCanonUTC)
}
