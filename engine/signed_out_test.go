package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestUnsupportedProviderSignedOutIsExcluded (issue 26, provider
// contract): an UNSUPPORTED-quota provider is eligible only when the auth
// and health gates pass. Lane 0's cursor attempt ends unauthenticated at
// its preflight (the simulated `cursor-agent status` says signed out,
// nothing started); lane 1's codex attempt then fails its own preflight,
// and its fallback to cursor is excluded before launch as not_signed_in,
// from the run's own evidence, instead of launching a CLI the run already
// proved signed out. Replay recomputes the exclusion.
func TestUnsupportedProviderSignedOutIsExcluded(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{memory, jetstream} {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b)
			h.run()
			run := h.submit(sheet(`# fallback: {"on":["route-unavailable"]}`,
				"arena runners: cursor:composer-2.5@default, codex:gpt-5.6-sol@high -> cursor:composer-2.5@default"),
				"arena runners", policy.ReadOnly)
			cursorJob := h.nextJob(events.JobSubject("cursor"))
			require.Equal(t, 0, cursorJob.Lane)
			h.finishWith(cursorJob, "unauthenticated")
			r := h.waitLane(run, 0, machines.StateStopped)
			require.Equal(t, []policy.Provider{policy.Cursor}, r.SignedOut, "the preflight's sign-out is the run's evidence")

			codexJob := h.nextJob(events.JobSubject("codex"))
			require.Equal(t, 1, codexJob.Lane)
			h.finishWith(codexJob, "unauthenticated")
			_, envs := h.waitFinal(run)
			xs := excludes(onLane(envs, 1))
			require.Len(t, xs, 1, dump(envs))
			require.Equal(t, policy.ExcludeNotSignedIn, xs[0].Verdict.Code)
			require.Equal(t, policy.EvidenceOpaque, xs[0].Verdict.Capacity)
			require.Contains(t, xs[0].Verdict.Detail, "signed out before it started")
			require.Equal(t, 1, xs[0].AttemptIndex)
			h.noJob(run, events.JobSubject("cursor"))
			h.verifyReplay(run)
		})
	}
}
