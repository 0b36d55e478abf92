package engine_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestSubmitFreezesRunAndPublishesJobs proves, on a real JetStream, that a
// run freezes the sheet's exact bytes and the prompt, resolves one lane per
// seat, and that each first decision is recorded (with the digests of its
// inputs) before its job is published under the execution id, with private
// paths under the data directory.
func TestSubmitFreezesRunAndPublishesJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, jetstream)
	h.run()
	sh := sheet("", "arena runners: codex:gpt-5.6-sol@max -> cursor:composer-2.5@default, cursor:composer-2.5@default")
	run := h.submit(sh, "arena runners", policy.ReadOnly)
	envs := h.waitType(run, events.TypeLaunch, 2)

	created := envs[0].Payload.(events.RunCreated)
	require.Equal(t, events.TypeRunCreated, envs[0].Type)
	require.True(t, created.SheetEqual(sh), "sheet bytes frozen exactly")
	require.Equal(t, events.Digest(sh), created.SheetDigest)
	require.Len(t, created.Lanes, 2)
	require.Equal(t, h.repo, created.Cwd)
	prompt, err := os.ReadFile(created.PromptPath)
	require.NoError(t, err)
	require.Equal(t, created.PromptDigest, events.Digest(prompt))
	require.True(t, strings.HasPrefix(created.PromptPath, h.data), "frozen prompt lives under the data directory")

	for lane, provider := range []string{"codex", "cursor"} {
		launches := ofType(onLane(envs, lane), events.TypeLaunch)
		require.Len(t, launches, 1)
		l := launches[0].Payload.(events.Launch)
		want, err := events.InputDigest(created.Lanes[lane], policy.LaneState{Access: policy.ReadOnly})
		require.NoError(t, err)
		require.Equal(t, want, l.InputDigest, "decision records its input digest")
		require.Equal(t, created.SheetDigest, l.SheetDigest)
		require.Equal(t, events.JobSubject(provider), l.JobSubject)

		job := h.nextJob(events.JobSubject(provider))
		require.Equal(t, l.ExecutionID, job.ExecutionID, "job published under the recorded execution id")
		require.Equal(t, l.Paths, job.Paths)
		require.Equal(t, filepath.Join(h.data, "runs", run, events.LaneToken(lane), job.ExecutionID, "receipt.json"), job.Paths.Receipt)
		require.Equal(t, h.repo, job.Paths.Cwd, "read-only attempts run in the checkout")
		copied, err := os.ReadFile(job.Paths.Prompt)
		require.NoError(t, err)
		require.Equal(t, prompt, copied)
		require.NoFileExists(t, job.Paths.Receipt, "the runner creates the receipt itself")
	}
	st, err := h.eng.Status(context.Background(), run)
	require.NoError(t, err)
	require.Equal(t, engine.WaitWorker, st.Lanes[0].WaitingFor)
}

