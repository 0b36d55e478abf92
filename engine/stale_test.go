package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// staleAudits are run's stale-sheet audits.
func staleAudits(t *testing.T, envs []events.Envelope) []events.Audit {
	var out []events.Audit
	for _, env := range ofType(envs, events.TypeAudit) {
		if a := env.Payload.(events.Audit); a.Reason == events.AuditStaleSheet {
			require.Equal(t, events.RunLane, env.Lane, "recorded on the run subject")
			out = append(out, a)
		}
	}
	return out
}

// TestStaleSheetReportedOncePerRun proves the seed's stale-sheet rule: a
// sheet with versioned Claude pins is reported stale once per run, as a
// run-level audit naming each pin and the alias it runs as, even when a
// second engine session resumes the run; the pin runs as its alias; and
// a sheet without pins records nothing.
func TestStaleSheetReportedOncePerRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, memory)
	stop := h.run()
	pinned := sheet("", "judgment and prose: claude:claude-opus-4-5@max", "bug-fix: claude:claude-sonnet-4-6@high")
	run := h.submit(pinned, "judgment and prose", policy.ReadOnly)
	r := h.waitLane(run, 0, machines.StateLaunching)
	require.Equal(t, "claude:opus@max", r.Lanes[0].Dispatch.Descriptor, "the pin runs as its family alias")
	stop()
	h.startEngine() // a second session resumes the run: no second report
	job, err := h.eng.NativeNext(ctx, policy.ParentClaude, true)
	require.NoError(t, err)
	require.Equal(t, "pstack-opus-max", job.Agent)
	notStarted := false
	require.NoError(t, h.eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeUsageExhausted, &notStarted, "envelope"))
	_, envs := h.waitFinal(run)
	audits := staleAudits(t, envs)
	require.Len(t, audits, 1, "once per run: %s", dump(envs))
	require.Contains(t, audits[0].Detail, "claude:claude-opus-4-5@max runs as claude:opus@max; claude:claude-sonnet-4-6@high runs as claude:sonnet@high")
	require.Contains(t, audits[0].Detail, "/setup-pstack will rewrite it after its normal probes and confirmation")
	h.verifyReplay(run)

	plain := h.submit(sheet("", "judgment and prose: claude:opus@max"), "judgment and prose", policy.ReadOnly)
	_, envs = h.waitRun(plain, "launch", func(r *machines.Run, _ []events.Envelope) bool { return r.Lanes[0].State == machines.StateLaunching })
	require.Empty(t, staleAudits(t, envs), "a sheet without versioned pins is not stale")
}
