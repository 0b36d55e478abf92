package events_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// authServer starts a listening embedded server that authenticates with
// fresh credentials, opens the streams as the engine, and returns the
// credentials file other processes would read and the refused peers seen.
func authServer(t *testing.T) (*events.Embedded, string, func() []string) {
	t.Helper()
	creds, path := credentialsFile(t)
	var mu sync.Mutex
	var refused []string
	e := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) {
		c.Auth = creds
		c.OnRefused = func(peer string) { mu.Lock(); refused = append(refused, peer); mu.Unlock() }
	}))
	eventstest.Open(t, e, events.JetStreamConfig{})
	return e, path, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), refused...) }
}

// credentialsFile draws fresh credentials and writes them where a serve
// would, in a 0700 directory of their own.
func credentialsFile(t *testing.T) (*events.Credentials, string) {
	t.Helper()
	creds, err := events.NewCredentials()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	path := filepath.Join(dir, "serve.auth")
	require.NoError(t, events.WriteCredentials(path, creds))
	return creds, path
}

// connectAs connects over TCP as role r with the secret in path.
func connectAs(t *testing.T, e *events.Embedded, path string, r events.Role) *events.JetStream {
	t.Helper()
	nc, err := events.Connect([]string{e.ClientURL()}, append(events.FileClientOptions(path, r), nats.MaxReconnects(0))...)
	require.NoError(t, err, "connect as %s", r)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{})
	require.NoError(t, err, "open the streams as %s", r)
	return js
}

// TestEmbeddedAuthRefusesStrangers: a connection without the secret, or
// with another role's, is refused, and the refusal is reported once per
// peer host with its address.
func TestEmbeddedAuthRefusesStrangers(t *testing.T) {
	t.Parallel()
	e, path, refused := authServer(t)
	_, err := nats.Connect(e.ClientURL(), nats.MaxReconnects(0))
	require.Error(t, err, "no credential")
	require.ErrorContains(t, err, "Authorization Violation")
	creds, err := events.NewCredentials() // another start's secrets
	require.NoError(t, err)
	_, err = nats.Connect(e.ClientURL(), append(creds.ClientOptions(events.RoleEngine), nats.MaxReconnects(0))...)
	require.Error(t, err, "a stale secret")
	got := refused()
	require.Len(t, got, 1, "refusals from one host are reported once: %v", got)
	require.True(t, strings.HasPrefix(got[0], "127.0.0.1:"), "the peer address is reported: %q", got[0])

	// The file's secrets work, and a reader cannot pass as the engine with
	// its own secret.
	connectAs(t, e, path, events.RoleReader)
	real, err := events.ReadCredentials(path)
	require.NoError(t, err)
	opts := real.ClientOptions(events.RoleReader)
	_, err = nats.Connect(e.ClientURL(), append(opts, nats.UserInfo("switchyard-engine", "x"), nats.MaxReconnects(0))...)
	require.ErrorContains(t, err, "Authorization Violation")
}

