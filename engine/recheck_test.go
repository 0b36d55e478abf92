package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestTamperedCompleteReceiptIsMalformed (issue 26): the engine does not
// trust a complete receipt blindly. A worker-side receipt the real runner
// wrote for a successful attempt, then tampered so that it still says
// complete but fails a success condition (exit 1, an empty output file,
// an argv that does not pin the assignment's model, a pinned-argv claim
// from a provider whose model needs a report), is recorded as
// malformed-output with the reason: in the finish event, and in the run
// report. The attempt finishes failed, so the lane stops and nothing runs
// again, and replay verifies the recorded finish.
func TestTamperedCompleteReceiptIsMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, job events.Job, rc map[string]any)
		reason string
	}{
		{"exit 1", func(t *testing.T, _ events.Job, rc map[string]any) { rc["exitCode"] = 1 }, "exit status 1 (success needs exit 0)"},
		{"empty output", func(t *testing.T, job events.Job, _ map[string]any) {
			require.NoError(t, os.Truncate(job.Paths.Output, 0))
		}, "the output file is missing or empty"},
		{"unpinned argv", func(t *testing.T, _ events.Job, rc map[string]any) {
			argv := rc["argv"].([]any)
			for i, a := range argv {
				if a == "--model" {
					argv[i+1] = "gpt-5.6-terra"
				}
			}
		}, `the argv passes a --model other than the assignment's "gpt-5.6-sol"`},
		{"no model evidence", func(t *testing.T, _ events.Job, rc map[string]any) { rc["modelEvidence"] = nil }, "modelEvidence is null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, jetstream)
			h.run()
			run, job := h.submitOneLane()
			h.execute(job, "success")
			raw, err := os.ReadFile(job.Paths.Receipt)
			require.NoError(t, err)
			var rc map[string]any
			require.NoError(t, json.Unmarshal(raw, &rc))
			require.Equal(t, "complete", rc["status"], "the runner's own receipt is complete")
			tc.tamper(t, job, rc)
			out, err := json.Marshal(rc)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(job.Paths.Receipt, out, 0o600))
			_, err = policy.DecodeReceipt(out)
			require.NoError(t, err, "the tampered receipt still decodes")

			h.report(job, events.ReportClaimed)
			h.report(job, events.ReportFinished)
			r, envs := h.waitFinal(run)
			require.Equal(t, machines.StateStopped, r.Lanes[0].State, dump(envs))
			fins := ofType(envs, events.TypeFinish)
			require.Len(t, fins, 1)
			fin := fins[0].Payload.(events.Finish)
			require.Contains(t, fin.Malformed, tc.reason, dump(envs))
			require.NotNil(t, fin.Receipt)
			require.Equal(t, policy.StatusComplete, fin.Receipt.Status, "the receipt is kept as the worker wrote it")
			require.Equal(t, policy.Event{AttemptIndex: 0, Status: policy.OutcomeFailed}, fin.Event)

			rep, err := h.eng.Report(context.Background(), run)
			require.NoError(t, err)
			a := rep.Lanes[0].Attempts[0]
			require.Equal(t, policy.StatusMalformedOutput, a.ReceiptStatus)
			require.Equal(t, policy.OutcomeFailed, a.Outcome)
			require.True(t, strings.HasPrefix(a.Cause, "malformed-output: the receipt claimed complete but the engine's re-check refused it: "), a.Cause)
			require.Contains(t, a.Cause, tc.reason)
			require.NotNil(t, a.Fidelity)
			require.Equal(t, engine.FidelityModelNone, a.Fidelity.Model, "a refused receipt proves no model")
			require.Contains(t, rep.Text(), "fidelity: model not verified")
			h.verifyReplay(run)
		})
	}
}

// TestUntamperedReceiptCompletesWithFidelity: the same runner receipt,
// untouched, passes the re-check; the report labels the attempt's
// fidelity: codex's model is pinned by argv only, its usage is reported,
// its containment is what the receipt records, and the harness's own loop
// is not traced.
func TestUntamperedReceiptCompletesWithFidelity(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	h.run()
	run, job := h.submitOneLane()
	h.finishWith(job, "success")
	r, envs := h.waitFinal(run)
	require.Equal(t, machines.StateComplete, r.Lanes[0].State, dump(envs))
	fin := ofType(envs, events.TypeFinish)[0].Payload.(events.Finish)
	require.Empty(t, fin.Malformed)

	rep, err := h.eng.Report(context.Background(), run)
	require.NoError(t, err)
	a := rep.Lanes[0].Attempts[0]
	require.NotNil(t, a.Fidelity)
	require.Equal(t, engine.FidelityModelPinned, a.Fidelity.Model)
	require.Equal(t, engine.FidelityUsageReported, a.Fidelity.Usage)
	require.NotEqual(t, engine.FidelityContainmentUnrecorded, a.Fidelity.Containment, "the runner records the containment")
	require.Contains(t, rep.Text(), "fidelity: model pinned by argv only (the provider reports none that verifies it); containment ")
	require.Contains(t, rep.Text(), "the harness's own reasoning and tool loop are not traced")
	h.verifyReplay(run)
}
