package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestLimitsEngineReceipt proves the engine's receipt limits: a receipt
// over policy.MaxReceiptBytes is not read, and one that decodes but would
// make a finish over events.MaxEventBytes is not recorded; either way the
// lane's finish is recorded failed, without the receipt, with a reason
// naming the limit, so the run moves on. A receipt of exactly
// policy.MaxReceiptBytes whose finish fits is used.
func TestLimitsEngineReceipt(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile(filepath.Join("..", "policy", "testdata", "receipts", "complete-v2.json"))
	require.NoError(t, err)
	pad := func(b []byte, n int) []byte {
		require.LessOrEqual(t, len(b), n)
		return append(append([]byte{}, b...), bytes.Repeat([]byte(" "), n-len(b))...)
	}
	// bigArgv is the fixture with an argv of about 600 KiB: under
	// policy.MaxReceiptBytes, over events.MaxEventBytes once embedded.
	bigArgv := func(b []byte) []byte {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(b, &doc))
		argv := doc["argv"].([]any)
		for range 600 {
			argv = append(argv, strings.Repeat("a", 1024))
		}
		doc["argv"] = argv
		out, err := json.Marshal(doc)
		require.NoError(t, err)
		return out
	}
	for _, tc := range []struct {
		name    string
		receipt func(dir string) []byte
		problem []string // substrings of the reason; none when usable
	}{
		{"exactly policy.MaxReceiptBytes is used", func(dir string) []byte {
			return pad(bytes.ReplaceAll(fixture, []byte(fixtureRunDir), []byte(dir)), policy.MaxReceiptBytes)
		}, nil},
		{"over policy.MaxReceiptBytes is not read", func(dir string) []byte {
			return pad(bytes.ReplaceAll(fixture, []byte(fixtureRunDir), []byte(dir)), policy.MaxReceiptBytes+1)
		}, []string{"policy.MaxReceiptBytes receipt limit (1048576 bytes)"}},
		{"a finish over events.MaxEventBytes is not recorded", func(dir string) []byte {
			return bigArgv(bytes.ReplaceAll(fixture, []byte(fixtureRunDir), []byte(dir)))
		}, []string{"cannot be recorded in a finish", "events.MaxEventBytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d, l, path := receiptHarness(dir)
			// The delivered response the complete fixture claims: the
			// engine's re-check needs a non-empty output file.
			require.NoError(t, os.WriteFile(l.Dispatch.Paths.Output, []byte("answer\n"), 0o600))
			data := tc.receipt(dir)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			rep := events.Report{ExecutionID: "x1", Run: "run-7", Lane: 0, Kind: events.ReportFinished, WorkerID: "host-a:42",
				ReceiptPath: path, ReceiptDigest: events.Digest(data)}
			fin, problem := d.receiptFinish(l, rep)
			if tc.problem == nil {
				require.Empty(t, problem)
				require.NotNil(t, fin.Receipt)
				require.Equal(t, policy.OutcomeComplete, fin.Event.Status)
			} else {
				for _, s := range tc.problem {
					require.Contains(t, problem, s)
				}
				require.Nil(t, fin.Receipt)
				require.True(t, fin.Abandoned)
				require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
			}
			fin.ReportSeq = 12
			_, err := events.Encode(events.NewEnvelope(d.run, l.Index, time.Now(), fin))
			require.NoError(t, err, "the finish is recordable")
		})
	}
}
