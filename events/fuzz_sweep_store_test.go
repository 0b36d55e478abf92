package events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeClaim feeds arbitrary bytes to decodeClaim, which reads every
// claim value of the claims bucket: the record that decides whether an
// execution may ever run. It proves: decoding never panics; a refusal
// matches ErrInvalid; an accepted claim obeys what Claim and Abandon enforce
// on write (a valid worker id, a lease of at least 1ms, a known state) and
// re-encodes to a record that decodes to the same lease.
func FuzzDecodeClaim(f *testing.F) {
	held := Lease{ExecutionID: "x1", WorkerID: "host-a:42", State: LeaseHeld, TTL: 30 * time.Second, Renewals: 3}
	released := held
	released.State = LeaseReleased
	abandoned := held
	abandoned.State, abandoned.AbandonedBy = LeaseAbandoned, "host-b:7"
	for _, l := range []Lease{held, released, abandoned} {
		b, err := json.Marshal(l.record())
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"schema":1,"worker":"w","state":"held","ttlMs":-1,"renewals":0}`))
	f.Add([]byte(`{"schema":1,"worker":"w","state":"held","ttlMs":9223372036854775807,"renewals":0}`))
	f.Add([]byte(`{"schema":1,"worker":"","state":"held","ttlMs":1000,"renewals":0}`))
	f.Add([]byte(`{"schema":1,"worker":"w","state":"gone","ttlMs":1000,"renewals":0}`))
	f.Add([]byte(`{"schema":1,"worker":"w","state":"held","ttlMs":1000,"renewals":0,"extra":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeClaim("x1", b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			require.Equal(t, Lease{}, l)
			return
		}
		require.Equal(t, "x1", l.ExecutionID)
		require.Contains(t, []LeaseState{LeaseHeld, LeaseReleased, LeaseAbandoned}, l.State)
		require.NoError(t, validateClaim(l.ExecutionID, l.WorkerID, l.TTL), "an accepted claim is one Claim could have written")
		again, err := json.Marshal(l.record())
		require.NoError(t, err)
		back, err := decodeClaim("x1", again)
		require.NoError(t, err, "re-decode %s", again)
		require.Equal(t, l, back)
	})
}

// FuzzDecodeStored feeds an arbitrary subject and payload to decodeStored,
// which reads every event a store returns. It proves: it never panics; a
// refusal matches ErrInvalid; an accepted event lies on exactly the subject
// it was read from, carries the store's sequence and re-encodes to bytes
// that decode to the same envelope.
func FuzzDecodeStored(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	require.NoError(f, err)
	for _, p := range files {
		name := filepath.Base(p)
		if name == "job.golden" || strings.HasPrefix(name, "report-") {
			continue
		}
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add("sy.ev.R.L0", uint64(7), b)
		f.Add("sy.ev.R.run", uint64(1), b)
	}
	f.Add("sy.ev.R.L+0", uint64(7), []byte(`{}`))
	f.Fuzz(func(t *testing.T, subject string, seq uint64, b []byte) {
		env, err := decodeStored(subject, seq, b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			return
		}
		require.Equal(t, subject, env.Subject())
		require.Equal(t, seq, env.Seq)
		run, lane, err := ParseEventSubject(subject)
		require.NoError(t, err)
		require.Equal(t, env.Run, run)
		require.Equal(t, env.Lane, lane)
		again, err := Encode(env)
		if errors.Is(err, ErrTooLarge) {
			return // re-encoding may escape characters the input had raw.
		}
		require.NoError(t, err)
		back, err := decodeStored(subject, seq, again)
		require.NoError(t, err)
		require.Equal(t, env, back)
	})
}
