package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

var recordReplayLog = flag.Bool("record-replay-log", false, "record testdata/replay/panel.jsonl again from runPanel (then fail: review and commit it)")

// recordedPanel is the log of runPanel recorded on 2026-12-01 by
// `go test -run TestReplayVerifiesARecordedLog -record-replay-log ./engine`:
// one encoded envelope per line, in store order.
var recordedPanel = filepath.Join("testdata", "replay", "panel.jsonl")

// TestReplayVerifiesARecordedLog replays a log recorded by an earlier
// build and checked in. Replay of a fresh run only proves the engine and
// replay agree today; this proves today's replay still verifies the logs
// already written: a renamed key of the policy-input digest, a changed
// decision or a changed normalization makes it diverge.
func TestReplayVerifiesARecordedLog(t *testing.T) {
	t.Parallel()
	if *recordReplayLog {
		h := newHarness(t, memory, withIDs("recorded"))
		run := runPanel(t, h)
		envs, err := h.store.LoadRun(context.Background(), run)
		require.NoError(t, err)
		var b bytes.Buffer
		for _, e := range envs {
			line, err := events.Encode(e)
			require.NoError(t, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(recordedPanel), 0o755))
		require.NoError(t, os.WriteFile(recordedPanel, b.Bytes(), 0o644))
		t.Fatalf("recorded %s (%d events); review and commit it, then rerun without -record-replay-log", recordedPanel, len(envs))
	}

	f, err := os.Open(recordedPanel)
	require.NoError(t, err)
	defer f.Close()
	var envs []events.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, events.MaxEventBytes+1)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		require.NoError(t, err, "line %d", len(envs)+1)
		envs = append(envs, e)
	}
	require.NoError(t, sc.Err())
	require.Len(t, envs, 15)
	run := envs[0].Run
	require.Equal(t, "recorded-0001", run)

	store := copyLog(t, envs, -1, nil)
	res, err := engine.Replay(context.Background(), store, run, policy.DefaultOptions())
	require.NoError(t, err)
	require.True(t, res.Verified, "replay of the recorded log: %s", res.Text())
	require.Equal(t, engine.ReplayResult{Run: run, Verified: true, Events: len(envs), Decisions: 5, Normalizations: 3}, res)
}
