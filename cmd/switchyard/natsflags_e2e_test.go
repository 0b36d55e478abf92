package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// tlsAuthServer starts a three-node cluster that requires TLS on clients
// and routes (a CA generated here) and admits only the role users, stores
// one run as the engine (three replicas), and returns its tls:// URLs, the
// CA file, the role secrets (read from the credentials file as a
// deployment's operator would hand them out) and the run's ID.
func tlsAuthServer(t *testing.T) (url, caFile string, secrets map[string]string, run string) {
	t.Helper()
	pki := eventstest.NewPKI(t)
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
	require.Len(t, file.Secrets, len(events.Roles))

	nodes := eventstest.StartClusterWith(t, 3, eventstest.WithTLS(pki.ServerTLS(false)),
		eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	var urls []string
	for _, u := range eventstest.ClientURLs(nodes) {
		_, hostPort, _ := strings.Cut(u, "://")
		urls = append(urls, "tls://"+hostPort)
	}
	tlsOpts, err := events.ClientAuth{TLSCA: pki.CAFile}.Options()
	require.NoError(t, err)
	nc, err := events.Connect(urls, append(tlsOpts, creds.ClientOptions(events.RoleEngine)...)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 3})
	require.NoError(t, err, "the engine opens the streams over TLS")
	run = eventstest.NewRunID()
	_, err = j.Store().Append(ctx, eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, time.Now().UTC()), 0)
	require.NoError(t, err)
	return strings.Join(urls, ","), pki.CAFile, file.Secrets, run
}

