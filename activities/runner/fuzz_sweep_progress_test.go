package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// snapshotSeeds are valid snapshots of every phase and fact the runner
// records, encoded as it writes them, plus near misses.
func snapshotSeeds(tb testing.TB) [][]byte {
	tok := "proc-start:12345"
	code := 0
	at := iso(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	setup := snap(4242, &tok)
	running := snap(4242, &tok)
	running.Child = &snapChild{Role: roleWorkload, Pid: 4243, StartToken: &tok, Running: true}
	running.Activity = snapActivity{StdoutBytes: 10, StderrBytes: 2, LastActivityAt: &at}
	retry := snap(4242, nil)
	retry.Child = &snapChild{Role: rolePreflight, Pid: 4244, ExitCode: &code, Drained: true}
	retry.RetryWait = true
	cancelled := snap(4242, &tok)
	cancelled.Child = &snapChild{Role: roleWorkload, Pid: 4243, StartToken: &tok, ExitCode: nil, Drained: true}
	cancelled.Cancellation.Requested = &snapRequest{Signal: "SIGTERM", At: at}
	cancelled.ChildSettled = &snapSettled{Outcome: settledSignalled, Cause: "cancel", At: at}
	terminal := snap(4242, &tok)
	terminal.Child = &snapChild{Role: roleWorkload, Pid: 4243, ExitCode: &code, Drained: true}
	terminal.Terminal = &snapTerminal{At: at, ReceiptWritten: true}
	terminal.ReceiptRef = &fileRef{Dev: 2049, Ino: 1234567}
	var seeds [][]byte
	for _, s := range []*snapshot{setup, running, retry, cancelled, terminal} {
		s.Phase = phaseOf(s)
		b, err := json.Marshal(s)
		require.NoError(tb, err)
		seeds = append(seeds, b)
	}
	return append(seeds,
		[]byte(`{"kind":"pstack-runner-progress","schemaVersion":1,"evil":"x"}`),
		[]byte(`{}`), []byte(`null`), []byte(`[]`), []byte(`{"schemaVersion":1`))
}

// FuzzDecodeSnapshot feeds arbitrary bytes to decodeSnapshot, which reads
// every progress file `runner status` is pointed at (written by another
// process, possibly damaged or forged). It proves: decoding never panics;
// an accepted snapshot re-encodes within the writer's snapshotMaxBytes (so
// the writer can always write what the reader accepts) and decodes to
// itself; status renders it, text and JSON, under every lane kind without
// panicking.
func FuzzDecodeSnapshot(f *testing.F) {
	for _, b := range snapshotSeeds(f) {
		f.Add(b)
	}
	now := time.Date(2026, 11, 29, 12, 5, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			require.Nil(t, s)
			return
		}
		out, err := json.Marshal(s)
		require.NoError(t, err)
		require.LessOrEqual(t, len(out), snapshotMaxBytes, "an accepted snapshot fits the writer's limit")
		again, err := decodeSnapshot(out)
		require.NoError(t, err, "re-decode %s", out)
		require.Equal(t, s, again)

		written := true
		for _, v := range []laneView{
			{kind: "terminal", status: policy.StatusComplete, snap: s},
			{kind: "terminal", status: policy.StatusCancelled, snap: s},
			{kind: "active", snap: s},
			{kind: "interrupted", reason: "launcher-gone", child: "possibly-running", snap: s},
			{kind: "unknown", reason: "terminal-without-receipt", receiptWritten: &written, snap: s},
		} {
			line, key := renderLane(v, now)
			require.NotEmpty(t, line)
			_, err := json.Marshal(laneJSON(0, v, line, key, now))
			require.NoError(t, err)
		}
		require.Len(t, s.AttemptID[:8], 8, "status labels a lane with the attempt id's first 8 characters")
	})
}

// FuzzReadLaneView writes arbitrary bytes as a lane's progress file and
// receipt and reads them the way `runner status` does. It proves: reading
// never panics and always concludes one of the four lane kinds with a
// reason from RUNNER.md's vocabulary; a lane is terminal only when the
// receipt's head names schema 1 or 2 and a known status; the lane renders,
// text and JSON.
func FuzzReadLaneView(f *testing.F) {
	receipt, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "receipts", "complete-v2.json"))
	require.NoError(f, err)
	for _, b := range snapshotSeeds(f) {
		f.Add(b, receipt)
		f.Add(b, []byte(`{"schemaVersion":1,"status":"needs-parent-operation"}`))
		f.Add(b, []byte{})
	}
	f.Add([]byte{}, []byte(`{"schemaVersion":3,"status":"complete"}`))
	dir := f.TempDir()
	progress, receiptPath := filepath.Join(dir, "progress.json"), filepath.Join(dir, "receipt.json")
	reasons := map[string][]string{
		"unknown": {"missing", "not-started", "not-regular-file", "oversize", "undecodable",
			"terminal-without-receipt", "launcher-unverified"},
		"interrupted": {"launcher-gone", "pid-reused"},
		"active":      {""},
		"terminal":    {""},
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, prog, rcpt []byte) {
		require.NoError(t, os.WriteFile(progress, prog, 0o600))
		require.NoError(t, os.WriteFile(receiptPath, rcpt, 0o600))
		v := readLaneView(progress, receiptPath)
		require.Contains(t, reasons, v.kind)
		require.Contains(t, reasons[v.kind], v.reason)
		if v.kind == "terminal" {
			require.True(t, v.status.Valid(), "status %q", v.status)
			var head struct {
				SchemaVersion json.RawMessage `json:"schemaVersion"`
			}
			require.NoError(t, json.Unmarshal(rcpt, &head))
			require.Contains(t, []string{"1", "2"}, string(head.SchemaVersion))
		}
		line, key := renderLane(v, now)
		require.NotEmpty(t, line)
		_, err := json.Marshal(laneJSON(0, v, line, key, now))
		require.NoError(t, err)
	})
}