// TestEmbeddedAuthRoles: each role can do what its commands do, and a
// worker cannot act as a parent or as the engine.
func TestEmbeddedAuthRoles(t *testing.T) {
	t.Parallel()
	e, path, _ := authServer(t)
	run := eventstest.NewRunID()
	at := time.Now().UTC()
	engine := eventstest.Open(t, e, events.JetStreamConfig{})
	_, err := engine.Store().Append(context.Background(), eventstest.SampleEnvelope(events.TypeRunCreated, run, events.RunLane, at), 0)
	require.NoError(t, err)

	// A refused publish is reported when its attempt ends (the server
	// answers the connection, not the request), so it is given a short
	// one; allowed work gets a generous one.
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	long := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	denied := func(err error, what string) {
		t.Helper()
		require.Error(t, err, what)
		require.True(t, events.IsPermissionDenied(err), "%s: want a permission refusal, got %v", what, err)
	}
	cancel := events.Control{ID: "c1", Kind: events.ControlCancel, Run: run, Lane: events.RunLane, Cancel: &events.Cancel{Reason: "intruder", By: "test"}, Time: at}

	worker := connectAs(t, e, path, events.RoleWorker)
	_, err = worker.Queue().PublishControl(short(), cancel)
	denied(err, "a worker publishing a control")
	_, err = worker.Store().Append(short(), eventstest.SampleEnvelope(events.TypeCancel, run, events.RunLane, at), 1)
	denied(err, "a worker appending an event")
	denied(worker.Queue().PublishJob(short(), events.JobSubject("codex"), eventstest.SampleJob(run, 0, eventstest.NewExecutionID())), "a worker publishing a job")
	_, err = worker.Queue().PublishReport(long(), eventstest.SampleReport(events.ReportClaimed, run, 0, eventstest.NewExecutionID(), "w1"))
	require.NoError(t, err, "a worker reports on lanes")
	envs, err := worker.Store().Load(long(), run, events.RunLane)
	require.NoError(t, err, "a worker reads events (cancels)")
	require.Len(t, envs, 1)

	parent := connectAs(t, e, path, events.RoleParent)
	_, err = parent.Queue().PublishControl(long(), cancel)
	require.NoError(t, err, "a parent publishes controls")
	_, err = parent.Store().Append(short(), eventstest.SampleEnvelope(events.TypeCancel, run, events.RunLane, at), 1)
	denied(err, "a parent appending an event")
	denied(parent.Queue().PublishJob(short(), events.JobSubject("codex"), eventstest.SampleJob(run, 0, eventstest.NewExecutionID())), "a parent publishing a job")

	reader := connectAs(t, e, path, events.RoleReader)
	_, err = reader.Queue().PublishControl(short(), cancel)
	denied(err, "a reader publishing a control")
	_, err = reader.Queue().PublishReport(short(), eventstest.SampleReport(events.ReportClaimed, run, 0, eventstest.NewExecutionID(), "w1"))
	denied(err, "a reader publishing a report")
	envs, err = reader.Store().Load(long(), run, events.RunLane)
	require.NoError(t, err, "a reader reads events")
	require.Len(t, envs, 1)
	require.False(t, errors.Is(err, context.DeadlineExceeded))
}

// TestFileCredentialsOutlastARefusedReconnect: a client reading its secret
// from the credentials file keeps reconnecting while a server restarted on
// the same port with fresh secrets refuses the old ones (nats.go would
// close the connection for good at the second identical refusal), and is
// back as soon as the file holds the new start's secrets.
func TestFileCredentialsOutlastARefusedReconnect(t *testing.T) {
	t.Parallel()
	first, path := credentialsFile(t)
	e1 := eventstest.StartServer(t, eventstest.WithListen(), eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = first }))
	addr := strings.TrimPrefix(e1.ClientURL(), "nats://")

	var mu sync.Mutex
	refusals := 0
	reconnected := make(chan struct{}, 1)
	opts := append(events.FileClientOptions(path, events.RoleReader),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrAuthorization) {
				mu.Lock()
				refusals++
				mu.Unlock()
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	nc, err := events.Connect([]string{e1.ClientURL()}, opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)

	e1.Shutdown()
	second, err := events.NewCredentials()
	require.NoError(t, err)
	eventstest.StartServer(t, eventstest.WithConfig(func(c *events.EmbeddedConfig) { c.Auth = second; c.Listen = addr }))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return refusals >= 3 },
		time.Minute, 10*time.Millisecond, "the old secret is refused again and again")
	require.False(t, nc.IsClosed(), "repeated refusals do not close the connection")

	require.NoError(t, events.WriteCredentials(path, second))
	select {
	case <-reconnected:
	case <-time.After(time.Minute):
		t.Fatalf("not reconnected with the new secrets (status %v)", nc.Status())
	}
	require.True(t, nc.IsConnected())
}
