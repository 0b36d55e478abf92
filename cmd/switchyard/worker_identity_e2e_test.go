package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// identitySheet has a grok role and a codex role, one lane each.
const identitySheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
hillclimb: grok:grok-4.7@xhigh
bug-fix: codex:gpt-5.6-sol@high
`

// provisionWorker runs `switchyard worker identity --json` for providers
// and returns what it printed.
func (s *engineSandbox) provisionWorker(t *testing.T, providers string, extra ...string) workerIdentityResult {
	t.Helper()
	r := s.run(t, 30*time.Second, append([]string{"worker", "identity", "--data-dir", s.data, "--provider", providers, "--json"}, extra...)...)
	require.Equal(t, 0, r.code, "worker identity: %s", r.stderr)
	requireJSONDoc(t, "worker identity --json", r.stdout)
	var res workerIdentityResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	st, err := os.Stat(res.SeedFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the seed is the worker's alone")
	seed, err := os.ReadFile(res.SeedFile)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(seed), "SU"), "a user nkey seed")
	require.NotContains(t, r.stdout+r.stderr, strings.TrimSpace(string(seed)), "the seed is never printed")
	return res
}

// identityClient connects the test to the serve at url as the worker
// whose seed is at seed, as `worker --identity-seed` does.
func identityClient(t *testing.T, url, dataDir, seed string) (*nats.Conn, error) {
	t.Helper()
	opts, err := events.WorkerIdentityOptions(filepath.Join(dataDir, authFileName), seed)
	require.NoError(t, err)
	nc, err := events.Connect([]string{url}, append(opts, nats.MaxReconnects(0))...)
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

// claimOf waits for the claim event of run's lane 0 and returns its
// worker id.
func claimOf(t *testing.T, reader *events.JetStream, run string) string {
	t.Helper()
	var worker string
	require.NoError(t, waitFor(90*time.Second, "the claim of run "+run, func() (bool, error) {
		envs, err := reader.Store().Load(context.Background(), run, 0)
		if err != nil {
			return false, nil
		}
		for _, env := range envs {
			if c, ok := env.Payload.(events.Claim); ok {
				worker = c.WorkerID
				return true, nil
			}
			if c, ok := env.Payload.(*events.Claim); ok {
				worker = c.WorkerID
				return true, nil
			}
		}
		return false, nil
	}))
	return worker
}

// presenceID is the worker id the live worker of pid announced.
func (s *engineSandbox) presenceID(t *testing.T, pid int) string {
	t.Helper()
	var id string
	require.NoError(t, waitFor(30*time.Second, "the worker's presence", func() (bool, error) {
		r := s.run(t, 30*time.Second, "workers", "--data-dir", s.data, "--json")
		if r.code != 0 {
			return false, nil
		}
		var live []events.WorkerPresence
		if err := json.Unmarshal([]byte(r.stdout), &live); err != nil {
			return false, err
		}
		for _, w := range live {
			if w.PID == pid {
				id = w.WorkerID
				return true, nil
			}
		}
		return false, nil
	}))
	return id
}

// TestWorkerIdentitiesEndToEnd (issue 25, class 4) provisions two worker
// identities with `switchyard worker identity` (grok; codex), serves the
// data directory (which reads its workers.json) and plays each case with
// real processes:
//
//   - a provisioned grok worker runs a grok lane to completion, and the
//     run's claim names it;
//   - as the grok identity, the test cannot put codex's capacity report
//     or pull codex's job: the serve refuses both, naming the identity's
//     providers; the codex lane stays queued while the grok worker runs,
//     `worker --provider codex` with the grok seed does not start, and
//     the codex lane is then run by the codex worker, not the grok one;
//   - a connection with an unlisted key, and a worker without a seed,
//     are refused; a reader still reads.
func TestWorkerIdentitiesEndToEnd(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, identitySheet)
	grok := s.provisionWorker(t, "grok")
	codex := s.provisionWorker(t, "codex", "--seed-file", filepath.Join(s.dir, "codex.seed"))
	require.Equal(t, filepath.Join(s.data, "workers.json"), grok.WorkerIdentities)
	require.Equal(t, filepath.Join(s.data, "worker-grok.seed"), grok.SeedFile)
	require.Equal(t, 2, codex.Workers)

	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info := waitServeInfo(t, s.data, serve)
	waitOutput(t, serve, "switchyard serve: 2 worker identities from "+grok.WorkerIdentities+": each worker serves only its listed providers; other worker connections are refused\n")
	reader := roleClient(t, info.URL, s.data, events.RoleReader)
	// No engine-role JetStream here: it would answer the proxy's
	// requests beside the serve's engine, without the serve's list.
	ctx := context.Background()

	// (a) The grok identity's worker runs the grok lane to completion.
	gw := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok", "--identity-seed", grok.SeedFile)
	waitOutput(t, gw, "switchyard worker: worker identity "+grok.Key+" (seed "+grok.SeedFile+")")
	gwID := s.presenceID(t, gw.cmd.Process.Pid)
	r := s.run(t, 120*time.Second, s.runArgs("hillclimb", "--run-id", "ida")...)
	require.Equal(t, 0, r.code, "the grok lane: %s\n%s", r.stdout, r.stderr)
	require.Equal(t, gwID, claimOf(t, reader, "ida"), "the provisioned grok worker ran the grok lane")

	// (b) The codex lane waits in the queue: the grok worker does not
	// take it, and the grok identity may neither pull it nor put
	// codex's capacity report.
	codexRun := s.start(t, append(s.runArgs("bug-fix", "--run-id", "idb"), "--allow-unknown-quota", "codex")...)
	raw, err := jetstream.New(engineJSConn(t, info.URL, s.data))
	require.NoError(t, err)
	require.NoError(t, waitFor(60*time.Second, "the codex job in the queue", func() (bool, error) {
		c, err := raw.Consumer(ctx, events.JobsStream, "jobs_codex")
		if err != nil {
			return false, nil
		}
		return c.CachedInfo().NumPending == 1, nil
	}))
	nc, err := identityClient(t, info.URL, s.data, grok.SeedFile)
	require.NoError(t, err, "the grok identity connects")
	asGrok, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 1})
	require.NoError(t, err)
	err = asGrok.Capacity().Put(ctx, eventstest.SampleCapacityReport(policy.Codex, time.Now().UTC()))
	require.True(t, events.IsPermissionDenied(err), "the grok identity putting codex's capacity: %v", err)
	require.ErrorContains(t, err, "serves only [grok]")
	proxied, err := jetstream.NewWithAPIPrefix(nc, events.APIProxyPrefix+events.ConnInboxPrefix(events.RoleWorker, grok.Key), jetstream.WithDefaultTimeout(5*time.Second))
	require.NoError(t, err)
	codexJobs, err := proxied.Consumer(ctx, events.JobsStream, "jobs_codex")
	require.NoError(t, err, "consumer info is a read")
	_, err = codexJobs.Next(jetstream.FetchMaxWait(2 * time.Second))
	require.ErrorContains(t, err, "serves only [grok]", "the grok identity pulling codex's job")
	// The worker command itself refuses to serve codex with the grok seed.
	r = s.run(t, 60*time.Second, "worker", "--data-dir", s.data, "--provider", "codex", "--identity-seed", grok.SeedFile)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "serves only grok ("+grok.WorkerIdentities+")")
	// Nothing changed: the job is still queued and unheld, codex has no
	// capacity report, the lane has no claim.
	c, err := raw.Consumer(ctx, events.JobsStream, "jobs_codex")
	require.NoError(t, err)
	require.EqualValues(t, 1, c.CachedInfo().NumPending, "the codex job is still queued")
	require.Zero(t, c.CachedInfo().NumAckPending, "and nobody holds it")
	_, err = reader.Capacity().Get(ctx, policy.Codex)
	require.ErrorIs(t, err, events.ErrNoCapacityReport)
	envs, err := reader.Store().Load(ctx, "idb", 0)
	require.NoError(t, err)
	for _, env := range envs {
		require.NotEqual(t, events.TypeClaim, env.Type, "nobody claimed the codex lane")
	}
	// The codex identity's worker runs it.
	cw := s.start(t, "worker", "--data-dir", s.data, "--provider", "codex", "--identity-seed", codex.SeedFile)
	waitOutput(t, cw, "switchyard worker: worker identity "+codex.Key)
	cwID := s.presenceID(t, cw.cmd.Process.Pid)
	select {
	case <-codexRun.done:
	case <-time.After(120 * time.Second):
		out, errOut := codexRun.output()
		t.Fatalf("the codex run did not finish\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	require.Equal(t, 0, codexRun.stop(t), "the codex run")
	require.Equal(t, cwID, claimOf(t, reader, "idb"), "the codex worker ran the codex lane")
	require.NotEqual(t, gwID, cwID)

	// (c) A key the file does not list is refused at the door; so is a
	// worker without a seed, told what to pass. A reader still reads.
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	seed, err := kp.Seed()
	require.NoError(t, err)
	stranger := filepath.Join(s.dir, "stranger.seed")
	require.NoError(t, os.WriteFile(stranger, seed, 0o600))
	_, err = identityClient(t, info.URL, s.data, stranger)
	require.ErrorContains(t, err, "Authorization Violation", "an unlisted key")
	r = s.run(t, 60*time.Second, "worker", "--data-dir", s.data, "--provider", "grok")
	require.Equal(t, exitGeneric, r.code, r.stderr)
	require.Contains(t, r.stderr, "refused this worker: it admits only the worker identities listed in "+grok.WorkerIdentities+"; pass this worker's seed with --identity-seed FILE")
	r = s.run(t, 60*time.Second, "worker", "--data-dir", s.data, "--provider", "grok", "--identity-seed", stranger)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "is not listed in "+grok.WorkerIdentities)
	r = s.run(t, 60*time.Second, "status", "--data-dir", s.data, "--run", "idb")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 0, gw.stop(t))
	require.Equal(t, 0, cw.stop(t))
}

// engineJSConn is a raw engine-role connection to the serve at url, for
// consumer info straight from the server (no JetStream of ours, which
// would serve the API proxy too).
func engineJSConn(t *testing.T, url, dataDir string) *nats.Conn {
	t.Helper()
	nc, err := events.Connect([]string{url}, append(events.FileClientOptions(filepath.Join(dataDir, authFileName), events.RoleEngine), nats.MaxReconnects(0))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// TestWorkerWithoutIdentitySaysSo: without --identity-seed (and no worker
// identities file) the worker starts as before and says it connects with
// the role's secret alone; serve says it has no worker identities.
func TestWorkerWithoutIdentitySaysSo(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	waitOutput(t, serve, "switchyard serve: no worker identities ("+filepath.Join(s.data, "workers.json")+"): every worker with the role's secret serves every provider")
	wk := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	waitOutput(t, wk, "switchyard worker: no worker identity (--identity-seed): connected with the worker role's secret alone")
	r := s.run(t, 120*time.Second, s.runArgs("hillclimb", "--run-id", "plain")...)
	require.Equal(t, 0, r.code, "%s\n%s", r.stdout, r.stderr)
}

// TestServeRefusesBadWorkerIdentities (issue 25): a worker identities
// file serve cannot trust or parse stops serve before it starts (exit 64,
// no serve.json), with an error naming the file and the fix; so does a
// --worker-identities file that does not exist. `worker identity` refuses
// to add to such a file.
func TestServeRefusesBadWorkerIdentities(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	valid := s.provisionWorker(t, "grok")
	good, err := os.ReadFile(valid.WorkerIdentities)
	require.NoError(t, err)
	path := valid.WorkerIdentities
	fix := "fix or re-create the file (`switchyard worker identity --help` shows its format and how to provision workers), or move it away"
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T)
		want  []string
	}{
		{"unknown-key", func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"workers":[],"admins":["me"]}`), 0o600))
		}, []string{path, `unknown field "admins"`, fix}},
		{"malformed", func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, good[:len(good)/2], 0o600))
		}, []string{path, "not a Switchyard worker identities file", fix}},
		{"bad-key", func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"workers":[{"key":"UNOTAKEY","providers":["grok"]}]}`), 0o600))
		}, []string{path, `"UNOTAKEY": not a user nkey's public key`, fix}},
		{"unknown-provider", func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(good), `"grok"`, `"gpt"`, 1)), 0o600))
		}, []string{path, `provider "gpt" is not a known provider`, fix}},
		{"writable-by-others", func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chmod(path, 0o666))
		}, []string{path, "is writable by other users", "chmod go-w"}},
		{"symlink", func(t *testing.T) {
			other := filepath.Join(s.dir, "elsewhere.json")
			require.NoError(t, os.WriteFile(other, good, 0o600))
			require.NoError(t, os.Symlink(other, path))
		}, []string{path, "is a symbolic link"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			tc.setup(t)
			r := s.run(t, 60*time.Second, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
			require.Equal(t, exitUsage, r.code, "serve with a bad worker identities file: %s", r.stderr)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
			require.NotContains(t, r.stdout, "switchyard serve: data directory", "serve did not start")
			_, err := os.Stat(filepath.Join(s.data, serveInfoName))
			require.ErrorIs(t, err, os.ErrNotExist, "no serve.json")
			r = s.run(t, 30*time.Second, "worker", "identity", "--data-dir", s.data, "--provider", "grok", "--seed-file", filepath.Join(s.dir, tc.name+".seed"))
			require.Equal(t, exitUsage, r.code, "worker identity on a bad file: %s", r.stderr)
			require.Contains(t, r.stderr, path)
			_, err = os.Stat(filepath.Join(s.dir, tc.name+".seed"))
			require.ErrorIs(t, err, os.ErrNotExist, "no seed written for a bad file")
		})
	}
	missing := filepath.Join(s.dir, "nowhere.json")
	r := s.run(t, 60*time.Second, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--worker-identities", missing)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "worker identities file "+missing+" does not exist; provision a worker with `switchyard worker identity --provider P --worker-identities "+missing+"`")
}

