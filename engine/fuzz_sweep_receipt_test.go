package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// fixtureRunDir is the run directory the policy receipt fixtures name; the
// fuzz target moves it to a real directory so the paths match.
const fixtureRunDir = "/srv/switchyard/runs/run-7/lane-1"

// receiptHarness is a driver over one isolated-write lane whose dispatch is
// attempt 1 (the codex:gpt-5.6-sol@max attempt the fixtures ran), with its
// receipt at dir/receipt.json and its output at dir/output.md (not
// written: a test of a usable complete receipt writes it).
func receiptHarness(dir string) (*driver, machines.LaneRecord, string) {
	sol := policy.AttemptPolicy{
		Descriptor:      "codex:gpt-5.6-sol@max",
		Attempt:         policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Codex, Model: "gpt-5.6-sol", Effort: policy.EffortMax},
		ExhaustionGroup: policy.Codex, Funding: policy.FundingIncluded, APISpend: policy.APISpendDeny,
		Route: policy.RouteExternal, Authorization: policy.Authorization{State: "allowed"},
	}
	other := sol
	other.Descriptor, other.Attempt.Provider, other.ExhaustionGroup = "grok:grok-4.7@xhigh", policy.Grok, policy.Grok
	path := filepath.Join(dir, "receipt.json")
	d := &driver{run: "run-7", r: &machines.Run{ID: "run-7", Created: &events.RunCreated{
		Parent: policy.ParentClaude, Access: policy.IsolatedWrite, Options: events.RunOptions{Contract: policy.ContractLegacy},
	}}}
	l := machines.LaneRecord{Index: 0, Policy: policy.LanePolicy{ID: "bug-fix#1", Attempts: []policy.AttemptPolicy{other, sol}},
		Dispatch: &events.Launch{ExecutionID: "x1", AttemptIndex: 1, Paths: events.Paths{Receipt: path, Output: filepath.Join(dir, "output.md")}}}
	return d, l, path
}

// FuzzReceiptFinish feeds arbitrary bytes to the engine as the receipt
// file a worker reported (with the matching digest, or not), through
// receiptFinish: the engine's only reader of receipts. It proves: reading
// never panics; a usable receipt yields a finish carrying that receipt and
// its digest for the dispatched attempt; an unusable one yields a failed
// finish for that attempt and a reason; and whatever the bytes, the finish
// is one the store accepts and the log folds back unchanged, so a report
// can never wedge a run.
func FuzzReceiptFinish(f *testing.F) {
	fixtures, err := filepath.Glob(filepath.Join("..", "policy", "testdata", "receipts", "*.json"))
	require.NoError(f, err)
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b, true)
		f.Add(b, false)
	}
	f.Add([]byte(`{}`), true)
	f.Add([]byte(``), true)
	dir := f.TempDir()
	d, l, path := receiptHarness(dir)
	f.Fuzz(func(t *testing.T, b []byte, digestMatches bool) {
		data := bytes.ReplaceAll(b, []byte(fixtureRunDir), []byte(dir))
		require.NoError(t, os.WriteFile(path, data, 0o600))
		rep := events.Report{ExecutionID: "x1", Run: "run-7", Lane: 0, Kind: events.ReportFinished, WorkerID: "host-a:42",
			ReceiptPath: path, ReceiptDigest: events.Digest(data)}
		if !digestMatches {
			rep.ReceiptDigest = events.Digest(append(data, '\n'))
		}
		fin, problem := d.receiptFinish(l, rep)
		require.Equal(t, 1, fin.Event.AttemptIndex)
		require.Equal(t, "x1", fin.ExecutionID)
		if problem == "" {
			require.NotNil(t, fin.Receipt)
			require.Equal(t, events.Digest(data), fin.ReceiptDigest)
			require.False(t, fin.Abandoned)
			require.True(t, digestMatches, "a receipt whose digest differs from the report is never used")
			_, err := policy.DecodeReceipt(data)
			require.NoError(t, err)
		} else {
			require.Equal(t, policy.OutcomeFailed, fin.Event.Status)
			require.Equal(t, fin.Receipt == nil, fin.Abandoned)
		}
		fin.ReportSeq = 12
		env := events.NewEnvelope(d.run, l.Index, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), fin)
		enc, err := events.Encode(env)
		require.NoError(t, err, "the finish is recordable (problem %q)", problem)
		back, err := events.Decode(enc)
		require.NoError(t, err, "the recorded finish decodes")
		require.Equal(t, env, back)
	})
}
