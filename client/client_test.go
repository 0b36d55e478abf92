package client_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/client"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestDialRefusals: what Dial says, by kind, when it cannot connect: a
// data directory with no Switchyard data is ErrNotFound (and nothing is
// created there); options that do not go together name the field.
func TestDialRefusals(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	empty := t.TempDir()
	_, err := client.Dial(ctx, client.Options{DataDir: empty})
	require.ErrorIs(t, err, client.ErrNotFound)
	entries, rerr := os.ReadDir(empty)
	require.NoError(t, rerr)
	require.Empty(t, entries, "Dial created nothing in the directory")

	missing := filepath.Join(empty, "nope")
	_, err = client.Dial(ctx, client.Options{DataDir: missing})
	require.ErrorIs(t, err, client.ErrNotFound)
	require.NoDirExists(t, missing)

	var ie *client.InvalidInputError
	_, err = client.Dial(ctx, client.Options{DataDir: empty, CredsFile: "/x.creds"})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "CredsFile", ie.Field)
	_, err = client.Dial(ctx, client.Options{DataDir: empty, Role: events.RoleEngine})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "Role", ie.Field)
}

// TestDialStoreWithoutServe: a data directory that holds a store but that
// nothing serves is ErrUnavailable: the client never starts a server of
// its own.
func TestDialStoreWithoutServe(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "jetstream"), 0o700))
	_, err := client.Dial(ctx, client.Options{DataDir: dir})
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.NoFileExists(t, filepath.Join(dir, "serve.json"), "no server was started")
}

// TestSubmitIdempotentWatchCancel: a run submitted through a serve found by
// its data directory; the same request under the same id is the same run,
// another request under it is ErrExists; Watch yields the lanes' changes
// until the run is final (cancelled here: no worker runs), Wait and Report
// agree, List and Replay see it.
func TestSubmitIdempotentWatchCancel(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := startServe(t)
	c, err := client.Dial(ctx, client.Options{DataDir: s.dir})
	require.NoError(t, err)
	defer c.Close()
	require.Contains(t, c.Describe(), s.dir)

	checkout := t.TempDir()
	req := client.RunRequest{RunID: "panel-1", Sheet: []byte(panelSheet), Role: "interrogate reviewers", Parent: "claude",
		Prompt: []byte("Review the change.\n"), Checkout: checkout,
		// No worker puts a capacity report: accept codex's unknown quota,
		// so the lanes wait for a launch instead of stopping.
		AllowUnknownQuota: []string{"codex"}}
	run, err := c.Submit(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "panel-1", run.ID())

	again, err := c.Submit(ctx, req)
	require.NoError(t, err, "the same request under the same id is the existing run")
	require.Equal(t, "panel-1", again.ID())

	other := req
	other.Prompt = []byte("Something else.\n")
	_, err = c.Submit(ctx, other)
	require.ErrorIs(t, err, client.ErrExists)
	require.ErrorIs(t, err, engine.ErrRunExists, "the engine's sentinel still matches")
	require.Contains(t, err.Error(), "prompt")

	st, err := run.Status(ctx)
	require.NoError(t, err)
	require.False(t, st.Final)
	require.Len(t, st.Lanes, 2)

	_, err = run.FinalReport(ctx)
	require.ErrorIs(t, err, client.ErrNotFinal)

	// Watch from the start; cancel the run once the watch has seen both
	// lanes created.
	seen := map[int]machines.State{}
	cancelled := false
	for ch, err := range run.Watch(ctx) {
		require.NoError(t, err)
		require.Equal(t, "panel-1", ch.Run)
		seen[ch.Lane] = ch.To
		if !cancelled && len(seen) == 2 {
			require.NoError(t, run.Cancel(ctx, client.AllLanes))
			cancelled = true
		}
	}
	require.True(t, cancelled)
	for lane, state := range seen {
		require.Equal(t, machines.StateCancelled, state, "lane %d ends cancelled", lane)
	}

	rep, err := run.Wait(ctx)
	require.NoError(t, err)
	require.True(t, rep.Final)
	require.True(t, rep.Cancelled)
	fin, err := run.FinalReport(ctx)
	require.NoError(t, err)
	require.Equal(t, rep.Summary, fin.Summary)

	err = run.Cancel(ctx, 0)
	require.ErrorIs(t, err, client.ErrFinal, "a final lane takes no input")

	list, err := c.List(ctx, client.ListFilter{Final: true})
	require.NoError(t, err)
	require.Len(t, list.Runs, 1)
	require.Equal(t, "panel-1", list.Runs[0].Run)
	list, err = c.List(ctx, client.ListFilter{Open: true})
	require.NoError(t, err)
	require.Empty(t, list.Runs)

	res, err := c.Replay(ctx, "panel-1", true)
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.Greater(t, res.Events, 2)
}

