package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
)

// testServe is a `switchyard serve` in this process: the data directory's
// embedded server listening on loopback (serve.json, serve.auth), its
// engine driving runs and accepting parents' submissions, exactly as
// cmd/switchyard's runServe does it, but without a worker.
type testServe struct {
	dir  string
	conn *engineconn.Conn
	stop func()
}

// startServe serves a fresh data directory until the test ends.
func startServe(t testing.TB) *testServe {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	return startServeIn(t, dir)
}

func startServeIn(t testing.TB, dir string) *testServe {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := engineconn.Open(ctx, engineconn.Options{
		DataDir: dir, Role: events.RoleEngine, ServeKind: "serve", Listen: "127.0.0.1:0", Exclusive: true,
	})
	require.NoError(t, err)
	eng, err := conn.NewEngine(slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	stop, err := conn.JetStream().ServeSubmissions(ctx, eng.AcceptSubmission)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	var once sync.Once
	s := &testServe{dir: dir, conn: conn}
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("engine: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("engine did not stop")
			}
			stop()
			conn.Close()
		})
	}
	t.Cleanup(s.stop)
	return s
}

// panelSheet is a sheet with a two-seat codex panel and a one-seat role.
const panelSheet = `# client tests
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
interrogate reviewers: codex:gpt-5.6-sol@high, codex:gpt-5.6-sol@medium
arena runners: codex:gpt-5.6-sol@high
`
