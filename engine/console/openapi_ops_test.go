package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/engine/console"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// opsSheet: one claude seat whose handoff may continue on the same route
// (so an answered operation waits for the parent's recovery).
const opsSheet = `# console API operation test sheet
# access: {"provider":"claude","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["handoff"]}
judgment and prose: claude:sonnet@low
`

// TestOpenAPIOperationAndRecover drives the lane answers that need a real
// attempt, over HTTP and validated against the document: an engine and a
// worker on the simulated claude (which hands off a README.md commit
// checkpoint twice) run two runs on a real git checkout. Run one: validate
// (200 with the digest), begin (200 with the pending step, recorded),
// the parent's commit, done (202), and the lane then waits for the
// recovery, which is declined (202). Run two: validate, begin, reject
// (202). Each answer is checked against the log too.
func TestOpenAPIOperationAndRecover(t *testing.T) {
	ctx := context.Background()
	emb := eventstest.StartServer(t)
	js := eventstest.Open(t, emb, events.JetStreamConfig{})
	store := js.Store()
	capacity := js.Capacity()
	spec, err := providers.Lookup(policy.Claude)
	require.NoError(t, err)
	used, minutes := 12.0, 300
	require.NoError(t, capacity.Put(ctx, policy.CapacityReport{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Claude,
		Snapshot: policy.CapacitySnapshot{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Claude, Source: spec.QuotaSource,
			State: policy.CapacityMeasured, Windows: []policy.CapacityWindow{{Name: "5h", UsedPercent: &used, WindowMinutes: &minutes}}, AcquiredAt: time.Now()}}))
	data := t.TempDir()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	eng, err := engine.New(engine.Config{Store: store, Queue: js.Queue(), Claims: js.Claims(), Capacity: capacity, DataDir: data, Logger: logger})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	wg.Go(func() { _ = eng.Run(runCtx) })

	bin := simenv.Install(t, "", simenv.Config{HangCapSeconds: 60, Providers: map[string]simenv.ProviderConfig{
		"claude": {Queue: []string{"handoff", "handoff"}, Scenario: "success"}}})
	home := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	w, err := activities.NewWorker(activities.WorkerConfig{Queue: js.Queue(), Claims: js.Claims(), Store: store, Providers: []policy.Provider{policy.Claude},
		LeaseTTL: 3 * time.Second, AckWait: 5 * time.Second, ShutdownGrace: 5 * time.Second,
		Env:          map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"},
		Logger:       logger.With("component", "worker"),
		RunnerConfig: func(events.Job) runner.Config { return runner.Config{KillGrace: 500 * time.Millisecond} }})
	require.NoError(t, err)
	wg.Go(func() { _ = w.Run(runCtx) })

	srv, err := console.New(console.Options{Engine: eng, Store: store, DataDir: data, Token: apiToken})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	doc, router := openAPIDoc(t, hs.URL)
	c := newContract(t, doc, router, hs.URL)

	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=p@example.com", "-c", "user.name=parent", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("# fixture\n"), 0o644))
	git("init", "-q")
	git("add", "README.md")
	git("commit", "-q", "-m", "init")

	status := func(run string) engine.RunStatus {
		st, err := eng.Status(ctx, run)
		require.NoError(t, err)
		return st
	}
	waitLane := func(run string, cond func(engine.LaneStatus) bool, what string) {
		t.Helper()
		require.Eventually(t, func() bool { return cond(status(run).Lanes[0]) }, waitTimeout, 20*time.Millisecond, "run %s lane 0: %s", run, what)
	}
	submit := func(id string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"runId": id, "sheet": opsSheet, "role": "judgment and prose", "parent": "claude",
			"prompt": "Summarize README.md in one sentence.\n", "cwd": repo, "timeout": "1m"})
		c.check(t, apiCase{name: "submit", method: "POST", path: "/api/v1/runs", body: string(b), status: 201})
		waitLane(id, func(l engine.LaneStatus) bool { return l.State == machines.StateAwaitingOperation }, "awaiting the operation")
	}
	// validateAndBegin is the parent's first two steps for the worker's
	// README.md edit (the handoff names it); it returns the digest.
	validateAndBegin := func(run, text string) string {
		t.Helper()
		head := git("rev-parse", "HEAD")
		require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte(text), 0o644))
		base := "/api/v1/runs/" + run + "/lanes/0/operation/"
		// Before validate, begin has nothing to begin: refused.
		c.check(t, apiCase{method: "POST", path: base + "begin", body: `{"digest":"` + strings.Repeat("0", 64) + `"}`, status: 409, code: "refused"})
		var v struct{ Digest, Head string }
		body := c.check(t, apiCase{method: "POST", path: base + "validate", body: `{"expectedHead":"` + head + `","files":["README.md"]}`, status: 200})
		require.NoError(t, json.Unmarshal(body, &v))
		require.Equal(t, head, v.Head)
		waitLane(run, func(l engine.LaneStatus) bool { return l.Validated != nil && l.Validated.Digest == v.Digest }, "validated")
		var step struct{ Step, Digest string }
		body = c.check(t, apiCase{method: "POST", path: base + "begin", body: `{"digest":"` + v.Digest + `","wait":"30s"}`, status: 200})
		require.NoError(t, json.Unmarshal(body, &step))
		require.Equal(t, "begun", step.Step)
		require.Equal(t, v.Digest, step.Digest)
		require.NotNil(t, status(run).Lanes[0].Pending, "the begin is recorded before the 200")
		// Begun once: a second begin is operation_pending.
		c.check(t, apiCase{method: "POST", path: base + "begin", body: `{"digest":"` + v.Digest + `"}`, status: 409, code: "operation_pending"})
		return v.Digest
	}

	// Run one: validate, begin, commit, done; then the recovery.
	submit("ops-1")
	validateAndBegin("ops-1", "# fixture, edited by the worker\n")
	git("add", "--", "README.md")
	git("commit", "-q", "-m", "checkpoint C-1")
	commit := git("rev-parse", "HEAD")
	c.check(t, apiCase{method: "POST", path: "/api/v1/runs/ops-1/lanes/0/operation/done", body: `{"result":"succeeded","ref":"` + commit + `"}`, status: 202})
	waitLane("ops-1", func(l engine.LaneStatus) bool { return l.WaitingFor == engine.WaitRecovery }, "waiting for the recovery")
	c.check(t, apiCase{method: "POST", path: "/api/v1/runs/ops-1/lanes/0/recover", body: `{"clear":true,"evidenceRef":"review.md","correction":"c","blockageId":"b",` +
		`"snapshotRef":"c0ffee","snapshotDigest":"short","partialWorkRef":"p","sideEffectsRef":"s","stoppedWritersRef":"w"}`, status: 400, code: "invalid_input", invalidRequest: true})
	c.check(t, apiCase{method: "POST", path: "/api/v1/runs/ops-1/lanes/0/recover", body: `{"clear":false,"evidenceRef":"review/lane0.md"}`, status: 202})
	waitLane("ops-1", func(l engine.LaneStatus) bool { return l.State.Final() }, "final after the declined recovery")
	c.check(t, apiCase{method: "POST", path: "/api/v1/runs/ops-1/lanes/0/recover", body: `{"clear":false,"evidenceRef":"again"}`, status: 409, code: "final"})

	// Run two: validate, begin, reject.
	submit("ops-2")
	validateAndBegin("ops-2", "# fixture, edited by the worker again\n")
	c.check(t, apiCase{method: "POST", path: "/api/v1/runs/ops-2/lanes/0/operation/reject", body: `{"detail":"the change is not wanted"}`, status: 202})
	waitLane("ops-2", func(l engine.LaneStatus) bool { return l.State != machines.StateAwaitingOperation }, "the rejection recorded")
	envs, err := store.Load(ctx, "ops-2", 0)
	require.NoError(t, err)
	var rejected bool
	for _, env := range envs {
		if d, ok := env.Payload.(events.OperationDone); ok {
			rejected = d.Ledger == events.LedgerRejected
		}
	}
	require.True(t, rejected, "the log records the rejection")

	for op := range uncoveredSuccess {
		require.True(t, c.success[op], "this test drives %s to a success", op)
	}
	require.Len(t, uncoveredSuccess, len(c.success)-1, fmt.Sprint(c.success)) // and the submission
}