// TestSubmitRefusesBadRequests proves that policy errors come back as policy
// returns them and every other bad request is refused before anything is
// recorded.
func TestSubmitRefusesBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	good := sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default")
	notRepo := t.TempDir()
	existing := h.submit(good, "bug-fix", policy.ReadOnly)
	for _, tc := range []struct {
		name  string
		mut   func(*engine.RunRequest)
		check func(t *testing.T, err error)
	}{
		{"role missing from a policy-enabled sheet", func(r *engine.RunRequest) { r.Role = "hillclimb" },
			func(t *testing.T, err error) { require.True(t, policy.IsPolicy(err), "%v", err) }},
		{"malformed sheet", func(r *engine.RunRequest) { r.Sheet = []byte("bug-fix: nonsense@@\n# fallback: {\n") },
			func(t *testing.T, err error) { require.True(t, policy.IsPolicy(err), "%v", err) }},
		{"unknown parent", func(r *engine.RunRequest) { r.Parent = "gemini" },
			func(t *testing.T, err error) { require.Error(t, err) }},
		{"writer outside a git work tree", func(r *engine.RunRequest) { r.Mode, r.Cwd = policy.IsolatedWrite, notRepo },
			func(t *testing.T, err error) { require.ErrorIs(t, err, engine.ErrInvalidRequest) }},
		{"empty prompt", func(r *engine.RunRequest) { r.Prompt = []byte{} },
			func(t *testing.T, err error) { require.ErrorIs(t, err, engine.ErrInvalidRequest) }},
		{"existing run id", func(r *engine.RunRequest) { r.RunID = existing },
			func(t *testing.T, err error) { require.ErrorIs(t, err, engine.ErrRunExists) }},
		{"invalid run id", func(r *engine.RunRequest) { r.RunID = "a.b" },
			func(t *testing.T, err error) { require.ErrorIs(t, err, engine.ErrInvalidRequest) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := engine.RunRequest{Sheet: good, Role: "bug-fix", Parent: policy.ParentClaude,
				Prompt: []byte("task\n"), Cwd: h.repo}
			tc.mut(&req)
			_, err := h.eng.Submit(context.Background(), req)
			tc.check(t, err)
		})
	}
	runs, err := h.store.Runs(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{existing}, runs, "no refused request was recorded")
}

// TestSubmitExistingRunIDWritesNothing: a new run's Submit looks nothing
// up, so an id already in use is found by the frozen prompt (created
// exclusively) and by the recording (an append to an empty run only).
// Whatever the request, it ends as ErrRunExists with the run's log and
// prompt as they were, and after the run's files were pruned no stray
// prompt is left where the run's was.
func TestSubmitExistingRunIDWritesNothing(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{memory, jetstream} {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b)
			good := sheet("", "bug-fix: codex:gpt-5.6-sol@high -> cursor:composer-2.5@default")
			other := sheet("", "hillclimb: codex:gpt-5.6-sol@high")
			existing := h.submit(good, "bug-fix", policy.ReadOnly)
			ctx := context.Background()
			created := func() []events.Envelope {
				t.Helper()
				envs, err := h.store.Load(ctx, existing, events.RunLane)
				require.NoError(t, err)
				var out []events.Envelope
				for _, env := range envs {
					if env.Type == events.TypeRunCreated {
						out = append(out, env)
					}
				}
				return out
			}
			before := created()
			require.Len(t, before, 1)
			promptPath := filepath.Join(h.data, "runs", existing, "prompt")
			prompt, err := os.ReadFile(promptPath)
			require.NoError(t, err)

			same := engine.RunRequest{RunID: existing, Sheet: good, Role: "bug-fix", Parent: policy.ParentClaude,
				Prompt: prompt, Cwd: h.repo, Timeout: time.Minute}
			otherPrompt, otherSheet := same, same
			otherPrompt.Prompt = []byte("another task\n")
			otherSheet.Sheet, otherSheet.Role = other, "hillclimb"
			check := func(what string, req engine.RunRequest) {
				t.Helper()
				_, err := h.eng.Submit(ctx, req)
				require.ErrorIs(t, err, engine.ErrRunExists, what)
				require.Equal(t, before, created(), "%s: no other run-created", what)
			}
			check("the same request again", same)
			check("another prompt", otherPrompt)
			check("another sheet and role, the same prompt", otherSheet)
			got, err := os.ReadFile(promptPath)
			require.NoError(t, err)
			require.Equal(t, prompt, got, "the run's frozen prompt is unchanged")

			// Pruned: the run's files are gone, its log stays.
			require.NoError(t, os.RemoveAll(filepath.Dir(promptPath)))
			check("another prompt after the prune", otherPrompt)
			_, err = os.Stat(filepath.Dir(promptPath))
			require.ErrorIs(t, err, fs.ErrNotExist, "no stray prompt (nor its directory) is left for the pruned run")
			check("its own prompt after the prune", otherSheet)
			got, err = os.ReadFile(promptPath)
			require.NoError(t, err, "its own prompt may stand where it stood")
			require.Equal(t, prompt, got)
		})
	}
}
