package events

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodeAllInput is n stored events cycling through the golden envelopes,
// each on its own subject with sequence i+1.
func decodeAllInput(t *testing.T, n int) []*memEvent {
	t.Helper()
	golden := goldenEnvelopes(t)
	evs := make([]*memEvent, n)
	for i := range evs {
		env := golden[i%len(golden)]
		env.Seq = 0
		b, err := Encode(env)
		require.NoError(t, err)
		evs[i] = &memEvent{subject: EventSubject(env.Run, env.Lane), run: env.Run, seq: uint64(i + 1), data: string(b)}
	}
	return evs
}

// TestDecodeAllInParts: a list long enough to be decoded in parts comes
// back in log order, each event as a lone decode returns it, and a bad
// list fails with its first bad event in log order whichever part holds
// it and whatever the later parts hold.
func TestDecodeAllInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{1, decodePartMin*2 - 1, decodePartMin * 2, decodePartMin*4 + 3, 500} {
		evs := decodeAllInput(t, n)
		got, err := decodeAll(evs)
		require.NoError(t, err, "%d events", n)
		require.Len(t, got, n)
		for i, e := range evs {
			want, err := decodeStoredString(e.subject, e.seq, e.data)
			require.NoError(t, err)
			require.Equal(t, want, got[i], "%d events: event %d", n, i)
		}
	}

	evs := decodeAllInput(t, decodePartMin*4+3) // four parts of 25, 25, 25, 24
	bad := func(at ...int) []*memEvent {
		out := append([]*memEvent(nil), evs...)
		for _, i := range at {
			e := *out[i]
			out[i] = &e
			if i%2 == 0 {
				out[i].data = out[i].data[:len(out[i].data)/2] // truncated
			} else {
				out[i].subject = EventSubject("other-run", 3) // on another run's subject
			}
		}
		return out
	}
	for _, tc := range [][]int{{0}, {len(evs) - 1}, {30, 80}, {80, 31}, {98, 60, 26, 5}, {51, 52}} {
		first := tc[0]
		for _, i := range tc {
			first = min(first, i)
		}
		got, err := decodeAll(bad(tc...))
		require.Nil(t, got, "bad at %v", tc)
		var de *DecodeError
		require.ErrorAs(t, err, &de, "bad at %v", tc)
		require.Contains(t, de.What, " #"+strconv.Itoa(first+1), "bad at %v: the first bad event in log order is #%d", tc, first+1)
	}
}
