package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// panelSheet is a two-seat panel whose primaries both exhaust: lane 0
// falls back from codex to cursor; lane 1's only fallback is codex, which
// lane 0 exhausted first, so lane 1 skips it and its chain is exhausted.
var panelSheet = sheet("", "arena runners: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default, claude:sonnet@low -> codex:gpt-5.6-sol@max")

// runPanel drives panelSheet to run-final, feeding each job's report in a
// fixed order and waiting for its effect, so the log is deterministic.
func runPanel(t *testing.T, h *harness) string {
	t.Helper()
	h.run()
	run := h.submit(panelSheet, "arena runners", policy.ReadOnly)
	codex := h.nextJob(events.JobSubject("codex"))
	claude := h.nextJob(events.JobSubject("claude"))
	require.Equal(t, 0, codex.Lane)
	require.Equal(t, 1, claude.Lane)

	h.execute(codex, "usage-exhausted")
	h.report(codex, events.ReportClaimed)
	h.report(codex, events.ReportFinished)
	cursor := h.nextJob(events.JobSubject("cursor"))
	h.waitType(run, events.TypeGroupExhausted, 1)

	h.execute(claude, "usage-exhausted")
	h.report(claude, events.ReportClaimed)
	h.report(claude, events.ReportFinished)
	h.waitLane(run, 1, machines.StateStopped)

	h.execute(cursor, "success")
	h.report(cursor, events.ReportClaimed)
	h.report(cursor, events.ReportFinished)
	h.waitFinal(run)
	return run
}

// TestExhaustedGroupIsHonouredByAnotherLane proves that lane 0's usage
// exhaustion of codex makes lane 1 skip its codex fallback, and that the
// report explains the skip with the exhausting lane.
func TestExhaustedGroupIsHonouredByAnotherLane(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	run := runPanel(t, h)
	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	l1 := rep.Lanes[1]
	require.Equal(t, machines.StateStopped, l1.State)
	require.Equal(t, string(policy.StopChainExhausted), l1.Reason)
	require.Len(t, l1.Attempts, 2)
	require.True(t, l1.Attempts[1].Skipped)
	require.Contains(t, l1.Attempts[1].Cause, "codex usage exhausted (lane 0")
	require.Equal(t, []policy.Provider{policy.Cursor}, rep.Diversity.Providers)
	require.Equal(t, []policy.Provider{policy.Codex, policy.Cursor, policy.Claude}, rep.Diversity.Attempted)
	h.noJob(run, events.JobSubject("codex"))
	h.verifyReplay(run)
}

// decisionRecord is what parity compares: every decision, its input digest
// and the event type it was recorded as, per lane.
type decisionRecord struct {
	Type        events.Type
	Decision    string
	InputDigest string
}

func decisionsOf(t *testing.T, store events.Store, run string) map[int][]decisionRecord {
	t.Helper()
	envs, err := store.LoadRun(context.Background(), run)
	require.NoError(t, err)
	out := map[int][]decisionRecord{}
	for _, e := range envs {
		var d events.Decided
		switch p := e.Payload.(type) {
		case events.Launch:
			d = events.Decided{Decision: p.Decision, InputDigest: p.InputDigest}
		case events.Inspect:
			d = events.Decided(p)
		case events.RequestOperation:
			d = events.Decided(p)
		case events.Complete:
			d = events.Decided(p)
		case events.Stop:
			d = events.Decided(p)
		default:
			continue
		}
		out[e.Lane] = append(out[e.Lane], decisionRecord{e.Type, jsonOf(t, d.Decision), d.InputDigest})
	}
	return out
}

// TestMemoryAndJetStreamDecideAlike runs the same panel with the same
// reports on the in-memory store and on a real JetStream (same ids, same
// data directory and checkout) and proves the decision sequences, input
// digests included, are identical.
func TestMemoryAndJetStreamDecideAlike(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	repo := gitRepo(t)
	var seqs []map[int][]decisionRecord
	for _, b := range []backend{memory, jetstream} {
		require.NoError(t, os.RemoveAll(data))
		h := newHarness(t, b, withIDs("parity"), withDataDir(data), withRepo(repo))
		run := runPanel(t, h)
		require.Equal(t, "parity-0001", run)
		seqs = append(seqs, decisionsOf(t, h.store, run))
		h.verifyReplay(run)
	}
	require.Len(t, seqs[0][0], 3, "lane 0: launch, launch, complete")
	require.Len(t, seqs[0][1], 2, "lane 1: launch, stop")
	require.Equal(t, seqs[0], seqs[1])
}