// TestNATSFlagsTLSCluster: `switchyard status` reaches a three-node
// cluster that requires TLS and a login, as the reader role's user: with --nats and
// --tls-ca and the password from NATS_PASSWORD, with NATS_URL instead of
// --nats, and through a nats CLI context. A wrong password, a missing CA
// or no login fail (exit 1) with the server's reason, and no output ever
// holds a password: only variable names and file paths.
func TestNATSFlagsTLSCluster(t *testing.T) {
	t.Parallel()
	url, ca, secrets, run := tlsAuthServer(t)
	s := newEngineSandbox(t, nil, "")
	const wrong = "SENTINEL-wrong-password-3c1e"
	with := func(extra ...string) *engineSandbox {
		c := *s
		c.env = append(append([]string(nil), s.env...), extra...)
		return &c
	}
	noSecret := func(r result) {
		t.Helper()
		for _, v := range secrets {
			require.NotContains(t, r.stdout+r.stderr, v, "a secret leaked")
		}
		require.NotContains(t, r.stdout+r.stderr, wrong, "a secret leaked")
	}
	reader := []string{"NATS_USER=switchyard-reader", "NATS_PASSWORD=" + secrets["reader"]}

	r := with(reader...).run(t, time.Minute, "status", "--nats", url, "--tls-ca", ca, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, run, "the run stored on the TLS server is listed")
	noSecret(r)

	r = with(append(reader, "NATS_URL="+url)...).run(t, time.Minute, "status", "--tls-ca", ca, "--json")
	require.Equal(t, 0, r.code, "NATS_URL is --nats's default: %s", r.stderr)
	require.Contains(t, r.stdout, run)
	noSecret(r)

	// A nats CLI context: servers, login and CA in one name.
	xdg := filepath.Join(s.dir, "xdg")
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "nats", "context"), 0o700))
	ctxJSON, err := json.Marshal(map[string]any{"description": "test cluster", "url": url, "user": "switchyard-reader",
		"password": secrets["reader"], "ca": ca, "token": "", "creds": "", "nkey": "", "nsc": "", "tls_first": false})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "nats", "context", "prod.json"), ctxJSON, 0o600))
	r = with("XDG_CONFIG_HOME="+xdg).run(t, time.Minute, "status", "--context", "prod", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, run, "the context's server, login and CA are used")
	noSecret(r)

	r = with("NATS_USER=switchyard-reader", "NATS_PASSWORD="+wrong).run(t, time.Minute, "status", "--nats", url, "--tls-ca", ca)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "Authorization Violation")
	require.Contains(t, r.stderr, "refused this connection's credentials (user and password")
	noSecret(r)

	r = with(reader...).run(t, time.Minute, "status", "--nats", url)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "certificate", "without --tls-ca the test CA is unknown")
	noSecret(r)

	r = s.run(t, time.Minute, "status", "--nats", url, "--tls-ca", ca)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "Authorization Violation", "TLS alone does not let a client in")

	// A worker's login cannot act as a parent: the server refuses its
	// cancel; the parent's is accepted.
	worker := []string{"NATS_USER=switchyard-worker", "NATS_PASSWORD=" + secrets["worker"]}
	r = with(worker...).run(t, time.Minute, "cancel", "--run", run, "--nats", url, "--tls-ca", ca)
	require.NotEqual(t, 0, r.code, "a worker cancelled a run: %s", r.stdout)
	require.Contains(t, r.stderr, "permission denied", "the server's refusal is named")
	require.Contains(t, r.stderr, "this command needs the parent role's user")
	noSecret(r)
	// Even with the worker's own reply subjects (a context's
	// inbox_prefix), the control itself is refused by the server.
	wctx, err := json.Marshal(map[string]any{"url": url, "user": "switchyard-worker", "password": secrets["worker"], "ca": ca,
		"inbox_prefix": events.InboxPrefix(events.RoleWorker)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "nats", "context", "w.json"), wctx, 0o600))
	r = with("XDG_CONFIG_HOME="+xdg).run(t, time.Minute, "cancel", "--run", run, "--context", "w")
	require.NotEqual(t, 0, r.code, "a worker cancelled a run: %s", r.stdout)
	require.Contains(t, r.stderr, "publish to "+events.ControlSubject(run)+": events: permission denied", "the control's publish is refused")
	noSecret(r)
	parent := []string{"NATS_USER=switchyard-parent", "NATS_PASSWORD=" + secrets["parent"]}
	r = with(parent...).run(t, time.Minute, "cancel", "--run", run, "--nats", url, "--tls-ca", ca)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "cancel requested for run "+run)
	noSecret(r)

	// A user URL's password is never echoed either.
	r = s.run(t, time.Minute, "status", "--nats", strings.Replace(url, "tls://", "tls://switchyard-reader:"+wrong+"@", 1))
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "REDACTED@127.0.0.1")
	noSecret(r)
}

// TestNATSFlagsUsage: credential and TLS options without a server to use
// them on, contradictory logins, and bad files are usage errors (exit 64)
// naming the option or variable and the fix, never a secret.
func TestNATSFlagsUsage(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, "")
	const secret = "SENTINEL-token-9b7d"
	garbage := filepath.Join(s.dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("no pem "+secret), 0o600))
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"status", "--tls-ca", garbage}, "--tls-ca applies only to a NATS server given by --nats, NATS_URL or --context"},
		{nil, []string{"worker", "--provider", "codex", "--creds", garbage}, "--creds applies only to a NATS server"},
		{nil, []string{"serve", "--nkey", garbage}, "--nkey applies only"},
		{nil, []string{"status", "--nats", "tls://127.0.0.1:1", "--tls-ca", garbage}, "--tls-ca " + garbage + " holds no PEM certificate"},
		{nil, []string{"status", "--nats", "tls://127.0.0.1:1", "--tls-cert", garbage}, "--tls-cert and --tls-key go together"},
		{nil, []string{"status", "--nats", "tls://127.0.0.1:1", "--creds", garbage}, "--creds " + garbage + " holds no user JWT"},
		{[]string{"NATS_USER=u", "NATS_PASSWORD=" + secret, "NATS_TOKEN=" + secret}, []string{"status", "--nats", "nats://127.0.0.1:1"}, "NATS_USER/NATS_PASSWORD and NATS_TOKEN are given together"},
		{[]string{"NATS_PASSWORD=" + secret}, []string{"history", "--run", "r1", "--nats", "nats://127.0.0.1:1"}, "NATS_PASSWORD is set but NATS_USER is empty"},
		{[]string{"NATS_URL=,"}, []string{"status"}, `NATS_URL "," lists no URL`},
		{[]string{"XDG_CONFIG_HOME=" + s.dir}, []string{"status", "--context", "nope"}, "no context file " + filepath.Join(s.dir, "nats", "context", "nope.json")},
		{nil, []string{"status", "--context", "../x"}, "is not a context name"},
	} {
		c := *s
		c.env = append(append([]string(nil), s.env...), tc.env...)
		r := c.run(t, time.Minute, tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.NotContains(t, r.stderr, secret, tc.args)
	}
}

