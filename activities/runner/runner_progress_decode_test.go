package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgressDecodeRefusesDuplicateKey: a progress snapshot that repeats a
// key, at any level, is undecodable. encoding/json alone lets the last
// repeat silently win, so a damaged or forged file could say two things
// about one fact and status would believe the second.
func TestProgressDecodeRefusesDuplicateKey(t *testing.T) {
	t.Parallel()
	valid := string(snapshotSeeds(t)[3]) // cancelled: child, requested and childSettled all set
	_, err := decodeSnapshot([]byte(valid))
	require.NoError(t, err, "the unmodified snapshot decodes: %s", valid)

	for _, tc := range []struct {
		name, old, new, msg string
	}{
		{"top-level seq", `"seq":3,`, `"seq":3,"seq":9,`, "duplicate key seq"},
		{"top-level object", `"terminal":null,`, `"terminal":null,"terminal":{"at":"2026-11-29T12:00:00.000Z","receiptWritten":true},`, "duplicate key terminal"},
		{"escaped repeat", `"seq":3,`, `"seq":3,"\u0073eq":9,`, "duplicate key seq"},
		{"runner.pid", `"runner":{"pid":4242,`, `"runner":{"pid":4242,"pid":1,`, "runner: duplicate key pid"},
		{"child.running", `"running":false,`, `"running":false,"running":true,`, "child: duplicate key running"},
		{"cancellation.requested", `"cancellation":{`, `"cancellation":{"requested":null,`, "cancellation: duplicate key requested"},
		{"requested.signal", `"signal":"SIGTERM",`, `"signal":"SIGTERM","signal":"SIGINT",`, "duplicate key signal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, 1, strings.Count(valid, tc.old), "fixture has %s once", tc.old)
			b := strings.Replace(valid, tc.old, tc.new, 1)
			s, err := decodeSnapshot([]byte(b))
			require.Nil(t, s)
			require.EqualError(t, err, tc.msg)

			// status reports the lane as undecodable rather than trusting either copy.
			dir := t.TempDir()
			prg := filepath.Join(dir, "progress.json")
			require.NoError(t, os.WriteFile(prg, []byte(b), 0o600))
			v := readLaneView(prg, filepath.Join(dir, "receipt.json"))
			require.Equal(t, "unknown", v.kind)
			require.Equal(t, "undecodable", v.reason)
		})
	}
}