// TestReplayReportsFirstDivergence alters one recorded payload at a time in
// a copy of a finished run's log and proves Replay names the altered event
// and the field, with the expected and the recorded value.
func TestReplayReportsFirstDivergence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	run := runPanel(t, h)
	envs, err := h.store.LoadRun(context.Background(), run)
	require.NoError(t, err)
	h.verifyReplay(run)

	nth := func(typ events.Type, n int) int {
		for i, e := range envs {
			if e.Type == typ {
				if n == 0 {
					return i
				}
				n--
			}
		}
		t.Fatalf("no %s #%d", typ, n)
		return -1
	}
	for _, tc := range []struct {
		name  string
		at    int
		alter func(p events.Payload) events.Payload
		field engine.DivergenceField
	}{
		{"a finish's outcome", nth(events.TypeFinish, 0), func(p events.Payload) events.Payload {
			f := p.(events.Finish)
			f.Event.Status = policy.OutcomeRouteUnavailable
			return f
		}, engine.FieldEvent},
		{"a finish's receipt status", nth(events.TypeFinish, 0), func(p events.Payload) events.Payload {
			f := p.(events.Finish)
			rc := *f.Receipt
			rc.Status = policy.StatusCancelled // recorded outcome no longer follows
			f.Receipt = &rc
			return f
		}, engine.FieldEvent},
		{"a finish's receipt made undecodable", nth(events.TypeFinish, 0), func(p events.Payload) events.Payload {
			f := p.(events.Finish)
			rc := *f.Receipt
			rc.Argv = nil // null: DecodeReceipt refuses it, so the engine would have recorded failed
			f.Receipt = &rc
			return f
		}, engine.FieldEvent},
		{"a launch's input digest", nth(events.TypeLaunch, 2), func(p events.Payload) events.Payload {
			l := p.(events.Launch)
			l.InputDigest = events.Digest([]byte("forged"))
			return l
		}, engine.FieldInputDigest},
		{"a stop's decision", nth(events.TypeStop, 0), func(p events.Payload) events.Payload {
			s := p.(events.Stop)
			s.Decision.Reason = string(policy.StopNotEligible)
			return s
		}, engine.FieldDecision},
		{"run-created's lanes", 0, func(p events.Payload) events.Payload {
			c := p.(events.RunCreated)
			c.Lanes = append([]policy.LanePolicy(nil), c.Lanes...)
			c.Lanes[0].Fallback = policy.FallbackPolicy{On: []policy.Outcome{policy.OutcomeUsageExhausted, policy.OutcomeRouteUnavailable}}
			return c
		}, engine.FieldLanes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			altered := copyLog(t, envs, tc.at, tc.alter)
			res, err := engine.Replay(context.Background(), altered, run, policy.DefaultOptions())
			require.NoError(t, err)
			require.False(t, res.Verified)
			require.NotNil(t, res.Divergence)
			require.Equal(t, envs[tc.at].Seq, res.Divergence.Seq, "the altered event is the first divergence")
			require.Equal(t, envs[tc.at].Type, res.Divergence.Type)
			require.Equal(t, tc.field, res.Divergence.Field)
			require.NotEqual(t, res.Divergence.Expected, res.Divergence.Actual)
			require.Contains(t, res.Text(), "DIVERGED")
		})
	}
}

// copyLog appends envs to a fresh MemoryStore, with envs[at]'s payload
// altered; sequences stay the same (both stores number globally from 1).
func copyLog(t *testing.T, envs []events.Envelope, at int, alter func(events.Payload) events.Payload) events.Store {
	t.Helper()
	s := events.NewMemoryStore()
	last := map[string]uint64{}
	for i, e := range envs {
		if i == at {
			e.Payload = alter(e.Payload)
		}
		seq, err := s.Append(context.Background(), e, last[e.Subject()])
		require.NoError(t, err)
		require.Equal(t, e.Seq, seq)
		last[e.Subject()] = seq
	}
	return s
}