// TestNATSFlagsServeWorkerRunOverTLS: the whole cluster path over TLS
// with role logins: `serve --nats` as the engine's user, `worker --nats`
// as the worker's (its jobs, claims, reports and presence within the
// worker's permissions) and `run --nats` as the parent's, whose run the
// engine drives to the end.
func TestNATSFlagsServeWorkerRunOverTLS(t *testing.T) {
	t.Parallel()
	pki := eventstest.NewPKI(t)
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
	e := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithTLS(pki.ServerTLS(false)),
		eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = creds }))
	_, hostPort, _ := strings.Cut(e.ClientURL(), "://")
	url := "tls://" + hostPort

	s := newEngineSandbox(t, nil, singleLaneSheet)
	as := func(r events.Role) *engineSandbox {
		c := *s
		c.env = append(append([]string(nil), s.env...), "NATS_URL="+url, "NATS_USER=switchyard-"+string(r), "NATS_PASSWORD="+file.Secrets[string(r)])
		return &c
	}
	serve := as(events.RoleEngine).start(t, "serve", "--tls-ca", pki.CAFile, "--data-dir", s.data)
	waitOutput(t, serve, "switchyard serve: engine on NATS "+url)
	worker := as(events.RoleWorker).start(t, "worker", "--tls-ca", pki.CAFile, "--data-dir", s.data, "--provider", "grok")
	waitOutput(t, worker, "switchyard worker: grok")

	// The parent submits; the engine alone writes the run's events.
	r := as(events.RoleParent).run(t, 3*time.Minute, append(s.runArgs("hillclimb", "--json"), "--tls-ca", pki.CAFile)...)
	require.Equal(t, 0, r.code, "run:\n%s\n%s\nserve:\n%s\nworker:\n%s", r.stdout, r.stderr, procOut(serve), procOut(worker))
	var rep struct {
		Final bool
		Lanes []struct{ State, Success string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.True(t, rep.Final)
	require.Len(t, rep.Lanes, 1)
	require.Equal(t, "complete", rep.Lanes[0].State, "the worker ran the lane's grok attempt")
	require.Equal(t, "grok:grok-4.7@xhigh", rep.Lanes[0].Success)
	_, errOut := worker.output()
	require.NotContains(t, errOut, "ermission", "the worker needed nothing its role may not do")
	// The provider CLI the worker started never saw the NATS password.
	var launched int
	for _, inv := range simenv.Invocations(t, s.bin) {
		if inv.Kind != simlog.KindWorkload {
			continue
		}
		launched++
		require.Contains(t, inv.Env, "PATH", "the simulator records the environment's names")
		require.NotContains(t, inv.Env, "NATS_PASSWORD", "a provider CLI inherited the NATS password")
	}
	require.Equal(t, 1, launched)
	for _, v := range file.Secrets {
		require.NotContains(t, r.stdout+r.stderr+procOut(serve)+procOut(worker), v, "a secret leaked")
	}
}

func procOut(p *bgProcess) string { o, e := p.output(); return o + e }