// TestWorkerIdentityOverNATS: with --nats (here a server that admits the
// role users, as a deployment's does), `serve --worker-identities FILE`
// gives the engine's proxy the list: `worker --identity-seed` (beside the
// worker role's login) runs its provider's lane to completion, while a
// worker connection whose key the file does not list gets nothing but
// reads (no capacity report, no claim).
func TestWorkerIdentityOverNATS(t *testing.T) {
	t.Parallel()
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	path := filepath.Join(dir, "auth.json")
	require.NoError(t, events.WriteCredentials(path, creds))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var file struct{ Secrets map[string]string }
	require.NoError(t, json.Unmarshal(raw, &file))
	e := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	url := e.ClientURL()

	s := newEngineSandbox(t, nil, singleLaneSheet)
	registry := filepath.Join(s.dir, "deploy", "workers.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(registry), 0o700))
	grok := s.provisionWorker(t, "grok", "--worker-identities", registry, "--seed-file", filepath.Join(s.dir, "grok.seed"))
	require.Equal(t, registry, grok.WorkerIdentities)
	as := func(r events.Role) *engineSandbox {
		c := *s
		c.env = append(append([]string(nil), s.env...), "NATS_URL="+url, "NATS_USER=switchyard-"+string(r), "NATS_PASSWORD="+file.Secrets[string(r)])
		return &c
	}
	serve := as(events.RoleEngine).start(t, "serve", "--data-dir", s.data, "--worker-identities", registry)
	waitOutput(t, serve, "switchyard serve: 1 worker identity from "+registry+": each worker serves only its listed providers; other worker connections get nothing but reads\n")
	worker := as(events.RoleWorker).start(t, "worker", "--data-dir", s.data, "--provider", "grok", "--identity-seed", grok.SeedFile)
	waitOutput(t, worker, "switchyard worker: worker identity "+grok.Key)
	r := as(events.RoleParent).run(t, 3*time.Minute, append(s.runArgs("hillclimb", "--json"), "--run-id", "natsid")...)
	require.Equal(t, 0, r.code, "run:\n%s\n%s\nserve:\n%s\nworker:\n%s", r.stdout, r.stderr, procOut(serve), procOut(worker))
	require.Contains(t, r.stdout, `"success": "grok:grok-4.7@xhigh"`)

	// A worker connection of the role's user whose key is not listed.
	nc, err := events.Connect([]string{url}, append(creds.ClientOptions(events.RoleWorker), nats.MaxReconnects(0))...)
	require.NoError(t, err, "the server admits the role's user")
	t.Cleanup(nc.Close)
	ctx := context.Background()
	stranger, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err)
	err = stranger.Capacity().Put(ctx, eventstest.SampleCapacityReport(policy.Grok, time.Now().UTC()))
	require.True(t, events.IsPermissionDenied(err), "an unlisted worker putting a capacity report: %v", err)
	require.ErrorContains(t, err, "no provisioned worker identity")
	_, err = stranger.Claims().Claim(ctx, eventstest.NewExecutionID(), "w-stranger", time.Minute)
	require.True(t, events.IsPermissionDenied(err), "an unlisted worker claiming: %v", err)
	runs, err := stranger.Store().Runs(ctx)
	require.NoError(t, err, "it still reads")
	require.Contains(t, runs, "natsid")

	// --creds or --nkey beside the seed is refused before connecting.
	r = as(events.RoleWorker).run(t, 30*time.Second, "worker", "--data-dir", s.data, "--provider", "grok", "--identity-seed", grok.SeedFile, "--nkey", grok.SeedFile)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--identity-seed carries this worker's nkey, and so does the nkey login")
}
