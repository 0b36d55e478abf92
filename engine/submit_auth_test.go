package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestSubmitThroughEngine: a parent, whose connection may not write the
// events stream, submits runs through the engine; the engine records a
// genuine run-created (and a retried one once), and refuses a forged one
// whose prompt is not the run's frozen copy or whose lanes are not its
// sheet's, and a second, different run-created for a run that exists.
func TestSubmitThroughEngine(t *testing.T) {
	t.Parallel()
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	srv := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	js := eventstest.Open(t, srv, events.JetStreamConfig{})
	data, repo := t.TempDir(), gitRepo(t)
	eng, err := engine.New(engine.Config{Store: js.Store(), Queue: js.Queue(), Claims: js.Claims(), Capacity: js.Capacity(), DataDir: data})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stop, err := js.ServeSubmissions(ctx, eng.AcceptSubmission)
	require.NoError(t, err)
	t.Cleanup(stop)

	nc, err := events.Connect([]string{srv.ClientURL()}, append(creds.ClientOptions(events.RoleParent), nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	pjs, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)
	parent, err := engine.New(engine.Config{Store: pjs.Store(), Queue: pjs.Queue(), Claims: pjs.Claims(), Capacity: pjs.Capacity(),
		DataDir: data, SubmitVia: pjs.Submit})
	require.NoError(t, err)

	sh := sheet("", "arena runners: codex:gpt-5.6-sol@max")
	req := engine.RunRequest{Sheet: sh, Role: "arena runners", Parent: policy.ParentClaude, Mode: policy.ReadOnly,
		Prompt: []byte("Summarize README.md.\n"), Cwd: repo}
	run, err := parent.Submit(ctx, req)
	require.NoError(t, err, "a parent submits through the engine")
	envs, err := js.Store().Load(ctx, run, events.RunLane)
	require.NoError(t, err)
	require.Len(t, envs, 1)
	created := envs[0]
	require.Equal(t, events.TypeRunCreated, created.Type)

	// The parent cannot append it itself.
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	fresh := created
	fresh.Run, fresh.Seq = eventstest.NewRunID(), 0
	_, err = pjs.Store().Append(short, fresh, 0)
	require.True(t, events.IsPermissionDenied(err), "a parent appending an event: %v", err)

	// A retried submission of the same event is a success, recorded once.
	created.Seq = 0
	require.NoError(t, pjs.Submit(ctx, created))
	envs, err = js.Store().Load(ctx, run, events.RunLane)
	require.NoError(t, err)
	require.Len(t, envs, 1)

	// A different run-created for the same run exists already.
	other := created
	c := other.Payload.(events.RunCreated)
	c.Cwd = "/elsewhere"
	other.Payload = c
	require.ErrorIs(t, pjs.Submit(ctx, other), events.ErrRunExists)

	// Forged: each starts as a copy of the genuine event for a new run,
	// its prompt at that run's frozen path (named as the genuine run's
	// frozen prompt is, so every check after the path's is reached).
	genuine := created.Payload.(events.RunCreated)
	frozenName := filepath.Base(genuine.PromptPath)
	require.Equal(t, filepath.Join(data, "runs", run, frozenName), genuine.PromptPath, "the frozen prompt is the run directory's")
	forge := func(edit func(*events.RunCreated)) events.Envelope {
		env := created
		env.Run = eventstest.NewRunID()
		c := env.Payload.(events.RunCreated)
		c.PromptPath = filepath.Join(data, "runs", env.Run, frozenName)
		edit(&c)
		env.Payload = c
		return env
	}
	err = pjs.Submit(ctx, forge(func(c *events.RunCreated) { c.PromptPath = "/etc/passwd" }))
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "not the run's frozen prompt")
	err = pjs.Submit(ctx, forge(func(c *events.RunCreated) { c.PromptPath = filepath.Join(filepath.Dir(c.PromptPath), "prompt.md") }))
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "not the run's frozen prompt", "a file beside the frozen prompt is not it")
	err = pjs.Submit(ctx, forge(func(c *events.RunCreated) { c.Lanes = append(c.Lanes, c.Lanes[0]) }))
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "not its sheet's resolution")

	// At the frozen path: refused while the file is missing or holds other
	// bytes than the recorded digest names; the same event is recorded
	// once the file holds the prompt the digest is of.
	atPath := forge(func(*events.RunCreated) {})
	err = pjs.Submit(ctx, atPath)
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "read the frozen prompt")
	prompt := atPath.Payload.(events.RunCreated).PromptPath
	require.NoError(t, os.MkdirAll(filepath.Dir(prompt), 0o700))
	require.NoError(t, os.WriteFile(prompt, []byte("A task the run never recorded.\n"), 0o600))
	err = pjs.Submit(ctx, atPath)
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorContains(t, err, "the frozen prompt does not match the recorded digest")
	_, err = js.Store().Last(ctx, atPath.Run, events.RunLane)
	require.ErrorIs(t, err, events.ErrNotFound, "a refused submission records nothing")
	require.NoError(t, os.WriteFile(prompt, req.Prompt, 0o600))
	require.NoError(t, pjs.Submit(ctx, atPath), "the same event with the prompt its digest names")
	envs, err = js.Store().Load(ctx, atPath.Run, events.RunLane)
	require.NoError(t, err)
	require.Len(t, envs, 1)
}