// TestTypedErrors: each refusal has its kind and names its field.
func TestTypedErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := startServe(t)
	c, err := client.Dial(ctx, client.Options{DataDir: s.dir})
	require.NoError(t, err)
	defer c.Close()
	good := client.RunRequest{Sheet: []byte(panelSheet), Role: "arena runners", Parent: "claude",
		Prompt: []byte("p\n"), Checkout: t.TempDir()}
	for _, tc := range []struct {
		field string
		edit  func(*client.RunRequest)
	}{
		{"Sheet", func(r *client.RunRequest) { r.Sheet = nil }},
		{"Sheet", func(r *client.RunRequest) { r.Sheet = []byte("this is: not a sheet -> at all\n") }},
		{"Role", func(r *client.RunRequest) { r.Role = "no such role" }},
		{"Parent", func(r *client.RunRequest) { r.Parent = "emacs" }},
		{"Prompt", func(r *client.RunRequest) { r.Prompt = nil }},
		{"Checkout", func(r *client.RunRequest) { r.Checkout = "" }},
		{"RunID", func(r *client.RunRequest) { r.RunID = "bad id/with slash" }},
		{"Mode", func(r *client.RunRequest) { r.Mode = "yolo" }},
	} {
		r := good
		tc.edit(&r)
		_, err := c.Submit(ctx, r)
		var ie *client.InvalidInputError
		require.ErrorAs(t, err, &ie, tc.field)
		require.Equal(t, tc.field, ie.Field, "%v", err)
	}
	var pe *policy.PolicyError
	bad := good
	bad.Role = "no such role"
	_, err = c.Submit(ctx, bad)
	require.ErrorAs(t, err, &pe, "the policy's own error is kept")

	_, err = c.Run("no-such-run").Status(ctx)
	require.ErrorIs(t, err, client.ErrNotFound)
	require.ErrorIs(t, err, engine.ErrUnknownRun)
	_, err = c.Run("no-such-run").Wait(ctx)
	require.ErrorIs(t, err, client.ErrNotFound)
	for _, err := range c.Run("no-such-run").Watch(ctx) {
		require.ErrorIs(t, err, client.ErrNotFound)
	}

	run, err := c.Submit(ctx, good)
	require.NoError(t, err)
	err = run.Verdict(ctx, 0, client.Verdict{State: client.VerdictClear, EvidenceRef: "notes"})
	require.ErrorIs(t, err, client.ErrNotWaiting, "a lane waiting for launch takes no verdict")
	var le *engine.LaneError
	require.ErrorAs(t, err, &le)
	err = run.Verdict(ctx, 5, client.Verdict{State: client.VerdictClear, EvidenceRef: "notes"})
	require.ErrorIs(t, err, client.ErrNotFound, "no lane 5")
	var ie *client.InvalidInputError
	err = run.Verdict(ctx, 0, client.Verdict{State: "maybe", EvidenceRef: "notes"})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "State", ie.Field)
	err = run.Verdict(ctx, 0, client.Verdict{State: client.VerdictUnsafe, EvidenceRef: "notes", ReviewedRef: "HEAD"})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "ReviewedRef", ie.Field)
	require.ErrorAs(t, run.Cancel(ctx, -7), &ie)
	require.Equal(t, "Lane", ie.Field)
	require.NoError(t, run.Cancel(ctx, client.AllLanes))
	_, err = run.Wait(ctx)
	require.NoError(t, err)
}

// TestReaderRoleCannotSubmit: a reader's login is refused a submission by
// the serve's server (roles are enforced there), as ErrPermissionDenied.
func TestReaderRoleCannotSubmit(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := startServe(t)
	c, err := client.Dial(ctx, client.Options{DataDir: s.dir, Role: client.RoleReader})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Submit(ctx, client.RunRequest{Sheet: []byte(panelSheet), Role: "arena runners", Parent: "claude",
		Prompt: []byte("p\n"), Checkout: t.TempDir()})
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	list, err := c.List(ctx, client.ListFilter{})
	require.NoError(t, err, "a reader lists runs")
	require.Empty(t, list.Runs)
}

// TestWorkersAndUsage: Workers lists the live presence records (a worker's
// announcement, here made on the serve's own connection), Usage the
// capacity reports (none yet).
func TestWorkersAndUsage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := startServe(t)
	c, err := client.Dial(ctx, client.Options{DataDir: s.dir, Role: client.RoleReader})
	require.NoError(t, err)
	defer c.Close()
	ws, err := c.Workers(ctx)
	require.NoError(t, err)
	require.Empty(t, ws)
	started := time.Now().UTC().Truncate(time.Second)
	require.NoError(t, s.conn.JetStream().Presence().Announce(ctx, events.WorkerPresence{
		WorkerID: "w-test-1", Providers: []policy.Provider{policy.Codex}, Concurrency: 4, Host: "h", PID: 42, Started: started}))
	ws, err = c.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, "w-test-1", ws[0].WorkerID)
	require.Equal(t, []policy.Provider{policy.Codex}, ws[0].Providers)
	require.Equal(t, 4, ws[0].Concurrency)
	require.False(t, ws[0].Seen.IsZero())

	reps, err := c.Usage(ctx)
	require.NoError(t, err)
	require.Empty(t, reps)
}

// TestClientFollowsAMovedServe: a client dialed through the data directory
// keeps working when its serve is stopped and another starts on another
// port: every (re)connect reads serve.json again.
func TestClientFollowsAMovedServe(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	first := startServeIn(t, dir)
	c, err := client.Dial(ctx, client.Options{DataDir: dir})
	require.NoError(t, err)
	defer c.Close()
	before := c.Describe()
	info, err := engineconn.ReadServeInfo(dir)
	require.NoError(t, err)
	u, err := url.Parse(info.URL)
	require.NoError(t, err)
	first.stop()
	// Hold the old port, so the new serve must move.
	hold, err := net.Listen("tcp", u.Host)
	require.NoError(t, err)
	startServeIn(t, dir)
	require.NoError(t, hold.Close())
	var list client.RunList
	require.Eventually(t, func() bool {
		var err error
		list, err = c.List(ctx, client.ListFilter{})
		return err == nil
	}, 60*time.Second, 100*time.Millisecond, "the client reconnects to the new serve")
	require.Empty(t, list.Runs)
	require.NotEqual(t, before, c.Describe(), "it names the new serve")
	_, err = c.Submit(ctx, client.RunRequest{Sheet: []byte(panelSheet), Role: "arena runners", Parent: "claude",
		Prompt: []byte("p\n"), Checkout: t.TempDir()})
	require.NoError(t, err)
}
